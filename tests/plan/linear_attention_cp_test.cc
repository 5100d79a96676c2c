// Context parallelism and Gated DeltaNet layers: CP splits every sequence over the CP ranks, and a
// linear-attention layer must then pass its recurrent state from rank to rank. megatron-core's
// GatedDeltaNet refuses it before 0.18 (TransformerConfig.__post_init__: `assert
// self.context_parallel_size == 1, "Gated delta net does not support context parallel for now"`,
// quoted in NVIDIA/Megatron-LM#3883; NVIDIA-NeMo/Megatron-Bridge#4327 reproduces it for
// Qwen3.6-35B-A3B at CP 4; ms-swift#9535 answers the same failure with "use megatron-core>=0.18"),
// and transformers' module (what ms-swift up to 4.0 builds) has no CP at all. Before, a job with
// CP > 1 was accepted and `plan` ranked CP 8 layouts first on the reference job (26.84 s against
// 51.85 s).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/plan_test_support.h"
#include "strata/job/job_spec.h"
#include "strata/job/resolved_job.h"

namespace strata {
namespace {

// The reference job at CP 2 (max_tokens 49,152 is divisible by 2 x CP = 4).
Result<ResolvedJob> ReferenceAt(const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec("qwen3.6-35b-a3b-sft-h20x40", sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  return ResolveJob(*spec);
}

TEST(LinearAttentionCp, RefusedWhereTheModuleHasNoContextParallelism) {
  // The reference job's framework, ms-swift 3.8: transformers' module.
  auto swift = ReferenceAt({"parallel.cp=2", "parallel.dp=20"});
  ASSERT_FALSE(swift.ok());
  const std::string m = swift.error().Format();
  EXPECT_NE(m.find("parallel.cp"), std::string::npos) << m;
  EXPECT_NE(m.find("30 Gated DeltaNet layers"), std::string::npos) << m;
  EXPECT_NE(m.find("transformers' module"), std::string::npos) << m;
  // megatron-core 0.16, the latest the data file knows: its own module, before CP support.
  auto mcore016 = ReferenceAt({"parallel.cp=2", "parallel.dp=20", "framework.name=megatron-core",
                               "framework.version=0.16"});
  ASSERT_FALSE(mcore016.ok());
  EXPECT_NE(mcore016.error().Format().find("megatron-core 0.16's GatedDeltaNet"), std::string::npos)
      << mcore016.error().Format();
  // From 0.18 on it runs.
  auto mcore018 = ReferenceAt({"parallel.cp=2", "parallel.dp=20", "framework.name=megatron-core",
                               "framework.version=0.18"});
  EXPECT_TRUE(mcore018.ok()) << mcore018.error().Format();
  // CP 1 is untouched.
  EXPECT_TRUE(ReferenceAt({}).ok());
}

TEST(LinearAttentionCp, PlanDoesNotRankCpLayoutsItCannotRun) {
  const testing::Planned p = testing::PlanJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(p.ok);
  EXPECT_GT(p.result.rules.by_rule[static_cast<size_t>(plan::Rule::kCpNeedsLinearCp)], 0);
  ASSERT_FALSE(p.result.top.empty());
  for (const plan::RankedLayout& r : p.result.top) EXPECT_EQ(r.candidate.layout.cp, 1);
}

}  // namespace
}  // namespace strata

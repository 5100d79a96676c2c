// What megatron-core launches with its EP all-to-all overlap (overlap.moe_a2a,
// --overlap-moe-expert-parallel-comm; data/frameworks.yaml `moe_a2a_overlap:`,
// job/overlap_rules.h). megatron/core/transformer/transformer_config.py,
// TransformerConfig.__post_init__ (NVIDIA/Megatron-LM core_v0.16.0, 3bec9aa97; the same block
// from core_v0.14.0, where the flag first appears, to core_v0.19.0):
//
//     if self.overlap_moe_expert_parallel_comm:
//         ...
//         if self.pipeline_model_parallel_size > 1:
//             assert self.virtual_pipeline_model_parallel_size is not None, (
//                 "If enabling EP A2A overlap, virtual_pipeline_model_parallel_size "
//                 "must be specified when pipeline_model_parallel_size > 1"
//             )
//         ...
//         assert (
//             self.recompute_granularity != 'full'
//         ), 'disable full recomputation when enabling overlap_moe_expert_parallel_comm'
//
// and megatron/training/arguments.py turns a VPP of 1 into None at every one of those tags, so
// PP > 1 at VPP 1 is refused. From core_v0.17.0 (9539a12e1) on, also
//
//     assert (
//         "moe" not in self.recompute_modules
//     ), 'disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm'
//
// (absent at core_v0.16.0 and core_v0.16.1). Before, strata priced all of these: the shipped
// DeepSeek-V3 job (full recompute) read 25.03 s with the overlap against 31.45 s without, and
// Qwen3-30B-A3B at PP2 VPP1 hid its whole 0.70 s of EP all-to-all.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/job/overlap_rules.h"
#include "strata/job/resolved_job.h"
#include "support/golden.h"

namespace strata::moe_a2a_overlap_test {
namespace {

Result<ResolvedJob> Resolve(const std::string& job, const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec(job, sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  if (!spec.ok()) return spec.error();
  return ResolveJob(*spec);
}

std::string Data(const std::string& file) { return testing::TestPath("job/data/" + file); }

TEST(MoeA2aOverlap, RefusedWithFullRecompute) {
  // The shipped DeepSeek-V3 job recomputes in full (PP16 VPP2 through its layout).
  auto job = Resolve("deepseek-v3-pp16-vpp2-layout-h800x1024", {"overlap.moe_a2a=true"});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().field, "recompute.granularity");
  EXPECT_NE(job.error().message.find("megatron-core 0.16 asserts \"disable full recomputation "
                                     "when enabling overlap_moe_expert_parallel_comm\""),
            std::string::npos)
      << job.error().Format();
  // Without the overlap it runs, as before.
  EXPECT_TRUE(Resolve("deepseek-v3-pp16-vpp2-layout-h800x1024", {}).ok());
  // Qwen3-30B-A3B at PP 1: full recompute refused, selective and none run.
  auto full = Resolve(Data("q30-moe.yaml"), {"overlap.moe_a2a=true", "recompute.granularity=full"});
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().field, "recompute.granularity");
  EXPECT_TRUE(Resolve(Data("q30-moe.yaml"), {"overlap.moe_a2a=true"}).ok());
  EXPECT_TRUE(
      Resolve(Data("q30-moe.yaml"), {"overlap.moe_a2a=true", "recompute.granularity=selective"})
          .ok());
}

TEST(MoeA2aOverlap, PipelineNeedsVirtualStages) {
  // PP 2 at VPP 1: refused; 48 layers / 2 stages = 24 a stage, so VPP 2 (12 a virtual stage)
  // runs.
  auto pp = Resolve(Data("q30-pp.yaml"), {"overlap.moe_a2a=true"});
  ASSERT_FALSE(pp.ok());
  EXPECT_EQ(pp.error().field, "parallel.vpp");
  EXPECT_NE(pp.error().message.find("virtual_pipeline_model_parallel_size must be specified"),
            std::string::npos)
      << pp.error().Format();
  EXPECT_TRUE(Resolve(Data("q30-pp.yaml"), {"overlap.moe_a2a=true", "parallel.vpp=2"}).ok());
  // The rule belongs to the overlap: the same layout without it runs.
  EXPECT_TRUE(Resolve(Data("q30-pp.yaml"), {}).ok());
}

TEST(MoeA2aOverlap, MoeModuleRecomputeRefusedFromRelease017) {
  const std::vector<std::string> sets = {"overlap.moe_a2a=true", "parallel.vpp=2",
                                         "recompute.modules=[moe]"};
  // 0.16 (the latest data/frameworks.yaml knows) has no such assertion.
  EXPECT_TRUE(Resolve(Data("q30-pp.yaml"), sets).ok());
  std::vector<std::string> at17 = sets;
  at17.emplace_back("framework.version=0.17");
  auto job = Resolve(Data("q30-pp.yaml"), at17);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().field, "recompute.modules");
  EXPECT_NE(job.error().message.find("megatron-core 0.17 asserts \"disable moe in "
                                     "recompute_modules"),
            std::string::npos)
      << job.error().Format();
  // And 0.13, which has no overlap flag at all, has none of the rules (nothing to refuse by).
  MoeA2aRefusals none;
  EXPECT_EQ(MoeA2aRefusalsAt({"megatron-core", "0.14", "0.14", "0.17", ""}, "0.13"), none);
}

}  // namespace
}  // namespace strata::moe_a2a_overlap_test

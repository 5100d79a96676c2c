// The planner against what the job's framework would launch (job/pipeline_rules.h).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "plan/plan_test_support.h"
#include "strata/report/plan_report.h"
#include "support/golden.h"

namespace strata {
namespace {

// Llama-3.1-70B on 64 H100 under megatron-core 0.16, global batch 4, micro batch 1 (the audit's
// l70-gb4.yaml). megatron-core's interleaved schedule needs M = global batch / (micro batch x
// DP) to be a multiple of PP (schedules.py, forward_backward_pipelining_with_interleaving:
// ValueError "... should range in [PP=8 , M=4]" below PP, RuntimeError on a remainder; the
// derivation is in tests/job/pipeline_rules_test.cc). Before, the plan's winner was TP2 PP8
// VPP5 CP4 DP1 (M = 4 < PP 8, 0.68 s) and 16 of the top 24 rows had M < PP.
TEST(PipelineEnginePlan, NeverRanksInterleavedLayoutsMegatronCoreRefuses) {
  plan::PlanOptions options;
  options.top_k = 24;
  const testing::Planned p =
      testing::PlanJob(testing::TestPath("job/data/l70-gb4.yaml"), {}, options);
  ASSERT_TRUE(p.ok);
  ASSERT_FALSE(p.result.top.empty());
  for (const plan::RankedLayout& r : p.result.top) {
    const ParallelLayout& l = r.candidate.layout;
    if (l.vpp == 1) continue;
    const int64_t m = 4 / (r.candidate.micro_batch * l.dp);
    EXPECT_EQ(m % l.pp, 0) << plan::LayoutName(r.candidate);
  }
  const int64_t skipped = p.result.rules[plan::Rule::kLoopedMicroBatches];
  EXPECT_GT(skipped, 0);
  // The plan says how many it skipped and why.
  const std::string text = PlanToText(p.setup, p.result, false);
  EXPECT_NE(text.find(fmt::format("skipped {} interleaved layouts the framework would refuse at "
                                  "launch: VPP > 1 needs the micro batches per step",
                                  skipped)),
            std::string::npos)
      << text;
}

// megatron-core refuses overlap.moe_a2a with full recompute and with PP > 1 at VPP 1 (the
// assertions are quoted in tests/job/moe_a2a_overlap_test.cc): with the overlap on, the plan of
// Qwen3-30B-A3B on 64 H100 ranks neither.
TEST(MoeA2aOverlap, PlanSkipsLayoutsTheFrameworkRefuses) {
  plan::PlanOptions options;
  options.top_k = 40;
  const testing::Planned p = testing::PlanJob(testing::TestPath("job/data/q30-moe.yaml"),
                                              {"overlap.moe_a2a=true"}, options);
  ASSERT_TRUE(p.ok);
  ASSERT_FALSE(p.result.top.empty());
  for (const plan::RankedLayout& r : p.result.top) {
    const ParallelLayout& l = r.candidate.layout;
    EXPECT_NE(r.candidate.recompute, RecomputeGranularity::kFull) << plan::LayoutName(r.candidate);
    EXPECT_FALSE(l.pp > 1 && l.vpp == 1) << plan::LayoutName(r.candidate);
  }
  const int64_t skipped = p.result.rules[plan::Rule::kMoeA2aOverlap];
  EXPECT_GT(skipped, 0);
  const std::string text = PlanToText(p.setup, p.result, false);
  EXPECT_NE(text.find("layouts the framework would refuse at launch: with overlap.moe_a2a on, "
                      "megatron-core refuses full recompute"),
            std::string::npos)
      << text;
  // Without the overlap nothing is skipped for it.
  const testing::Planned q =
      testing::PlanJob(testing::TestPath("job/data/q30-moe.yaml"), {}, options);
  ASSERT_TRUE(q.ok);
  EXPECT_EQ(q.result.rules[plan::Rule::kMoeA2aOverlap], 0);
}

}  // namespace
}  // namespace strata

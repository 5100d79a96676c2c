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

}  // namespace
}  // namespace strata

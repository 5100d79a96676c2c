// Each pipeline rank's optimizer step updates its own stage's parameters (issue 27), not the
// model's mean per stage: the ranks step at once after their gradient syncs, and the step ends
// with the rank whose finalize all-reduces (finalize_grads_step_test.cc) and optimizer take
// longest.
#include <gtest/gtest.h>

#include "sim/step_test_support.h"
#include "strata/job/resolved_job.h"
#include "strata/sim/step_model.h"

namespace strata::stage_optimizer_step_test {
namespace {

// testing::kLlama8Pp4Uneven: Llama-3.1-8B on 8 H100s, TP 1, PP 4 split 5 / 8 / 8 / 11, DP 2.
constexpr const char* kJob = testing::kLlama8Pp4Uneven;

// Llama-3.1-8B's parameters by hand (h 4096, 32 heads of 128, 8 KV heads, FFN 14336,
// V 128256, untied):
//   a layer: q, o 2 x 4096^2 + k, v 2 x 4096 x 1024 + MLP 3 x 4096 x 14336 + 2 x 4096 norms
//          = 33,554,432 + 8,388,608 + 176,160,768 + 8,192              =   218,112,000
//   output layer 4096 x 128256 + final norm 4096                         =   525,340,672
//   embedding 4096 x 128256                                              =   525,336,576
//   rank 3: 11 layers + output = 2,399,232,000 + 525,340,672             = 2,924,572,672
//   rank 0: 5 layers + embedding                                         = 1,615,896,576
//   ranks 1, 2: 8 layers                                                 = 1,744,896,000
// The distributed optimizer shards them over DP 2: rank 3 updates 1,462,286,336, where the
// model's mean per stage (8,030,261,248 / 4 / 2) is 1,003,782,656.
TEST(StageOptimizer, OneKindUnevenSplitTheRankWithTheMostParameters) {
  const std::optional<StepResult> r = testing::EvaluateJobText(kJob);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->optimizer_rank, 3);
  EXPECT_NEAR(r->local_params, 1462286336.0, 1.0);
}

// data/jobs/deepseek-v3-pp16-vpp2-layout-h800x1024.yaml (TP 1, PP 16, EP 64, DP 64: the
// expert-DP group is 64 / 64 = 1; the distributed optimizer shards the non-expert parameters
// over DP 64), by hand from the counts of stage_grad_sync_step_test.cc:
//   rank 1 (4 MoE layers): non-expert 931,987,456 / 64                   =  14,562,304
//                          experts 4 x 11,274,289,152 / EP 64 / 1        = 704,643,072
//                          together                                      = 719,205,376
//   rank 0 (3 dense + 2 MoE, embedding): 3,143,122,944 / 64 + 2 x 176,160,768 = 401,432,832
//   rank 14 (2 MoE + MTP): 801,772,544 / 64 + 3 x 176,160,768            = 541,010,000
//   rank 15 (2 MoE, output layer): (2 x 232,996,864 + 926,679,040 + 7,168) / 64
//                                  + 2 x 176,160,768                     = 374,082,160
// against the model's mean per stage, 17,453,412,352 / 16 / 64 + 59 x 11,274,289,152 / 1,024
// = 666,637,180. Rank 1's optimizer is the longest, but ranks 0 and 14 (the embedding group:
// the first rank and the MTP rank) all-reduce the shared embedding before their own
// (finalize_grads_step_test.cc), and rank 14, the larger shard of the two, ends the step.
TEST(StageOptimizer, DeepSeekV3RanksHoldTheirOwnShards) {
  const std::optional<StepResult> r =
      testing::EvaluateJobFile("deepseek-v3-pp16-vpp2-layout-h800x1024").result;
  ASSERT_EQ(r->optimizer_rank, 14);
  // The router's expert-bias terms, where counted, move the count by under 1e-6.
  EXPECT_NEAR(r->local_params, 541010000.0, 1e-6 * 541010000.0);
}

}  // namespace
}  // namespace strata::stage_optimizer_step_test

// The pipeline bubble when the ranks' micro batches differ (issue 27): 1F1B fills the pipeline
// with the first micro batch's forward through every rank and drains it with the last one's
// backward back through them, and runs at the slowest rank's pace in between, so the bubble is
// the other ranks' micro batches, not p - 1 of the slowest's.
#include <gtest/gtest.h>

#include "sim/step_test_support.h"
#include "strata/job/resolved_job.h"
#include "strata/sim/pipeline_bubble.h"
#include "strata/sim/step_model.h"

namespace strata {
namespace {

// A 4-rank 1F1B timeline worked by hand, m = 8 micro batches, forward 1 and backward 2 on ranks
// 0-2, forward 2 and backward 4 on rank 3 (the output layer's): rank 3 starts micro batch 1 at
// t = 3 (three forwards of 1), then runs its 8 forwards and 8 backwards back to back (8 x 6 =
// 48, to t = 51); micro batch 8's backward then goes back through ranks 2, 1, 0 (3 x 2): the
// step ends at 57 = 8 x 6 + (3 + 3 + 3). The bubble is 57 - 48 = 9 = (p - 1) x 3, the mean of
// the other ranks' micro batch (3), not (p - 1) x 6 = 18 of the slowest's (step 66).
TEST(StageBubble, OtherRanksFillAndDrain) {
  EXPECT_DOUBLE_EQ(OtherRanksMicroBatch({3, 3, 3, 6}), 3.0);
  const double m = 8, p = 4;
  EXPECT_DOUBLE_EQ(m * 6 + (p - 1) * OtherRanksMicroBatch({3, 3, 3, 6}), 57.0);
  // Equal ranks: Narayanan et al.'s (p - 1) x the micro batch.
  EXPECT_DOUBLE_EQ(OtherRanksMicroBatch({3, 3, 3, 3}), 3.0);
  // Two ranks as slow: one of them is the pace, the other fills and drains.
  EXPECT_DOUBLE_EQ(OtherRanksMicroBatch({2, 6, 4, 6}), 4.0);
  EXPECT_DOUBLE_EQ(OtherRanksMicroBatch({5}), 0.0);
}

// data/jobs/deepseek-v3-pp16-vpp2-layout-h800x1024.yaml: ranks 1-13 hold 4 MoE layers each and
// set the pace (stage_layers_step_test.cc); rank 0 (3 dense + 2 MoE, the embedding), rank 14
// (2 MoE and the MTP block) and rank 15 (2 MoE, the output layer) are faster. Interleaved 1F1B,
// p 16, v 2, m 64: the bubble is (p - 1) / (m v) of the m micro batches, counted in the other
// 15 ranks' mean micro batch (t0 + 12 t1 + t14 + t15) / 15:
//   (15 / 128) x 64 x (t0 + 12 t1 + t14 + t15) / 15 = (t0 + 12 t1 + t14 + t15) / 2,
// below 15 / 2 x t1, the slowest's, which the step counted before.
TEST(StageBubble, DeepSeekV3LayoutCountsTheOtherRanks) {
  const std::optional<StepResult> r =
      testing::EvaluateJobFile("deepseek-v3-pp16-vpp2-layout-h800x1024").result;
  ASSERT_EQ(r->stage_times.size(), 4u);
  double t0 = 0, t1 = 0, t14 = 0, t15 = 0;
  for (const StepResult::StageTime& s : r->stage_times) {
    (s.stage.rank == 0    ? t0
     : s.stage.rank == 1  ? t1
     : s.stage.rank == 14 ? t14
                          : t15) = s.micro_batch.s();
  }
  EXPECT_DOUBLE_EQ(t1, r->micro_batch.s());
  EXPECT_DOUBLE_EQ(r->bubble_fraction, 15.0 / 128.0);
  EXPECT_NEAR((*r)[StepPart::kBubble].total.s(), (t0 + 12 * t1 + t14 + t15) / 2,
              1e-9 * r->step.s());
  EXPECT_LT((*r)[StepPart::kBubble].total.s(), 15.0 / 2 * t1 * (1 - 1e-6));
}

}  // namespace
}  // namespace strata

// A model with one layer kind split unevenly over the pipeline (issue 27): the 1F1B bubble
// fills and drains through the other ranks at their own layer counts, not p - 1 copies of the
// slowest's.
#include <gtest/gtest.h>

#include "sim/step_test_support.h"
#include "strata/sim/step_model.h"

namespace strata::one_kind_bubble_step_test {
namespace {

// testing::kLlama8Pp4Uneven: Llama-3.1-8B on 8 H100s, TP 1, PP 4 split 5 / 8 / 8 / 11, DP 2.
constexpr const char* kJob = testing::kLlama8Pp4Uneven;

// m = 16 / DP 2 = 8 micro batches. With u one layer's micro batch (compute, its collectives,
// its host costs) and o the output layer and loss, the ranks' micro batches are
//   T_0 = 5 u, T_1 = T_2 = 8 u, T_3 = 11 u + o: the last rank is the slowest.
// The 1F1B timeline: rank 3 starts micro batch 1 after the forwards of ranks 0-2, runs its 8
// micro batches back to back (the faster ranks keep it fed: each of their forward + backward
// cycles, T_0..T_2, is shorter than T_3), and micro batch 8's backward then runs back through
// ranks 2, 1, 0. Taking backward = 2 forward, the step is
//   8 T_3 + (F_0 + F_1 + F_2) + (B_2 + B_1 + B_0) = 8 T_3 + T_0 + T_1 + T_2 = 8 T_3 + 21 u,
// a bubble of 21 u = (p - 1) / m x m x 7 u, the other ranks' mean micro batch 7 u; the mean
// split (every rank the slowest's) charged 3 T_3 = 33 u + 3 o.
TEST(OneKindBubble, UnevenSplitFillsThroughTheShortRanks) {
  const std::optional<StepResult> r = testing::EvaluateJobText(kJob);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->critical_stage.last);
  EXPECT_DOUBLE_EQ(r->bubble_fraction, 3.0 / 8.0);
  const double o = r->output_layer.s();
  ASSERT_GT(o, 0);
  const double u = (r->micro_batch.s() - o) / 11;
  EXPECT_NEAR(r->bubble_micro_batch.s(), 7 * u, 1e-12 * r->step.s());
  EXPECT_NEAR((*r)[StepPart::kBubble].total.s(), 21 * u, 1e-9 * r->step.s());
  EXPECT_LT((*r)[StepPart::kBubble].total.s(), 3 * r->micro_batch.s() * (1 - 1e-3));
}

}  // namespace
}  // namespace strata::one_kind_bubble_step_test

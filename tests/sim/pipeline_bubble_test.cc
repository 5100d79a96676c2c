// The zero-bubble and DualPipe schedules' bubbles against their papers' own numbers (issue 27,
// fault 7), with the papers' T_F = T_B = T_W: forward 1, the whole backward 2 (input gradient 1,
// weight gradient W = 1), so a micro batch of a stage costs F + B = 3.
#include "strata/sim/pipeline_bubble.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/sim/step_model.h"

namespace strata {
namespace {

ParallelLayout Pipeline(int64_t pp, int64_t vpp, PipelineSchedule schedule) {
  ParallelLayout l;
  l.pp = pp;
  l.vpp = vpp;
  l.pp_schedule = schedule;
  return l;
}

TEST(PipelineBubble, AsThePapersPriceIt) {
  const PassTimes equal{1, 2, 1};
  // 1F1B: (p - 1) (F + B) = 3 x 3 = 9 time units = 3 micro batches: 3 / m = 3 / 8.
  EXPECT_DOUBLE_EQ(ScheduleBubbleFraction(Pipeline(4, 1, PipelineSchedule::k1F1B), 8, equal),
                   3.0 / 8.0);
  // ZB-H1 (Qi et al. 2023): a third of 1F1B's at T_F = T_B = T_W: (p - 1)/3m = 1 / 8.
  EXPECT_DOUBLE_EQ(ScheduleBubbleFraction(Pipeline(4, 1, PipelineSchedule::kZeroBubble), 8, equal),
                   1.0 / 8.0);
  // ZB-V: zero at T_F = T_B = T_W (the paper's table; sail-sg's summary of the schedules).
  EXPECT_DOUBLE_EQ(ScheduleBubbleFraction(Pipeline(4, 2, PipelineSchedule::kZbv), 8, equal), 0.0);
  // DualPipeV on 4 ranks = 8 chunk stages (DualPipe README): (PP/2 - 1)(F&B + B - 3W) with chunk
  // times F 0.5, B 1, W 0.5, F&B = 1.5: 3 x (1.5 + 1 - 1.5) = 3 time units = 1 micro batch of
  // the rank (3): 1 / 8.
  EXPECT_DOUBLE_EQ(ScheduleBubbleFraction(Pipeline(4, 2, PipelineSchedule::kDualPipeV), 8, equal),
                   1.0 / 8.0);
  // A weight gradient too small to fill the bubble leaves some: ZB-H1 with W = 0.5 of B = 2:
  // (p - 1)(F + B_in - W) = 3 x (1 + 1.5 - 0.5) = 6 time units = 2 micro batches: 2 / 8.
  EXPECT_DOUBLE_EQ(ScheduleBubbleFraction(Pipeline(4, 1, PipelineSchedule::kZeroBubble), 8,
                                          PassTimes{1, 2, 0.5}),
                   2.0 / 8.0);
}

// On the reference model at PP 4, EP 2 (m = 8): the weight gradients are the backward's
// second GEMM of every trained weight, as long as the forward's GEMMs, so W lies between the
// forward's layer GEMMs and those plus the output layer and loss; ZB-V's bubble is below ZB-H1's,
// which is below 1F1B's.
TEST(PipelineBubble, WeightGradientsFromTheStep) {
  auto step = [](std::vector<std::string> more) {
    std::vector<std::string> sets = {"parallel.pp=4", "parallel.ep=2"};
    sets.insert(sets.end(), more.begin(), more.end());
    auto ref = testing::LoadReferenceStep(sets);
    auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
    EXPECT_TRUE(r.ok());
    return *r;
  };
  // PyTorch's schedules, as torchtitan runs them (megatron-core has neither).
  const StepResult zb = step({"parallel.pp_schedule=zero_bubble", "framework.name=torchtitan"});
  const double gemms = zb.forward.dense_gemm.s() + zb.forward.expert_gemm.s();
  EXPECT_GE(zb.weight_gradient.s(), gemms);
  EXPECT_LE(zb.weight_gradient.s(), gemms + zb.forward.logits_and_loss.s());
  const StepResult zbv =
      step({"parallel.vpp=2", "parallel.pp_schedule=zbv", "framework.name=torchtitan"});
  EXPECT_LT(zbv.bubble_fraction, zb.bubble_fraction);
  EXPECT_LT(zb.bubble_fraction, 3.0 / 8.0);
}

}  // namespace
}  // namespace strata

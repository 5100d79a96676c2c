// The step's pipeline bubble by schedule, and the slowest stage's pace for uneven splits with
// VPP > 1 (issue 27, fault 7). The reference job at PP 4, EP 2: DP = 40 / 4 = 10, m = 80 / 10 =
// 8 micro batches per step.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/sim/step_model.h"

namespace strata::pipeline_schedule_test {
namespace {

using testing::LoadReferenceStep;

StepResult Step(std::vector<std::string> more) {
  std::vector<std::string> sets = {"parallel.pp=4", "parallel.ep=2"};
  sets.insert(sets.end(), more.begin(), more.end());
  auto ref = LoadReferenceStep(sets);
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().Format());
  return r.ok() ? *r : StepResult{};
}

// 1F1B and GPipe idle (p - 1) micro-batch times (Huang et al. 2019; Narayanan et al. 2021):
// 3 / 8 of m micro batches; interleaving over v = 2 chunks: 3 / 16.
// GPipe is PyTorch's (torchtitan's): megatron-core, which the reference job's ms-swift trains
// through, has no such schedule, so both run under torchtitan here.
TEST(PipelineSchedule, BubbleOfOneFOneBGpipeAndInterleaved) {
  const StepResult one_f_one_b = Step({"framework.name=torchtitan"});
  EXPECT_DOUBLE_EQ(one_f_one_b.bubble_fraction, 3.0 / 8.0);
  const StepResult gpipe = Step({"parallel.pp_schedule=gpipe", "framework.name=torchtitan"});
  EXPECT_DOUBLE_EQ(gpipe.bubble_fraction, 3.0 / 8.0);
  EXPECT_NEAR(gpipe.step.s(), one_f_one_b.step.s(), 1e-9);  // same bubble, more memory
  const StepResult interleaved = Step({"parallel.vpp=2", "parallel.pp_schedule=interleaved_1f1b"});
  EXPECT_DOUBLE_EQ(interleaved.bubble_fraction, 3.0 / 16.0);
  // bubble = fraction x m x the other ranks' mean micro batch (OtherRanksMicroBatch): this
  // hybrid's ranks differ (the output rank sets the pace), so the fill and drain run through
  // three faster ranks, not three copies of the slowest.
  EXPECT_NEAR(interleaved[StepPart::kBubble].total.s(),
              3.0 / 16.0 * 8 * interleaved.bubble_micro_batch.s(), 1e-9);
  EXPECT_LT(interleaved.bubble_micro_batch.s(), interleaved.micro_batch.s());
}

// Uneven stages with VPP 2, first 4 and last 4 of the 40 layers: the two middle stages hold
// (40 - 8) / 2 = 16 layers. 12 layers more than the last stage outweigh its output layer: the
// logits GEMM is 2 x 2048 x 248,320 = 1.0e9 FLOP per token, about ten of this model's layers'
// GEMMs (about 3e9 active parameters, 2e9 of them in 40 layers: 1e8 FLOP per token a layer),
// run forward and backward (3 x), while each layer runs forward, recompute and backward (4 x)
// besides attention: 12 x 4 = 48 > 10 x 3 = 30. So a middle stage sets the pace, and it runs
// no output layer. Its own layers (full attention every 4th layer, 3, 7, ..., 39; chunks of 2,
// 8, 8, 2, 2, 8, 8, 2 layers, chunk k on rank k % 4): rank 1 holds layers 2-9 and 22-29, full
// attention at 3, 7, 23, 27: 4 full + 12 Gated DeltaNet. The even split's critical stage is the
// output rank 3 (chunks 15-19 and 35-39, full at 15, 19, 35, 39): 4 full + 6 Gated DeltaNet.
// So the uneven stage's flash attention equals the even one's (4 layers each), its Gated
// DeltaNet is 12 / 6 of it, and its routed experts (every layer is MoE) 16 / 10.
TEST(PipelineSchedule, SlowestStageSetsThePaceForUnevenVpp) {
  const StepResult even = Step({"parallel.vpp=2"});
  const StepResult uneven =
      Step({"parallel.vpp=2", "parallel.first_stage_layers=4", "parallel.last_stage_layers=4"});
  EXPECT_EQ(uneven.critical_stage.composition.rank, 1);
  EXPECT_EQ(even.critical_stage.composition.rank, 3);
  EXPECT_NEAR(uneven.forward.expert_gemm.s() / even.forward.expert_gemm.s(), 1.6, 1e-9);
  EXPECT_NEAR(uneven.forward.attention.s() / even.forward.attention.s(), 1.0, 1e-9);
  EXPECT_NEAR(uneven.forward.gated_deltanet.s() / even.forward.gated_deltanet.s(), 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(uneven.forward.logits_and_loss.s(), 0.0);
  EXPECT_DOUBLE_EQ(uneven.bubble_fraction, 3.0 / 16.0);
}

}  // namespace
}  // namespace strata::pipeline_schedule_test

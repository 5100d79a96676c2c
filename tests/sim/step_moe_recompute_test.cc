// megatron-core's selective recompute of the moe module (--recompute-modules moe) re-runs the
// token dispatch and combine all-to-alls. megatron/core/transformer/moe/moe_layer.py
// (NVIDIA/Megatron-LM core_v0.16.0, 3bec9aa97), MoELayer.forward:
//
//     def custom_forward(hidden_states, intermediate_tensors=None, padding_mask=None):
//         ...  probs, routing_map = self.route(hidden_states, padding_mask)
//         ...  dispatched_input, probs = self.dispatch(hidden_states, probs)
//              output, mlp_bias = self.routed_experts_compute(dispatched_input, probs)
//              output = self.combine(output)
//     if self.moe_layer_recompute:
//         ...  outputs = tensor_parallel.checkpoint(custom_forward, False, hidden_states, ...)
//
// with moe_layer_recompute = recompute_granularity == 'selective' and "moe" in
// recompute_modules: the backward re-runs the forward's dispatch and combine before its own two,
// 6 all-to-alls per MoE layer and micro batch, as full recompute runs. Before, strata counted 4.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/sim/step_model.h"
#include "support/golden.h"

namespace strata {
namespace {

// The EP all-to-all calls per step on the critical rank.
double EpAllToAllCalls(const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec(testing::TestPath("job/data/q30-pp.yaml"), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  if (!spec.ok()) return -1;
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  if (!job.ok()) return -1;
  const std::optional<StepResult> r = testing::EvaluateJobStep(*job);
  if (!r) return -1;
  double calls = 0;
  for (const PricedTraffic& t : r->traffic) {
    if (t.item.group == GroupKind::kEp && t.item.op == CollectiveOp::kAllToAll) {
      calls += t.item.calls_per_step;
    }
  }
  return calls;
}

TEST(MoeRecompute, ModuleRecomputeReRunsDispatchAndCombine) {
  // Qwen3-30B-A3B (48 MoE layers), PP 2: 24 layers on a stage; global batch 256 / (micro batch 1
  // x DP 8) = 32 micro batches. Without the moe module recomputed: 2 all-to-alls forward + 2
  // backward = 4 x 24 x 32 = 3,072 a step.
  EXPECT_DOUBLE_EQ(EpAllToAllCalls({}), 3072);
  // With it: 6 x 24 x 32 = 4,608, the count full recompute already had.
  EXPECT_DOUBLE_EQ(EpAllToAllCalls({"recompute.modules=[moe]"}), 4608);
  EXPECT_DOUBLE_EQ(EpAllToAllCalls({"recompute.granularity=full"}), 4608);
  // moe_act recomputes the experts' activation only, inside the expert MLP: no all-to-all.
  EXPECT_DOUBLE_EQ(EpAllToAllCalls({"recompute.modules=[moe_act]"}), 3072);
}

}  // namespace
}  // namespace strata

// Whose switch hides a ZeRO-2 layout's per-micro-batch gradient reduce-scatters. DeepSpeed's
// overlap_comm (deepspeed/runtime/zero/config.py: default true under ZeRO-3 only) is DeepSpeed's;
// megatron-core's sharded data parallelism (Megatron-FSDP, DistributedDataParallelConfig
// data_parallel_sharding_strategy optim_grads for zero2) overlaps the gradient reduce-scatters
// with the backward under --overlap-grad-reduce (overlap_grad_reduce), else reduces them when
// the backward is done. Before, a megatron-core zero2 job followed DeepSpeed's default
// (overlap_comm false: every reduce-scatter exposed), its own overlap.grad_reduce changed
// nothing (8.06 s either way) and sharding.overlap_comm=true moved it to 6.16 s.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/sim/step_model.h"
#include "strata/sim/step_modes.h"
#include "support/golden.h"

namespace strata {
namespace {

struct ShardedRun {
  StepLayout layout;
  StepResult result;
};

ShardedRun Evaluate(const std::vector<std::string>& sets) {
  testing::JobFileStep run =
      testing::EvaluateJobFile(testing::TestPath("job/data/q30-pp.yaml"), sets);
  return {run.setup.layout, run.result};
}

double GradExposed(const StepResult& r) {
  return (r[StepPart::kDpGrad].exposed + r[StepPart::kExpertDpGrad].exposed).value();
}
double GradTotal(const StepResult& r) {
  return (r[StepPart::kDpGrad].total + r[StepPart::kExpertDpGrad].total).value();
}

TEST(ShardedOverlap, MegatronCoreZero2FollowsOverlapGradReduce) {
  // Qwen3-30B-A3B, TP2 PP2 CP2 EP8, 32 micro batches, zero2 under megatron-core.
  const ShardedRun off = Evaluate({"sharding.mode=zero2"});
  // overlap.grad_reduce off: the reduce-scatters wait for the compute stream, every one exposed.
  EXPECT_NEAR(GradExposed(off.result), GradTotal(off.result), 1e-12);
  EXPECT_NE(ShardedOverlapRule(off.layout).find("overlap.grad_reduce off"), std::string::npos);
  EXPECT_NE(ShardedOverlapRule(off.layout).find("y = 0 for r"), std::string::npos);
  // DeepSpeed's switch does not run megatron-core's collectives: nothing changes.
  const ShardedRun ds = Evaluate({"sharding.mode=zero2", "sharding.overlap_comm=true"});
  EXPECT_DOUBLE_EQ(ds.result.step.s(), off.result.step.s());

  // overlap.grad_reduce on: each layer's reduce-scatter r runs behind the next layer's backward
  // y, the explain's formula with no gathers (g = 0): per micro batch r + (L - 1) max(0, r - y),
  // L = 48 layers / PP 2 = 24, r = all the per-layer reduce-scatter time / (32 micro batches x
  // 24), y = one micro batch's backward with recompute / 24.
  const ShardedRun on = Evaluate({"sharding.mode=zero2", "overlap.grad_reduce=true"});
  const double m = 32, layers = 24;
  const double r = GradTotal(on.result) / (m * layers);
  const double y = (on.result.backward.total() + on.result.recompute.total()).value() / layers;
  const double expected = m * (r + (layers - 1) * std::max(0.0, r - y));
  EXPECT_NEAR(GradExposed(on.result), expected, 1e-9 * expected);
  EXPECT_LT(GradExposed(on.result), GradExposed(off.result));
  EXPECT_LT(on.result.step.s(), off.result.step.s());
  EXPECT_NE(ShardedOverlapRule(on.layout).find("overlap.grad_reduce on"), std::string::npos);
}

}  // namespace
}  // namespace strata

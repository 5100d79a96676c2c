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

namespace strata::step_sharded_overlap_test {
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

// verl's FSDP workers are PyTorch's FSDP1 (data/frameworks.yaml, verl: zero3_runtime fsdp1,
// zero12_runtime {zero2: fsdp1}): its all-gathers run on the unshard stream and its
// reduce-scatters on the post-backward stream whatever the job says (pytorch/pytorch 00ae0bc9
// torch/distributed/fsdp/_runtime_utils.py, _unshard and _post_backward_hook); DeepSpeed's
// overlap_comm is not FSDP's switch. Before, ExposeShardedTraffic asked overlap_comm without
// asking whose code runs the sharding: a verl zero2 job took DeepSpeed's ZeRO-2 default
// (overlap_comm false) and exposed every reduce-scatter, and sharding.overlap_comm=false moved
// a verl zero3 job's step.
TEST(ShardedOverlap, TorchFsdpDoesNotFollowDeepSpeedsOverlapComm) {
  auto run = [](const std::vector<std::string>& sets) {
    auto ref = testing::LoadReferenceStep(sets);
    auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
    EXPECT_TRUE(r.ok()) << r.error().Format();
    return ShardedRun{ref.setup.layout, r.ok() ? *r : StepResult{}};
  };
  const ShardedRun z2 = run({"framework.name=verl", "sharding.mode=zero2", "parallel.ep=1"});
  EXPECT_EQ(z2.layout.runtime, ShardingRuntime::kFsdp1);
  EXPECT_FALSE(ShardedOnComputeStream(z2.layout));
  EXPECT_TRUE(ShardedGradsOverlapBackward(z2.layout));
  EXPECT_NE(ShardedOverlapRule(z2.layout).find("PyTorch FSDP1"), std::string::npos)
      << ShardedOverlapRule(z2.layout);
  // Each layer's reduce-scatter hides behind the next layer's backward: less than all of it.
  EXPECT_LT(GradExposed(z2.result), GradTotal(z2.result));

  const ShardedRun z3 = run({"framework.name=verl", "sharding.mode=zero3", "parallel.ep=1"});
  const ShardedRun z3_off = run({"framework.name=verl", "sharding.mode=zero3", "parallel.ep=1",
                                 "sharding.overlap_comm=false"});
  EXPECT_DOUBLE_EQ(z3_off.result.step.s(), z3.result.step.s());

  // DeepSpeed's own ZeRO-3 (the HF Trainer's) still follows it: every collective exposed.
  const ShardedRun ds = run({"framework.name=hf-trainer", "sharding.mode=zero3", "parallel.ep=1",
                             "sharding.overlap_comm=false"});
  EXPECT_EQ(ds.layout.runtime, ShardingRuntime::kDeepSpeed);
  EXPECT_TRUE(ShardedOnComputeStream(ds.layout));
}

}  // namespace
}  // namespace strata::step_sharded_overlap_test

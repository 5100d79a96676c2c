// Gradient accumulation under FSDP without a sync after each micro batch (issue 28): the HF
// Trainer runs every micro batch of a step but the last under accelerate's no_sync
// (huggingface/transformers@000945a9 src/transformers/trainer.py, _inner_training_loop), which
// under FSDP2 is set_requires_gradient_sync(False) and under FSDP1 FullyShardedDataParallel's
// no_sync (huggingface/accelerate@16cb6eb8 src/accelerate/accelerator.py). No reduce-scatter
// runs then, so every unit keeps its whole (unsharded) gradient until the last micro batch's
// backward: PyTorch's FSDP1 docs, no_sync, "FSDP will accumulate the full model gradients
// (instead of gradient shards) until the eventual sync". Before, the ledger counted the sharded
// gradients of a step that reduce-scatters every micro batch, whatever the framework.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "sim/step_test_support.h"
#include "strata/job/resolved_job.h"
#include "strata/memory/ledger.h"
#include "strata/sim/step_model.h"

namespace strata::accumulation_sync_test {
namespace {

constexpr const char* kAccumulated = "gradients: unsharded, accumulated over micro batches";

// Llama-3.1-8B (8,030,261,248 parameters, every one trained) under the HF Trainer's FSDP2 on 8
// H100s: micro batch 1, global batch 32, so 32 / (1 x 8) = 4 micro batches a step.
constexpr const char* kHfFsdp2 = R"(model: llama-3.1-8b
cluster: {gpu: H100 SXM, gpus_per_node: 8, nodes: 1}
framework: {name: hf-trainer}
parallel: {tp: 1}
sharding: {mode: fsdp2, runtime: fsdp2}
batch: {micro_batch: 1, global_batch: 32}
sequence: {max_tokens: 4096, packing: true}
recompute: {granularity: full}
precision: {params: bf16, grads: fp32}
)";

std::optional<Job> Resolve(const std::vector<std::string>& sets) {
  auto spec = ParseJobSpec(kHfFsdp2, "hf.yaml", sets);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().Format());
  if (!spec.ok()) return std::nullopt;
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
  if (!job.ok()) return std::nullopt;
  return *std::move(job);
}

double AccumulatedBytes(const std::vector<std::string>& sets) {
  const std::optional<Job> job = Resolve(sets);
  if (!job) return -1;
  const MemoryLedger ledger = ComputeLedger(*job, testing::Constants());
  for (const LedgerItem& item : ledger.items) {
    if (item.name == kAccumulated) return item.bytes.value();
  }
  return 0;
}

// FSDP2 keeps the accumulated gradient in reduce_dtype (fp32 here: precision.grads) when it
// differs from the param dtype (_fsdp_param.py, to_accumulated_grad_if_needed):
// 8,030,261,248 x 4 B = 32,121,044,992 B on every rank.
TEST(AccumulationSync, HfTrainerFsdp2KeepsTheWholeGradientInReduceDtype) {
  const std::optional<Job> job = Resolve({});
  ASSERT_TRUE(job);
  EXPECT_FALSE(job->spec.sharding.sync_each_micro_batch);  // the HF Trainer's framework default
  EXPECT_DOUBLE_EQ(AccumulatedBytes({}), 8'030'261'248.0 * 4);
}

// FSDP1's _post_backward_hook returns under no_sync before casting to reduce_dtype
// (torch/distributed/fsdp/_runtime_utils.py): the flat gradient stays in the compute dtype,
// bf16: 8,030,261,248 x 2 B.
TEST(AccumulationSync, HfTrainerFsdp1KeepsItInTheComputeDtype) {
  EXPECT_DOUBLE_EQ(AccumulatedBytes({"sharding.runtime=fsdp1"}), 8'030'261'248.0 * 2);
}

// Nothing is held when each micro batch syncs (accelerate's accumulate() with sync_each_batch,
// or a framework whose loop calls backward alone: verl's dp_actor), or when a step has one micro
// batch (global batch 8 = 1 x 8 ranks).
TEST(AccumulationSync, NothingHeldWhenEachMicroBatchSyncsOrThereIsOne) {
  EXPECT_DOUBLE_EQ(AccumulatedBytes({"sharding.sync_each_micro_batch=true"}), 0);
  EXPECT_DOUBLE_EQ(AccumulatedBytes({"framework.name=verl"}), 0);
  EXPECT_DOUBLE_EQ(AccumulatedBytes({"framework.name=torchtitan"}), 0);
  EXPECT_DOUBLE_EQ(AccumulatedBytes({"batch.global_batch=8"}), 0);
}

// The step: the reduce-scatters run in the last micro batch's backward only, so the DP gradient
// traffic of a step is a quarter of what four synced micro batches move.
TEST(AccumulationSync, TheStepReduceScattersOnceAStep) {
  const std::optional<Job> unsynced = Resolve({});
  const std::optional<Job> synced = Resolve({"sharding.sync_each_micro_batch=true"});
  ASSERT_TRUE(unsynced && synced);
  const std::optional<StepResult> a = testing::EvaluateJobStep(*unsynced);
  const std::optional<StepResult> b = testing::EvaluateJobStep(*synced);
  ASSERT_TRUE(a && b);
  EXPECT_NEAR((*a)[StepPart::kDpGrad].total.s() * 4, (*b)[StepPart::kDpGrad].total.s(), 1e-12);
}

// The field means nothing where the gradients are not sharded: refused by name.
TEST(AccumulationSync, RefusedWithoutShardedGradients) {
  auto spec = ParseJobSpec(kHfFsdp2, "hf.yaml",
                           {"sharding.mode=zero1", "sharding.runtime=deepspeed",
                            "sharding.sync_each_micro_batch=false"});
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().Format().find("sync_each_micro_batch"), std::string::npos)
      << spec.error().Format();
}

}  // namespace
}  // namespace strata::accumulation_sync_test

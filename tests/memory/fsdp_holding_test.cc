// What PyTorch's FSDP holds at rest and per phase under the modes it runs (FsdpHoldingOf):
// FSDP1's SHARD_GRAD_OP (sharding.mode zero2, runtime fsdp1), FSDP2 under zero2 and zero3
// (torchtitan's zero3 is its FSDP2), against byte counts derived by hand below.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/sharding.h"
#include "support/golden.h"

namespace strata::fsdp_holding_test {
namespace {

using testing::Constants;
using testing::ItemBytes;

Job Resolve(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  auto spec = ParseJobSpec(yaml, testing::TestPath("memory/validation/inline.yaml"), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

// Llama-3.1-8B with 16 of its 32 blocks (tests/memory/validation/llama-3.1-8b-16l.json, as in
// sharding_test.cc): hidden 4096, 32 heads x 128, 8 KV heads, MLP 14336, vocab 128,256, untied.
//   block: q, o 4096 x 4096 + k, v 4096 x 1024 + MLP 3 x 4096 x 14336 + norms 2 x 4096
//          = 218,112,000
//   embedding 4096 x 128,256 = 525,336,576; final norm + output 4096 + 525,336,576 = 525,340,672
//   P = 16 x 218,112,000 + 525,336,576 + 525,340,672 = 4,540,469,248; on 8 GPUs P / 8 =
//   567,558,656 (every FlatParameter divides by 8: no FSDP1 padding).
constexpr double kP = 4540469248.0;
constexpr double kBlock = 218112000.0;
constexpr double kRoot = 525336576.0 + 525340672.0;  // embedding + final norm + output
constexpr const char* kLlama8 =
    "model: llama-3.1-8b-16l.json\n"
    "cluster: {gpu: H100-SXM, gpus_per_node: 8, nodes: 1}\n"
    "parallel: {tp: 1, pp: 1}\n"
    "batch: {micro_batch: 1, global_batch: 8}\n"
    "sequence: {max_tokens: 4096, packing: true}\n"
    "precision: {params: bf16, grads: fp32}\n";
constexpr const char* kGathered = "weights: all-gathered (ZeRO-3/FSDP2 working set)";
constexpr const char* kUnsharded = "gradients: unsharded, before reduce-scatter";
constexpr const char* kMaster = "optimizer: master weights (fp32)";

// The weights the ledger holds at rest: every "weights: " item but the working sets.
double WeightsAtRest(const MemoryLedger& ledger) {
  double sum = 0;
  for (const auto& item : ledger.items) {
    if (item.name.rfind("weights: ", 0) == 0 && item.name != kGathered &&
        item.name != "weights: FP8 copies")
      sum += item.bytes.count();
  }
  return sum;
}

bool HasItem(const MemoryLedger& ledger, const std::string& name) {
  for (const auto& item : ledger.items) {
    if (item.name == name) return true;
  }
  return false;
}

// FSDP1's SHARD_GRAD_OP (Accelerate's fsdp_sharding_strategy: SHARD_GRAD_OP, imported as
// sharding.mode zero2, runtime fsdp1). pytorch/pytorch 00ae0bc9
// torch/distributed/fsdp/_runtime_utils.py: the FlatParameter is sharded at init for every
// strategy but NO_SHARD; _post_forward_reshard frees the unsharded FlatParameter only for
// RESHARD_AFTER_FORWARD_HANDLE_STRATEGIES (FULL_SHARD, HYBRID_SHARD), so under SHARD_GRAD_OP each
// unit's gathered FlatParameter stays from its forward to its backward, where
// _post_backward_hook's _should_free_in_backward (state._sync_gradients) frees it. The at-rest
// state is the fp32 padded local shard, the optimizer's parameter (as under FULL_SHARD:
// Fsdp1HoldsItsFp32ShardAndOrigParams in sharding_test.cc).
//   weights at rest: 4 B x P / 8 = 2,270,234,624 B; no master copy (was: bf16 weights whole on
//     every rank, 2 B x P = 9,080,938,496 B, + fp32 master 4 B x P / 8 = 2,270,234,624 B)
//   gathered, at the forward's end and the backward's first unit: the root FlatParameter
//     2 B x 1,050,677,248 = 2,101,354,496 + 16 blocks 2 B x 16 x 218,112,000 = 6,979,584,000
//     = 9,080,938,496 B (was: none)
//   reduce-scatter buffers as FULL_SHARD's (the same _post_backward_hook): 2,795,577,344 B
//   gradients (fp32 shard) 4 B x P / 8 = 2,270,234,624 B and Adam moments 8 B x P / 8 =
//   4,540,469,248 B, as before.
// So after init the rank holds 9,080,938,496 B less than before; at the forward's end the same
// (the whole model in bf16, gathered now rather than replicated), and at the first optimizer
// step (every unit resharded after its backward) 9,080,938,496 B less.
TEST(FsdpHolding, Fsdp1ShardGradOpShardsTheWeightsAndKeepsEachUnitToItsBackward) {
  const Job job = Resolve(std::string(kLlama8) +
                          "framework: {name: hf-trainer}\n"
                          "sharding: {mode: zero2, runtime: fsdp1}\n");
  const FsdpHolding h = FsdpHoldingOf(job);
  EXPECT_TRUE(h.fsdp1);
  EXPECT_TRUE(h.weights_sharded);
  EXPECT_TRUE(h.master_is_shard);
  EXPECT_FALSE(h.reshard_after_forward);
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  EXPECT_NEAR(WeightsAtRest(ledger), 4 * kP / 8, 1.0);
  EXPECT_NEAR(WeightsAtRest(ledger), 2270234624.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kMaster).count(), 0.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kGathered).count(), 2 * (kRoot + 16 * kBlock), 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kGathered).count(), 9080938496.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kUnsharded).count(), 2795577344.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, "gradient buffer (fp32)").count(), 2270234624.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, "optimizer: Adam moments (fp32)").count(), 4540469248.0, 1.0);

  // FULL_SHARD (sharding.mode fsdp2, runtime fsdp1) holds the same states at rest: the after-init
  // phases agree; only the working set differs (two blocks and a _mp_shard beside the root,
  // 3,028,330,496 B, against every unit).
  const MemoryLedger full =
      ComputeLedger(Resolve(std::string(kLlama8) + "framework: {name: hf-trainer}\n"
                                                   "sharding: {mode: fsdp2, runtime: fsdp1}\n"),
                    Constants());
  EXPECT_NEAR(WeightsAtRest(full), WeightsAtRest(ledger), 1.0);
  EXPECT_NEAR(ItemBytes(full, kGathered).count(), 3028330496.0, 1.0);
  EXPECT_NEAR(ledger.phases[0].bytes.count() - ItemBytes(ledger, "CUDA context").count() -
                  ItemBytes(ledger, "NCCL buffers").count(),
              4 * kP / 8 + 4 * kP / 8, 1.0);

  // DeepSpeed's ZeRO-2 (stage_1_and_2) keeps the bf16 weights whole on every rank.
  const Job ds = Resolve(std::string(kLlama8) + "framework: {name: deepspeed}\n" +
                         "sharding: {mode: zero2}\n");
  EXPECT_FALSE(FsdpHoldingOf(ds).weights_sharded);
  const MemoryLedger ds_ledger = ComputeLedger(ds, Constants());
  EXPECT_NEAR(WeightsAtRest(ds_ledger), 2 * kP, 1.0);
  EXPECT_NEAR(ItemBytes(ds_ledger, kMaster).count(), 4 * kP / 8, 1.0);
  EXPECT_FALSE(HasItem(ds_ledger, kGathered));
}

// FSDP2 under zero2 (fully_shard with reshard_after_forward false, e.g. sharding.runtime fsdp2
// from Accelerate's fsdp_version 2): the sharded DTensor in the original dtype is the parameter
// at rest (pytorch/pytorch@010ae4a8 torch/distributed/fsdp/_fully_shard/_fsdp_param.py,
// FSDPParam._init_sharded_param), each unit gathered from its forward to its backward. The HF
// Trainer's FSDP2 wraps the blocks and keeps embedding, final norm and output in the root unit:
//   weights at rest 4 B x P / 8 = 2,270,234,624 B, no master (was 2 B x P + 4 B x P / 8)
//   gathered: 2 B x (1,050,677,248 + 16 x 218,112,000) = 9,080,938,496 B (was: none)
//   reduce-scatter: FSDP2's per unit, the root's output gradient held in bf16 2 B x 525,340,672
//     = 1,050,681,344 + a block's bf16 gradient and fp32 copy 6 B x 218,112,000 = 1,308,672,000:
//     2,359,353,344 B (Fsdp2ReduceScatterBuffersPerUnit; was the largest unit's 6 B x
//     525,340,672 = 3,152,044,032 B)
TEST(FsdpHolding, Fsdp2UnderZero2ShardsTheWeightsAndKeepsEachUnitToItsBackward) {
  const Job job = Resolve(std::string(kLlama8) +
                          "framework: {name: hf-trainer}\n"
                          "sharding: {mode: zero2, runtime: fsdp2}\n");
  const FsdpHolding h = FsdpHoldingOf(job);
  EXPECT_TRUE(h.fsdp2);
  EXPECT_TRUE(h.weights_sharded);
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  EXPECT_NEAR(WeightsAtRest(ledger), 2270234624.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kMaster).count(), 0.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kGathered).count(), 9080938496.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kUnsharded).count(), 2359353344.0, 1.0);
}

// torchtitan runs only FSDP2 (data/frameworks.yaml zero3_runtime: fsdp2): a job that says zero3
// is fully_shard with MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32) on a model built
// in float32 (pytorch/torchtitan@b5bcd76c torchtitan/trainer.py:357-358, training.dtype
// "float32" at config/configs.py:87; distributed/fsdp.py:223-226), whose optimizer takes the
// sharded fp32 parameters (trainer.py:537). The bf16 copies are the all-gather outputs only.
//   weights at rest 4 B x P / 8 = 2,270,234,624 B, no master; was bf16 2 B x P / 8 =
//     1,135,117,312 B + fp32 master 4 B x P / 8 = 2,270,234,624 B = 3,405,351,936 B
//   gathered: torchtitan's units (embedding, blocks, norm + output), the largest neighbouring
//     pair, the output unit and the last block, 2 B x (525,340,672 + 218,112,000) =
//     1,486,905,344 B; was DeepSpeed's (1 computing + 1 prefetched) x the largest unit,
//     2 x 2 B x 525,340,672 = 2,101,362,688 B
//   reduce-scatter: the output unit's bf16 gradient and fp32 copy 6 B x 525,340,672 =
//     3,152,044,032 B
// Every item and phase is then the one of the same job under sharding.mode fsdp2, as verl's
// FSDP2 (strategy fsdp2) and the HF Trainer's (Accelerate fsdp_version 2) are: the same holding.
TEST(FsdpHolding, TorchtitanZero3IsItsFsdp2) {
  const std::string titan = std::string(kLlama8) + "framework: {name: torchtitan}\n";
  const Job zero3 = Resolve(titan + "sharding: {mode: zero3}\n");
  EXPECT_EQ(zero3.runtime(), ShardingRuntime::kFsdp2);
  const FsdpHolding h = FsdpHoldingOf(zero3);
  EXPECT_TRUE(h.fsdp2);
  EXPECT_TRUE(h.master_is_shard);
  EXPECT_TRUE(h.side_streams);
  const MemoryLedger ledger = ComputeLedger(zero3, Constants());
  EXPECT_NEAR(WeightsAtRest(ledger), 2270234624.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kMaster).count(), 0.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kGathered).count(), 1486905344.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kUnsharded).count(), 3152044032.0, 1.0);

  const MemoryLedger fsdp2 =
      ComputeLedger(Resolve(titan + "sharding: {mode: fsdp2}\n"), Constants());
  ASSERT_EQ(ledger.items.size(), fsdp2.items.size());
  for (size_t i = 0; i < ledger.items.size(); ++i) {
    EXPECT_EQ(ledger.items[i].name, fsdp2.items[i].name);
    EXPECT_NEAR(ledger.items[i].bytes.count(), fsdp2.items[i].bytes.count(), 1.0)
        << ledger.items[i].name;
  }
  ASSERT_EQ(ledger.phases.size(), fsdp2.phases.size());
  for (size_t i = 0; i < ledger.phases.size(); ++i) {
    EXPECT_NEAR(ledger.phases[i].bytes.count(), fsdp2.phases[i].bytes.count(), 1.0) << i;
  }

  // verl's FSDP2 and the HF Trainer's (Accelerate) hold the same: fp32 shard, no master.
  for (const char* name : {"verl", "hf-trainer"}) {
    const Job job = Resolve(std::string(kLlama8) + fmt::format("framework: {{name: {}}}\n", name) +
                            "sharding: {mode: fsdp2, runtime: fsdp2}\n");
    const FsdpHolding other = FsdpHoldingOf(job);
    EXPECT_TRUE(other.fsdp2 && other.master_is_shard && other.weights_sharded) << name;
    const MemoryLedger l = ComputeLedger(job, Constants());
    EXPECT_NEAR(WeightsAtRest(l), 2270234624.0, 1.0) << name;
    EXPECT_NEAR(ItemBytes(l, kMaster).count(), 0.0, 1.0) << name;
  }
}

}  // namespace
}  // namespace strata::fsdp_holding_test

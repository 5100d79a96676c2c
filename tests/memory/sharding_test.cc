// ZeRO stages, FSDP2/HSDP, offload, FP8 copies and optimizer variants in the memory ledger,
// against values derived by hand below.
#include "strata/memory/sharding.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "memory/memory_test_support.h"
#include "strata/memory/static_memory.h"
#include "support/golden.h"

namespace strata::sharding_test {
namespace {

using testing::Constants;
using testing::ItemBytes;
using testing::ItemFormula;

// Qwen3-14B (tests/memory/validation/qwen3-14b.json): hidden 5120, 40 layers, 40 heads x 128,
// 8 KV heads, MLP 17408, vocab 151,936 (= 1,187 x 128: no padding at TP 1), untied.
//   attention per layer: q 5120x5120 + k, v 5120x1024 each + o 5120x5120 + q/k norms 2 x 128
//                        = 26,214,400 x 2 + 5,242,880 x 2 + 256 = 62,914,816
//   MLP per layer: 3 x 5120 x 17408 = 267,386,880; norms per layer 2 x 5120 = 10,240
//   layer: 330,311,936; embedding = output layer = 5120 x 151,936 = 777,912,320; final norm 5120
//   total P = 40 x 330,311,936 + 2 x 777,912,320 + 5,120 = 14,768,307,200
constexpr double kP = 14768307200.0;
constexpr double kEmbedding = 777912320.0;

Job Resolve(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  auto spec = ParseJobSpec(yaml, testing::TestPath("memory/validation/inline.yaml"), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

constexpr const char* kDense8 =
    "model: qwen3-14b.json\n"
    "cluster: {gpu: H100-SXM, gpus_per_node: 8, nodes: 1}\n"
    "parallel: {tp: 1, pp: 1}\n"
    "batch: {micro_batch: 1, global_batch: 8}\n"
    "sequence: {max_tokens: 4096, packing: true}\n"
    "precision: {params: bf16, grads: bf16}\n";

TEST(Sharding, Zero3ShardsEverythingAndGathersTwoUnits) {
  const Job job = Resolve(std::string(kDense8) + "sharding: {mode: zero3}\n");
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  // DeepSpeed ZeRO-3 over DP 8: bf16 weights 2 B x P / 8 = 3,692,076,800 B, spread over kinds.
  EXPECT_NEAR(ledger.Total(ItemKind::kWeights).count() -
                  ItemBytes(ledger, "weights: all-gathered (ZeRO-3/FSDP2 working set)").count(),
              2 * kP / 8, 2.0);
  // bf16 gradient shard 2 B x P / 8; fp32 master 4 B x P / 8; Adam moments 8 B x P / 8.
  EXPECT_NEAR(ItemBytes(ledger, "gradient buffer (bf16)").count(), 2 * kP / 8, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, "optimizer: master weights (fp32)").count(), 4 * kP / 8, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, "optimizer: Adam moments (fp32)").count(), 8 * kP / 8, 1.0);
  // Gathered: the largest unit is the final norm + output layer, 777,912,320 + 5,120 params;
  // computing + 1 prefetched, 2 B each: 2 x 2 x 777,917,440 = 3,111,669,760 B.
  EXPECT_NEAR(ItemBytes(ledger, "weights: all-gathered (ZeRO-3/FSDP2 working set)").count(),
              3111669760.0, 1.0);
  // Reduce-scatter: that unit's bf16 gradients (grads are bf16: no reduce copy), 2 B x 777,917,440.
  EXPECT_NEAR(ItemBytes(ledger, "gradients: unsharded, before reduce-scatter").count(),
              1555834880.0, 1.0);
}

TEST(Sharding, Zero2ShardsGradientsNotWeights) {
  const Job job = Resolve(std::string(kDense8) + "sharding: {mode: zero2}\n");
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  EXPECT_NEAR(ItemBytes(ledger, "weights: embedding").count(), 2 * kEmbedding, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, "gradient buffer (bf16)").count(), 2 * kP / 8, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, "optimizer: Adam moments (fp32)").count(), 8 * kP / 8, 1.0);
  for (const auto& item : ledger.items)
    EXPECT_NE(item.name, "weights: all-gathered (ZeRO-3/FSDP2 working set)");
}

// DeepSpeed's ZeRO-1/2 optimizer (deepspeedai/DeepSpeed edaa722,
// deepspeed/runtime/zero/stage_1_and_2.py, setup_buckets): with contiguous_gradients (default
// true) each backward allocates buf_0 = torch.empty(reduce_bucket_size, dtype=self.dtype) and,
// with overlap_comm, buf_1 of the same size, freed in the backward's epilogue
// (_release_ipg_buffers). bf16 model (2 B):
//   DeepSpeed's defaults (reduce_bucket_size 5e8, overlap_comm false below stage 3):
//     1 x 500,000,000 x 2 B = 1,000,000,000 B
//   overlap_comm true (DeepSpeed's own example configs): 2 x 5e8 x 2 B = 2,000,000,000 B
//   HF "auto" (the Trainer fills hidden^2 = 5,120^2 = 26,214,400), overlap_comm true:
//     2 x 26,214,400 x 2 B = 104,857,600 B
// They are live in backward only: the backward peak grows by them, the forward's does not.
// megatron-core's distributed optimizer (zero1) has no such buckets (its grad buffer is the
// gradient buffer already counted).
TEST(Sharding, DeepSpeedZero12ReduceBuckets) {
  const std::string item = "gradients: DeepSpeed reduce buckets (backward)";
  const std::string ds = std::string(kDense8) + "framework: {name: deepspeed}\n";
  const MemoryLedger z2 = ComputeLedger(Resolve(ds + "sharding: {mode: zero2}\n"), Constants());
  EXPECT_DOUBLE_EQ(ItemBytes(z2, item).count(), 1e9);
  const MemoryLedger overlap =
      ComputeLedger(Resolve(ds + "sharding: {mode: zero2, overlap_comm: true}\n"), Constants());
  EXPECT_DOUBLE_EQ(ItemBytes(overlap, item).count(), 2e9);
  EXPECT_DOUBLE_EQ(overlap.PhaseOf(Phase::kBackwardPeak).bytes.count() -
                       z2.PhaseOf(Phase::kBackwardPeak).bytes.count(),
                   1e9);
  EXPECT_DOUBLE_EQ(overlap.PhaseOf(Phase::kForwardPeak).bytes.count(),
                   z2.PhaseOf(Phase::kForwardPeak).bytes.count());
  const MemoryLedger z1 = ComputeLedger(
      Resolve(ds + "sharding: {mode: zero1, overlap_comm: true, reduce_bucket_elements: "
                   "26214400}\n"),
      Constants());
  EXPECT_DOUBLE_EQ(ItemBytes(z1, item).count(), 104857600.0);
  const MemoryLedger megatron = ComputeLedger(
      Resolve(std::string(kDense8) + "framework: {name: megatron-core}\nsharding: {mode: zero1}\n"),
      Constants());
  for (const auto& i : megatron.items) EXPECT_NE(i.name, item);
  // FSDP2 has no DeepSpeed bucket: a job that names a bucket size there is refused, naming the
  // field.
  auto fsdp =
      ParseJobSpec(std::string(kDense8) + "sharding: {mode: fsdp2, reduce_bucket_elements: 1000}\n",
                   testing::TestPath("memory/validation/inline.yaml"), {});
  ASSERT_FALSE(fsdp.ok());
  EXPECT_NE(fsdp.error().Format().find("sharding.reduce_bucket_elements"), std::string::npos)
      << fsdp.error().Format();
}

// DeepSpeed's ZeRO-3 optimizer (deepspeedai/DeepSpeed edaa722, deepspeed/runtime/zero/stage3.py,
// _setup_for_real_optimizer, lines 730-735): with contiguous_gradients (default true) the
// engine's start allocates bucket.buffer = torch.empty(self.reduce_bucket_size, dtype=dtype,
// device=current_device_name()) for its one communication dtype (bf16 under bf16), and keeps it
// for the run (only destroy() clears ipg_buckets). So, bf16 model (2 B):
//   DeepSpeed's default reduce_bucket_size 5e8 (stage3.py:173, DeepSpeedZeroConfig):
//     500,000,000 x 2 B = 1,000,000,000 B in every phase, after-init included;
//   the job's 26,214,400 elements: 52,428,800 B;
//   ms-swift (`swift sft --deepspeed zero3` loads swift/config/zero3.json at
//     modelscope/ms-swift@3602360: "reduce_bucket_size": "auto", which the HF Trainer fills
//     with hidden^2 = 5,120^2 = 26,214,400): 52,428,800 B (not its zero2.json's 2e8);
//   offloading the optimizer and the parameters to the CPU leaves it on the GPU (device=
//     current_device_name()): still 1,000,000,000 B.
// Before, ZeRO-3 had no such item ("0: not DeepSpeed ZeRO-1/2") and the field was refused.
TEST(Sharding, DeepSpeedZero3KeepsItsReduceBucketFromInit) {
  const std::string item = "gradients: DeepSpeed ZeRO-3 reduce (IPG) bucket";
  const std::string ds = std::string(kDense8) + "framework: {name: deepspeed}\n";
  const MemoryLedger z3 = ComputeLedger(Resolve(ds + "sharding: {mode: zero3}\n"), Constants());
  EXPECT_DOUBLE_EQ(ItemBytes(z3, item).count(), 1e9);
  const MemoryLedger none = ComputeLedger(
      Resolve(ds + "sharding: {mode: zero3, reduce_bucket_elements: 0}\n"), Constants());
  for (Phase p : {Phase::kAfterInit, Phase::kForwardPeak, Phase::kBackwardPeak,
                  Phase::kFirstOptimizerStep, Phase::kSteadyPeak}) {
    EXPECT_NEAR(z3.PhaseOf(p).bytes.count() - none.PhaseOf(p).bytes.count(), 1e9, 1.0)
        << PhaseName(p);
  }
  EXPECT_NE(z3.PhaseOf(Phase::kAfterInit).formula.find("reduce bucket 1.00 GB"), std::string::npos)
      << z3.PhaseOf(Phase::kAfterInit).formula;
  const MemoryLedger given = ComputeLedger(
      Resolve(ds + "sharding: {mode: zero3, reduce_bucket_elements: 26214400}\n"), Constants());
  EXPECT_DOUBLE_EQ(ItemBytes(given, item).count(), 52428800.0);
  const Job swift =
      Resolve(std::string(kDense8) + "framework: {name: ms-swift}\nsharding: {mode: zero3}\n");
  EXPECT_DOUBLE_EQ(swift.ReduceBucketElements(), 26214400.0);
  EXPECT_DOUBLE_EQ(ItemBytes(ComputeLedger(swift, Constants()), item).count(), 52428800.0);
  const MemoryLedger offload = ComputeLedger(
      Resolve(ds + "sharding: {mode: zero3, offload_optimizer: cpu, offload_param: cpu}\n"),
      Constants());
  EXPECT_DOUBLE_EQ(ItemBytes(offload, item).count(), 1e9);
  // megatron-core's zero3 (its own FSDP) keeps no DeepSpeed bucket.
  const MemoryLedger megatron = ComputeLedger(
      Resolve(std::string(kDense8) + "framework: {name: megatron-core}\nsharding: {mode: zero3}\n"),
      Constants());
  for (const auto& i : megatron.items) EXPECT_NE(i.name, item);
}

// The bucket a ZeRO-1/2 job gets when it does not give one follows the framework that writes its
// DeepSpeed config (data/frameworks.yaml, `reduce_bucket:`), bf16 model (2 B), overlap_comm
// false (DeepSpeed's default below stage 3, and ms-swift's shipped zero2.json's):
//   ms-swift (`swift sft --deepspeed zero2` loads swift/config/zero2.json at
//     modelscope/ms-swift@3602360: "reduce_bucket_size": 2e8): 1 x 200,000,000 x 2 B
//     = 400,000,000 B
//   the HF Trainer (it fills only "auto"; a key left out is DeepSpeed's
//     DeepSpeedZeroConfig.reduce_bucket_size default, 5e8): 1 x 500,000,000 x 2 B
//     = 1,000,000,000 B
//   a job that gives its own keeps it: ms-swift with 26,214,400 elements: 52,428,800 B
// Before the framework decided, every job got DeepSpeed's 5e8 (1e9 B for ms-swift too).
TEST(Sharding, ReduceBucketDefaultFollowsTheFramework) {
  const std::string item = "gradients: DeepSpeed reduce buckets (backward)";
  const std::string swift = std::string(kDense8) + "framework: {name: ms-swift}\n";
  const Job swift_job = Resolve(swift + "sharding: {mode: zero2}\n");
  EXPECT_DOUBLE_EQ(swift_job.ReduceBucketElements(), 2e8);
  EXPECT_DOUBLE_EQ(ItemBytes(ComputeLedger(swift_job, Constants()), item).count(), 4e8);
  const Job hf =
      Resolve(std::string(kDense8) + "framework: {name: hf-trainer}\nsharding: {mode: zero2}\n");
  EXPECT_DOUBLE_EQ(ItemBytes(ComputeLedger(hf, Constants()), item).count(), 1e9);
  const Job given = Resolve(swift + "sharding: {mode: zero2, reduce_bucket_elements: 26214400}\n");
  EXPECT_DOUBLE_EQ(ItemBytes(ComputeLedger(given, Constants()), item).count(), 52428800.0);
  // The explanation names whose value it is.
  EXPECT_NE(testing::ItemFormula(ComputeLedger(swift_job, Constants()), item).find("ms-swift's"),
            std::string::npos)
      << testing::ItemFormula(ComputeLedger(swift_job, Constants()), item);
}

TEST(Sharding, DdpReplicatesEverything) {
  const Job job = Resolve(std::string(kDense8) + "sharding: {mode: none}\n");
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  EXPECT_NEAR(ItemBytes(ledger, "optimizer: Adam moments (fp32)").count(), 8 * kP, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, "gradient buffer (bf16)").count(), 2 * kP, 1.0);
}

TEST(Sharding, Fsdp2HsdpWithoutReshardKeepsEveryLayerGathered) {
  // 16 GPUs, DP 16 = replicate 2 x shard 8. FSDP2 stores the shard in fp32 (the master).
  const Job job =
      Resolve(std::string(kDense8) +
                  "sharding: {mode: fsdp2, replicate: 2, reshard_after_forward: false}\n",
              {"cluster.nodes=2", "batch.global_batch=16", "precision.grads=fp32"});
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  EXPECT_NEAR(ItemBytes(ledger, "weights: embedding").count(), 4 * kEmbedding / 8, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, "gradient buffer (fp32)").count(), 4 * kP / 8, 1.0);
  EXPECT_EQ(ItemBytes(ledger, "optimizer: master weights (fp32)").count(), 0.0);
  EXPECT_NEAR(ItemBytes(ledger, "optimizer: Adam moments (fp32)").count(), 8 * kP / 8, 1.0);
  // Every unit gathered in bf16: 2 B x P = 29,536,614,400 B.
  EXPECT_NEAR(ItemBytes(ledger, "weights: all-gathered (ZeRO-3/FSDP2 working set)").count(), 2 * kP,
              1.0);
  // Reduce-scatter: bf16 gradient + fp32 reduce copy of the output unit: 6 B x 777,917,440.
  EXPECT_NEAR(ItemBytes(ledger, "gradients: unsharded, before reduce-scatter").count(),
              6 * 777917440.0, 1.0);
}

// FSDP2 with reshard after forward, as torchtitan wraps Qwen3-14B (embedding, 40 blocks, final
// norm + output layer): the live set is a unit computing and its neighbour prefetched.
//   block 330,311,936 params, of which GEMM weights 62,914,816 + 267,386,880 = 330,301,696
//   (q/k norms counted with attention) and norms 10,240; output unit 777,917,440
//   bf16: the largest pair is the output unit + the last block (the first two units of
//     backward) = 2 B x (777,917,440 + 330,311,936) = 2,216,458,752 B. Sized by the largest
//     unit, it was 2 x 2 B x 777,917,440 = 3,111,669,760 B.
//   torchao float8 all-gather: the blocks' GEMM weights gather in 1 B, norms, embedding and
//     output stay bf16: 2 B x 777,917,440 + 1 B x 330,301,696 + 2 B x 10,240 = 1,886,157,056 B
//     (largest-unit sizing gave 3,111,669,760 B again: FP8 changed nothing).
TEST(Sharding, Fsdp2GathersAUnitAndItsNeighbour) {
  const std::string fsdp2 = std::string(kDense8) + "sharding: {mode: fsdp2}\n";
  const MemoryLedger bf16 = ComputeLedger(Resolve(fsdp2, {"precision.grads=fp32"}), Constants());
  EXPECT_NEAR(ItemBytes(bf16, "weights: all-gathered (ZeRO-3/FSDP2 working set)").count(),
              2216458752.0, 1.0);
  const MemoryLedger fp8 =
      ComputeLedger(Resolve(fsdp2 + "fp8: {recipe: torchao_tensorwise, param_gather: true}\n",
                            {"precision.grads=fp32"}),
                    Constants());
  EXPECT_NEAR(ItemBytes(fp8, "weights: all-gathered (ZeRO-3/FSDP2 working set)").count(),
              1886157056.0, 1.0);
  // fsdp_units: root (blocks wrapped, the rest in the root unit, never resharded after
  // forward): embedding + output unit gathered throughout, 2 B x (777,912,320 + 777,917,440)
  // = 3,111,659,520 B, beside two blocks, 2 x 2 B x 330,311,936 = 1,321,247,744 B:
  // 4,432,907,264 B.
  const MemoryLedger root = ComputeLedger(
      Resolve(fsdp2, {"precision.grads=fp32", "sharding.fsdp_units=root"}), Constants());
  EXPECT_NEAR(ItemBytes(root, "weights: all-gathered (ZeRO-3/FSDP2 working set)").count(),
              4432907264.0, 1.0);
}

// Llama-3.1-8B's block (tests/memory/validation/llama-3.1-8b-16l.json, 16 of its 32 blocks):
// hidden 4096, 32 heads x 128, 8 KV heads, MLP 14336, vocab 128,256, untied.
//   GEMM weights: q, o 4096 x 4096 = 16,777,216 each; k, v 4096 x 1024 = 4,194,304 each;
//   MLP 3 x 4096 x 14336 = 176,160,768: 218,103,808; norms 2 x 4096 = 8,192;
//   block 218,112,000 (the 218.1M of the issue); embedding 4096 x 128,256 = 525,336,576;
//   final norm + output 525,340,672.
constexpr double kBlock8b = 218112000.0, kGemm8b = 218103808.0;
constexpr double kEmb8b = 525336576.0, kOut8b = 525340672.0;
constexpr const char* kLlama8 =
    "model: llama-3.1-8b-16l.json\n"
    "cluster: {gpu: H100-SXM, gpus_per_node: 8, nodes: 1}\n"
    "parallel: {tp: 1, pp: 1}\n"
    "batch: {micro_batch: 1, global_batch: 8}\n"
    "sequence: {max_tokens: 4096, packing: true}\n"
    "precision: {params: bf16, grads: fp32}\n";
constexpr const char* kGathered = "weights: all-gathered (ZeRO-3/FSDP2 working set)";
constexpr const char* kUnsharded = "gradients: unsharded, before reduce-scatter";

// (a) torchao's float8 all-gather moves a block's GEMM weights in 1 B instead of 2 B; its
// norms stay bf16. Root units (H200-04's wrapping): the root unit 2 B x (525,336,576 +
// 525,340,672) = 2,101,354,496 B is gathered throughout, beside two blocks:
//   bf16: 2 x 2 B x 218,112,000 = 872,448,000 -> 2,973,802,496 B
//   fp8:  2 x (1 B x 218,103,808 + 2 B x 8,192) = 436,240,384 -> 2,537,594,880 B
// The saving is exactly two blocks' GEMM weights x 1 B = 436,207,616 B.
// (b) The working set is per block, not two of the largest unit (2 x 2 B x 525,340,672 =
// 2,101,362,688 B): as torchtitan wraps it (embedding and output units of their own) the
// largest neighbouring pair is the output unit and the last block, 2 B x (525,340,672 +
// 218,112,000) = 1,486,905,344 B.
// (c) reshard_after_forward: false keeps every unit gathered: 2 B x (16 x 218,112,000 +
// 525,336,576 + 525,340,672) = 9,080,938,496 B.
TEST(Sharding, Fsdp2Llama8bGatheredUnits) {
  const std::string fsdp2 = std::string(kLlama8) + "sharding: {mode: fsdp2, fsdp_units: root}\n";
  const MemoryLedger bf16 = ComputeLedger(Resolve(fsdp2), Constants());
  const MemoryLedger fp8 = ComputeLedger(
      Resolve(fsdp2 + "fp8: {recipe: torchao_tensorwise, param_gather: true}\n"), Constants());
  EXPECT_NEAR(ItemBytes(bf16, kGathered).count(), 2 * (kEmb8b + kOut8b) + 4 * kBlock8b, 1.0);
  EXPECT_NEAR(ItemBytes(bf16, kGathered).count(), 2973802496.0, 1.0);
  EXPECT_NEAR(ItemBytes(fp8, kGathered).count(), 2537594880.0, 1.0);
  EXPECT_NEAR(ItemBytes(bf16, kGathered).count() - ItemBytes(fp8, kGathered).count(), 2 * kGemm8b,
              1.0);
  // The formula names the live units and their sizes.
  EXPECT_NE(ItemFormula(bf16, kGathered).find("4 of 18 units live"), std::string::npos)
      << ItemFormula(bf16, kGathered);
  EXPECT_NE(ItemFormula(bf16, kGathered).find("layer 0 0.44 GB (218,112,000 params x 2 B)"),
            std::string::npos)
      << ItemFormula(bf16, kGathered);
  const MemoryLedger titan =
      ComputeLedger(Resolve(std::string(kLlama8) + "sharding: {mode: fsdp2}\n"), Constants());
  EXPECT_NEAR(ItemBytes(titan, kGathered).count(), 1486905344.0, 1.0);
  const MemoryLedger kept = ComputeLedger(
      Resolve(std::string(kLlama8) + "sharding: {mode: fsdp2, reshard_after_forward: false}\n"),
      Constants());
  EXPECT_NEAR(ItemBytes(kept, kGathered).count(), 9080938496.0, 1.0);
}

// FSDP2's reduce-scatter buffers (post_backward / foreach_reduce): a unit's gradients come
// out of autograd in the param dtype (bf16, 2 B), are copied into a reduce_dtype buffer (fp32,
// 4 B) and freed; that buffer lives until the next unit's post-backward. Per backward step:
// max(previous unit x 4 B + this unit x 2 B, this unit x (2 + 4) B).
//   torchtitan's units: the output unit first, 6 B x 525,340,672 = 3,152,044,032 B.
//   root units: the output layer's gradient waits in bf16 for the root's reduce-scatter after
//     the whole backward: 2 B x 525,340,672 = 1,050,681,344, + a block's 6 B x 218,112,000 =
//     1,308,672,000: 2,359,353,344 B (sized by the largest unit it was 3,152,044,032 B).
//   bf16 reduce (mixed_precision_reduce bf16): the copy is still made, 4 B x 525,340,672 =
//     2,101,362,688 B (it was 2 B x 525,340,672, as if the gradients were reduced in place).
TEST(Sharding, Fsdp2ReduceScatterBuffersPerUnit) {
  const std::string base = std::string(kLlama8) + "sharding: {mode: fsdp2}\n";
  EXPECT_NEAR(ItemBytes(ComputeLedger(Resolve(base), Constants()), kUnsharded).count(),
              3152044032.0, 1.0);
  EXPECT_NEAR(
      ItemBytes(ComputeLedger(Resolve(base, {"sharding.fsdp_units=root"}), Constants()), kUnsharded)
          .count(),
      2359353344.0, 1.0);
  EXPECT_NEAR(
      ItemBytes(ComputeLedger(Resolve(base, {"precision.grads=bf16"}), Constants()), kUnsharded)
          .count(),
      2101362688.0, 1.0);
}

// PyTorch FSDP1 (sharding.runtime fsdp1: FullyShardedDataParallel, as Accelerate with
// fsdp_version 1 and verl's strategy fsdp run it) on the Llama-3.1-8B above, 8 GPUs, bf16
// params, fp32 reduce. Each decoder layer is one FlatParameter; the embedding, final norm and
// output stay in the root FlatParameter, which _post_forward_reshard does not free
// (torch/distributed/fsdp/_runtime_utils.py); limit_all_gathers lets one unit be prefetched.
//   padding at W = 8: 218,112,000 = 8 x 27,264,000 and the root 525,336,576 + 525,340,672 =
//   1,050,677,248 = 8 x 131,334,656: none.
//   gathered: root 2 B x 1,050,677,248 = 2,101,354,496 + 2 blocks 2 x 2 B x 218,112,000 =
//   872,448,000 -> 2,973,802,496 B (FSDP2 as torchtitan wraps it: 1,486,905,344 B, the output
//   unit and the last block; its root wrapping gives the same 2,973,802,496 B), + the prefetched
//   block's bf16 shard (_mp_shard) while its all-gather runs (Fsdp1HoldsItsFp32ShardAndOrigParams
//   below), 2 B x 218,112,000 / 8 = 54,528,000: 3,028,330,496 B.
//   reduce-scatter: the output layer's gradient held in bf16 for the root's reduce-scatter,
//   2 B x 525,340,672 = 1,050,681,344, + a block in flight, its bf16 flat gradient and the fp32
//   cast _post_backward_hook makes, both kept by record_stream until its reduce-scatter is done,
//   6 B x 218,112,000 = 1,308,672,000, + the next block's bf16 gradient 2 B x 218,112,000 =
//   436,224,000: 2,795,577,344 B (FSDP2 torchtitan-wrapped: 3,152,044,032 B, the output unit's
//   own; FSDP2 root-wrapped 2,359,353,344 B: its unit in flight keeps only the fp32 copy).
// verl's strategy fsdp (sharding.mode zero3, its data/frameworks.yaml zero3_runtime fsdp1) gets
// the same units (verl/utils/fsdp_utils.py get_fsdp_wrap_policy: the decoder layers only):
// before, zero3 under verl took DeepSpeed's "(1 computing + 1 prefetched) x largest unit" =
// 2 x 2 B x 525,340,672 = 2,101,362,688 B.
// At W = 56 (7 nodes) both FlatParameters pad: a block 218,112,000 = 56 x 3,894,857 + 8 ->
// 56 x 3,894,858 = 218,112,048 (48 padding); the root 1,050,677,248 = 56 x 18,762,093 + 40 ->
// 1,050,677,264 (16 padding). Gathered 2 B x (1,050,677,264 + 2 x 218,112,048) =
// 2,973,802,720 B, + the prefetched block's shard 2 B x 218,112,048 / 56 = 7,789,716:
// 2,981,592,436 B; reduce-scatter: a block in flight now also holds its padded copy (F.pad),
// 2 B x 218,112,000 + 4 B x 218,112,000 + 4 B x 218,112,048 = 2,181,120,192, + the next
// block's 436,224,000 + the held 1,050,681,344 = 3,668,025,536 B.
TEST(Sharding, Fsdp1Llama8bFlatParametersAgainstFsdp2) {
  EXPECT_DOUBLE_EQ(Fsdp1PaddedNumel(218112000.0, 8), 218112000.0);
  EXPECT_DOUBLE_EQ(Fsdp1PaddedNumel(218112000.0, 56), 218112048.0);
  EXPECT_DOUBLE_EQ(Fsdp1PaddedNumel(1050677248.0, 56), 1050677264.0);
  EXPECT_DOUBLE_EQ(Fsdp1PaddedNumel(7.0, 1), 7.0);

  const std::string fsdp1 = std::string(kLlama8) +
                            "framework: {name: hf-trainer}\n"
                            "sharding: {mode: fsdp2, runtime: fsdp1}\n";
  const Job job1 = Resolve(fsdp1);
  EXPECT_EQ(job1.runtime(), ShardingRuntime::kFsdp1);
  const MemoryLedger one = ComputeLedger(job1, Constants());
  EXPECT_NEAR(ItemBytes(one, kGathered).count(), 3028330496.0, 1.0);
  EXPECT_NEAR(ItemBytes(one, kUnsharded).count(), 2795577344.0, 1.0);
  EXPECT_NE(ItemFormula(one, kGathered).find("kept root FlatParameter"), std::string::npos)
      << ItemFormula(one, kGathered);
  const MemoryLedger two = ComputeLedger(
      Resolve(std::string(kLlama8) +
              "framework: {name: hf-trainer}\nsharding: {mode: fsdp2, fsdp_units: separate}\n"),
      Constants());
  EXPECT_NEAR(ItemBytes(two, kGathered).count(), 1486905344.0, 1.0);
  EXPECT_NEAR(ItemBytes(two, kUnsharded).count(), 3152044032.0, 1.0);

  const MemoryLedger verl = ComputeLedger(
      Resolve(std::string(kLlama8) + "framework: {name: verl}\nsharding: {mode: zero3}\n"),
      Constants());
  EXPECT_NEAR(ItemBytes(verl, kGathered).count(), 3028330496.0, 1.0);

  const MemoryLedger padded =
      ComputeLedger(Resolve(fsdp1, {"cluster.nodes=7", "batch.global_batch=56"}), Constants());
  EXPECT_NEAR(ItemBytes(padded, kGathered).count(), 2981592436.0, 1.0);
  EXPECT_NEAR(ItemBytes(padded, kUnsharded).count(), 3668025536.0, 1.0);
  EXPECT_NE(ItemFormula(padded, kGathered).find("+ 16 padding to a multiple of 56"),
            std::string::npos)
      << ItemFormula(padded, kGathered);
  EXPECT_NE(ItemFormula(padded, kGathered).find("+ 48 padding to a multiple of 56"),
            std::string::npos)
      << ItemFormula(padded, kGathered);
}

// What FSDP1 holds (pytorch/pytorch fe03cf69 torch/distributed/fsdp/_flat_param.py), on the
// Llama-3.1-8B above, bf16 params, fp32 master and reduce, 8 GPUs:
// (a) The persistent state is the FlatParameter's padded local shard, _local_shard, in the dtype
//   the model was loaded in (init_flat_param_attributes), the fp32 master the optimizer steps:
//   no bf16 shard beside it. verl's strategy fsdp (sharding.mode zero3, runtime fsdp1) held
//   bf16 weights + fp32 master weights: P = 16 x 218,112,000 + 2 x 525,336,576 + 4,096 =
//   4,540,469,248 params, / 8 = 567,558,656 a rank: 2 B + 4 B = 3,405,351,936 B; now 4 B x
//   567,558,656 = 2,270,234,624 B and no master item (as under sharding.mode fsdp2).
// (b) The bf16 shard copy _mp_shard is allocated by pre_unshard (_use_low_precision_shard:
//   _alloc_storage(_mp_shard, _local_shard.size())) and freed by post_unshard
//   (_free_low_precision_sharded_param) once the all-gather is issued: not held all run, only
//   while its unit's all-gather runs, the prefetched block's beside the block computing:
//   2 B x 218,112,000 / 8 = 54,528,000 B on the gathered working set (3,028,330,496 B).
// (c) use_orig_params pads the FlatParameter to a multiple of W when it is built
//   (_init_flat_param_and_metadata, align_addresses = use_orig_params), so the gradient has the
//   padded numel and _post_backward_hook's F.pad makes no copy. At W = 56 (a block pads to
//   218,112,048): a block in flight holds its flat gradient 2 B x 218,112,048 + its fp32 cast
//   4 B x 218,112,048 = 1,308,672,288, + the next block's gradient 2 B x 218,112,048 =
//   436,224,096, + the root's output gradient held 2 B x 525,340,672 = 1,050,681,344:
//   2,795,577,728 B, where use_orig_params false also holds the padded fp32 copy: 3,668,025,536
//   B (Fsdp1Llama8bFlatParametersAgainstFsdp2). Gathered is the same either way.
TEST(Sharding, Fsdp1HoldsItsFp32ShardAndOrigParams) {
  auto weights = [](const MemoryLedger& ledger) {
    double sum = 0;
    for (const auto& item : ledger.items) {
      if (item.name.rfind("weights: ", 0) == 0 && item.name != kGathered &&
          item.name != "weights: FP8 copies")
        sum += item.bytes.count();
    }
    return sum;
  };
  const MemoryLedger verl = ComputeLedger(
      Resolve(std::string(kLlama8) + "framework: {name: verl}\nsharding: {mode: zero3}\n"),
      Constants());
  EXPECT_NEAR(weights(verl), 2270234624.0, 1.0);
  EXPECT_NEAR(ItemBytes(verl, "optimizer: master weights (fp32)").count(), 0.0, 1.0);
  EXPECT_NEAR(ItemBytes(verl, kGathered).count(), 3028330496.0, 1.0);
  EXPECT_NE(ItemFormula(verl, kGathered).find("low-precision shard"), std::string::npos)
      << ItemFormula(verl, kGathered);

  const std::string fsdp1 = std::string(kLlama8) +
                            "framework: {name: hf-trainer}\n"
                            "sharding: {mode: fsdp2, runtime: fsdp1, use_orig_params: true}\n";
  const Job orig = Resolve(fsdp1, {"cluster.nodes=7", "batch.global_batch=56"});
  EXPECT_TRUE(orig.spec.sharding.use_orig_params);
  const MemoryLedger padded = ComputeLedger(orig, Constants());
  EXPECT_NEAR(ItemBytes(padded, kUnsharded).count(), 2795577728.0, 1.0);
  EXPECT_NEAR(ItemBytes(padded, kGathered).count(), 2981592436.0, 1.0);
  const MemoryLedger eight = ComputeLedger(Resolve(fsdp1), Constants());
  EXPECT_NEAR(ItemBytes(eight, kUnsharded).count(), 2795577344.0, 1.0);

  // Only the modes FSDP1 runs take it.
  auto bad = ParseJobSpec(std::string(kLlama8) + "sharding: {mode: zero1, use_orig_params: true}\n",
                          testing::TestPath("memory/validation/inline.yaml"), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("use_orig_params"), std::string::npos)
      << bad.error().Format();
}

// The HF Trainer's FSDP2 is accelerate's fsdp2_prepare_model (huggingface/accelerate v1.13.0,
// src/accelerate/utils/fsdp_utils.py): with TRANSFORMER_BASED_WRAP it calls fully_shard on each
// decoder layer ("We skip the model itself, as that one is always wrapped"), then on the whole
// model, so embed_tokens, the final norm and lm_head stay in the root unit, gathered from the
// forward's start to the end of backward: `fsdp_units: root`, not torchtitan's units. For the
// 16-layer Llama-3.1-8B above that is (Fsdp2Llama8bGatheredUnits (a), bf16): root unit
// 2 B x (525,336,576 + 525,340,672) + two blocks 2 x 2 B x 218,112,000 = 2,973,802,496 B, where
// torchtitan's units give 1,486,905,344 B; and the root's output gradient waits
// (Fsdp2ReduceScatterBuffersPerUnit): 2,359,353,344 B. ms-swift's `--fsdp fsdp2` runs the same
// code; torchtitan keeps its own layout; a job that gives fsdp_units keeps it. Before, every
// framework got torchtitan's layout (1,486,905,344 B for the HF Trainer).
TEST(Sharding, Fsdp2UnitsFollowTheFramework) {
  const std::string fsdp2 = std::string(kLlama8) + "sharding: {mode: fsdp2}\n";
  for (const char* name : {"hf-trainer", "ms-swift"}) {
    const Job job = Resolve(fsdp2 + fmt::format("framework: {{name: {}}}\n", name));
    EXPECT_EQ(job.spec.sharding.units, FsdpUnits::kRoot) << name;
    const MemoryLedger ledger = ComputeLedger(job, Constants());
    EXPECT_NEAR(ItemBytes(ledger, kGathered).count(), 2973802496.0, 1.0) << name;
    EXPECT_NEAR(ItemBytes(ledger, kUnsharded).count(), 2359353344.0, 1.0) << name;
  }
  const MemoryLedger titan =
      ComputeLedger(Resolve(fsdp2 + "framework: {name: torchtitan}\n"), Constants());
  EXPECT_NEAR(ItemBytes(titan, kGathered).count(), 1486905344.0, 1.0);
  const MemoryLedger given = ComputeLedger(
      Resolve(fsdp2 + "framework: {name: hf-trainer}\n", {"sharding.fsdp_units=separate"}),
      Constants());
  EXPECT_NEAR(ItemBytes(given, kGathered).count(), 1486905344.0, 1.0);
  // The explanation says whose layout it is.
  const Job hf = Resolve(fsdp2 + "framework: {name: hf-trainer}\n");
  const std::string note = [&] {
    for (const auto& item : ComputeLedger(hf, Constants()).items)
      if (item.name == kGathered) return item.note;
    return std::string();
  }();
  EXPECT_NE(note.find("hf-trainer's fsdp2_units"), std::string::npos) << note;
}

// verl's FSDP2 (volcengine/verl v0.5.0 verl/utils/fsdp_utils.py, apply_fsdp2): fully_shard on
// each decoder layer and, the embeddings being untied, on embed_tokens; then on the model, whose
// root unit keeps the final norm and lm_head gathered from the forward's start to the end of
// backward. Llama-3.1-8B (16 blocks) above, 8 GPUs, bf16 params, fp32 reduce:
//   units in order: embedding 525,336,576 | 16 blocks of 218,112,000 | root 525,340,672
//   gathered: the root 2 B x 525,340,672 = 1,050,681,344, + the largest neighbouring pair of
//     the units gathered and freed in turn, the embedding and layer 0:
//     2 B x (525,336,576 + 218,112,000) = 1,486,897,152 -> 2,537,578,496 B
//     (torchtitan's units 1,486,905,344 B; accelerate's root 2,973,802,496 B).
//   reduce-scatter: the root's lm_head + norm gradient held in bf16 until the root's own
//     reduce-scatter after the backward, 2 B x 525,340,672 = 1,050,681,344, + the embedding's
//     post-backward (last in backward, the largest unit reduced on its own): its bf16 gradient
//     and fp32 copy, 6 B x 525,336,576 = 3,152,019,456 -> 4,202,700,800 B.
// Before, verl took torchtitan's separate units (1,486,905,344 and 3,152,044,032 B).
// Tied (Llama-3.2-1B below), apply_fsdp2 wraps no nn.Embedding: the root holds the embedding,
// norm and output, as accelerate's root does (root and root_output agree).
TEST(Sharding, Fsdp2VerlWrapsTheEmbeddingAndKeepsTheOutputInTheRoot) {
  const std::string fsdp2 =
      std::string(kLlama8) + "framework: {name: verl}\nsharding: {mode: fsdp2}\n";
  const Job job = Resolve(fsdp2);
  EXPECT_EQ(job.spec.sharding.units, FsdpUnits::kRootOutput);
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  EXPECT_NEAR(ItemBytes(ledger, kGathered).count(), 2 * kOut8b + 2 * (kEmb8b + kBlock8b), 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kGathered).count(), 2537578496.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kUnsharded).count(), 2 * kOut8b + 6 * kEmb8b, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kUnsharded).count(), 4202700800.0, 1.0);
  EXPECT_NE(ItemFormula(ledger, kGathered).find("3 of 18 units live"), std::string::npos)
      << ItemFormula(ledger, kGathered);

  const std::string tied =
      "model: llama-3.2-1b.json\n"
      "cluster: {gpu: H100-SXM, gpus_per_node: 8, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 8}\n"
      "sequence: {max_tokens: 4096, packing: true}\n"
      "precision: {params: bf16, grads: fp32}\n"
      "sharding: {mode: fsdp2}\n";
  const MemoryLedger verl_tied =
      ComputeLedger(Resolve(tied + "framework: {name: verl}\n"), Constants());
  const MemoryLedger root_tied =
      ComputeLedger(Resolve(tied, {"sharding.fsdp_units=root"}), Constants());
  EXPECT_NEAR(ItemBytes(verl_tied, kGathered).count(), 768626688.0, 1.0);
  EXPECT_NEAR(ItemBytes(verl_tied, kGathered).count(), ItemBytes(root_tied, kGathered).count(),
              1.0);
  EXPECT_NEAR(ItemBytes(verl_tied, kUnsharded).count(), 890269696.0, 1.0);
}

// Tied embeddings (tests/memory/validation/llama-3.2-1b.json: hidden 2048, 32 heads x 64, 8 KV
// heads, MLP 8192, vocab 128,256, 16 blocks): torchtitan wraps the embedding, final norm and
// output as one unit resharded only under the "always" policy (apply_fsdp_to_decoder), so it
// is gathered from forward to backward beside two blocks.
//   block: q, o 2048 x 2048 = 4,194,304 each, k, v 2048 x 512 = 1,048,576 each, MLP
//   3 x 2048 x 8192 = 50,331,648, norms 4,096: 60,821,504; embedding 262,668,288; norm 2,048
//   gathered: 2 B x (262,668,288 + 2,048) + 2 x 2 B x 60,821,504 = 768,626,688 B
//     (as separate units it was embedding + layer 0, 2 B x 323,489,792 = 646,979,584 B)
//   reduce-scatter: the tied weight's and the norm's gradients held in bf16, 2 B x
//     262,670,336 = 525,340,672, + a block 6 B x 60,821,504 = 364,929,024: 890,269,696 B
TEST(Sharding, Fsdp2TiedUnitStaysGathered) {
  const Job job = Resolve(
      "model: llama-3.2-1b.json\n"
      "cluster: {gpu: H100-SXM, gpus_per_node: 8, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 8}\n"
      "sequence: {max_tokens: 4096, packing: true}\n"
      "precision: {params: bf16, grads: fp32}\n"
      "sharding: {mode: fsdp2}\n");
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  EXPECT_NEAR(ItemBytes(ledger, kGathered).count(), 768626688.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, kUnsharded).count(), 890269696.0, 1.0);
}

TEST(Sharding, OffloadMovesStatesToTheHost) {
  const Job job = Resolve(std::string(kDense8) +
                          "sharding: {mode: zero3, offload_optimizer: cpu, offload_param: cpu}\n");
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  EXPECT_EQ(ItemBytes(ledger, "optimizer: Adam moments (fp32)").count(), 0.0);
  EXPECT_EQ(ItemBytes(ledger, "weights: embedding").count(), 0.0);
  // Host: weights 2 + gradients 2 + master 4 + moments 8 + step copy of the bf16 gradient
  // shard in fp32 4 = 20 B x P / 8 = 36,920,768,000 B.
  Bytes host;
  for (const auto& item : ledger.host_items) host += item.bytes;
  EXPECT_NEAR(host.count(), 20 * kP / 8, 2.0);
}

TEST(Sharding, Zero3ReleasesMemoryAgainstZero1) {
  // Property: sharding more never raises the steady peak of the same job.
  const MemoryConstants c = Constants();
  double previous = 1e300;
  for (const char* mode : {"none", "zero1", "zero2", "zero3"}) {
    const Job job = Resolve(std::string(kDense8) + "sharding: {mode: " + mode + "}\n");
    const double peak = ComputeLedger(job, c).peak_after_step1.count();
    EXPECT_LT(peak, previous) << mode;
    previous = peak;
  }
}

TEST(Optimizer, MuonAndEightBitAdamStates) {
  const MemoryConstants c = Constants();
  // Muon, fp32 momentum: 4 B on the matrices, 8 B on embedding, output layer and norms.
  //   AdamW share = (2 x 777,912,320 + 40 x 10,240 + 5,120) / P = 1,556,239,360 / P.
  //   bytes = 4 x (P + 1,556,239,360) / 8 = 8,162,273,280 B (zero1 over DP 8).
  const Job muon = Resolve(std::string(kDense8) + "optimizer: {name: muon}\n");
  const MemoryLedger a = ComputeLedger(muon, c);
  Bytes moments;
  for (const auto& item : a.items) {
    if (item.name.starts_with("optimizer: Muon")) moments = item.bytes;
  }
  EXPECT_NEAR(moments.count(), 4 * (kP + 1556239360.0) / 8, 2.0);
  // 8-bit Adam: 2 x (1 + 4/2048) B x P / 8 = 3,699,287,417 B.
  const Job adam8 = Resolve(std::string(kDense8) + "optimizer: {name: adam8bit}\n");
  const MemoryLedger b = ComputeLedger(adam8, c);
  EXPECT_NEAR(ItemBytes(b, "optimizer: 8-bit Adam moments (uint8, block-wise scales)").count(),
              2 * (1 + 4.0 / 2048) * kP / 8, 2.0);
}

// MS-05's configuration: Qwen3-14B, TP 4, blockwise FP8 with fp8 param gather.
//   GEMM weights per GPU: 40 x (62,914,816 + 267,386,880) / 4 = 3,303,016,960
//   (the q/k norms, 256 per layer, sit with attention and are counted with it).
TEST(Fp8, BlockwiseParamGatherKeepsTheTransposeOnly) {
  const Job job = Resolve(
      "model: qwen3-14b.json\n"
      "cluster: {gpu: H20, gpus_per_node: 8, nodes: 1}\n"
      "parallel: {tp: 4, sequence_parallel: true}\n"
      "batch: {micro_batch: 1, global_batch: 16}\n"
      "sequence: {max_tokens: 8192, packing: true}\n"
      "fp8: {recipe: blockwise, param_gather: true}\n");
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  // Primary weights in FP8: attention 1 B x 40 x 62,914,816 / 4 = 629,148,160 B.
  EXPECT_NEAR(ItemBytes(ledger, "weights: attention").count(), 629148160.0, 1.0);
  // Copies: transposed FP8 (1 B) + one fp32 scale per 128x128 block on each of the two
  // layouts: (1 + 2 x 4 / 16384) B x 3,303,016,960 = 3,304,629,761 B.
  EXPECT_NEAR(ItemBytes(ledger, "weights: FP8 copies").count(), 3303016960.0 * (1 + 8.0 / 16384),
              2.0);
  // The embedding and the output layer stay bf16. At TP 4 the vocabulary is padded to a
  // multiple of 512: 151,936 -> 152,064; 2 B x 5120 x 152,064 / 4 = 389,283,840 B.
  EXPECT_NEAR(ItemBytes(ledger, "weights: head").count(), 389283840.0, 1.0);
}

TEST(Fp8, DelayedWithoutParamGatherAddsTwoBytesPerGemmWeight) {
  const Job job = Resolve(std::string(kDense8) + "fp8: {recipe: delayed}\n");
  const MemoryLedger ledger = ComputeLedger(job, Constants());
  // TP 1: 40 x 330,301,696 = 13,212,067,840 GEMM weights x 2 B (rowwise + transposed).
  EXPECT_NEAR(ItemBytes(ledger, "weights: FP8 copies").count(), 2 * 13212067840.0, 1.0);
  EXPECT_NEAR(ItemBytes(ledger, "weights: attention").count(), 2 * 40 * 62914816.0, 1.0);
}

TEST(Fp8, TorchaoKeepsNoCopies) {
  EXPECT_EQ(Fp8CopyBytesPerWeight({Fp8Recipe::kTorchaoTensorwise, false, 1}), 0.0);
  // MXFP8: two layouts of 1 B + 1/32 B scale: 2.0625 B.
  EXPECT_DOUBLE_EQ(Fp8CopyBytesPerWeight({Fp8Recipe::kMxfp8, false, 1}), 2.0625);
}

}  // namespace
}  // namespace strata::sharding_test

// The memory ledger of adapter jobs (LoRA, QLoRA) against hand-derived bytes for the example
// job data/jobs/llama-3.1-8b-qlora-h200x1.yaml (Llama-3.1-8B: hidden 4096, 8 KV heads of 128,
// intermediate 14336, vocabulary 128256, 32 layers, untied output layer).
#include <gtest/gtest.h>

#include "memory_test_support.h"
#include "strata/memory/activations.h"
#include "strata/memory/static_memory.h"

namespace strata {
namespace {

Job AdapterJob(const std::vector<std::string>& sets = {}) {
  auto spec = LoadJobSpec("llama-3.1-8b-qlora-h200x1", sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

TEST(AdapterMemory, QloraBaseInNf4AndAdaptersInFp32) {
  const Job job = AdapterJob();
  const MemoryLedger ledger = ComputeLedger(job, testing::Constants());
  // Attention: 32 x 4096 x (4096 + 1024 + 1024 + 4096) = 1,342,177,280 weights; NF4 with
  // double quantisation is 4.126953125 bits = 0.515869140625 B: 692,387,840 B.
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "weights: attention").count(), 692'387'840.0);
  // Dense MLP: 32 x 3 x 4096 x 14336 = 5,637,144,576 weights x 0.515869140625 B = 2,908,028,928 B.
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "weights: dense_mlp").count(), 2'908'028'928.0);
  // The embedding stays bf16: 128256 x 4096 x 2 B = 1,050,673,152 B.
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "weights: embedding").count(), 1'050'673'152.0);
  // Adapters, r=16 on every linear layer: 41,943,040 parameters (tests/model/adapter_test.cc),
  // kept in fp32: 167,772,160 B; their fp32 gradients the same; Adam's two fp32 moments twice
  // that; no separate master copy.
  EXPECT_DOUBLE_EQ(
      testing::ItemBytes(ledger, "weights: adapters (qlora r=16 on all-linear)").count(),
      167'772'160.0);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "gradient buffer (fp32)").count(), 167'772'160.0);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "optimizer: Adam moments (fp32)").count(),
                   335'544'320.0);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "optimizer: master weights (fp32)").count(), 0.0);
}

TEST(AdapterMemory, LoraKeepsTheBaseInBf16WithoutState) {
  const Job job = AdapterJob({"adapter.kind=lora"});
  const MemoryLedger ledger = ComputeLedger(job, testing::Constants());
  // 1,342,177,280 attention weights x 2 B.
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "weights: attention").count(), 2'684'354'560.0);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "gradient buffer (fp32)").count(), 167'772'160.0);
}

TEST(AdapterMemory, DropoutKeepsTheDroppedInputAndItsMask) {
  // Without recompute, per token and layer: dropout on all seven matrices adds a bf16 copy of
  // each input and a 1-byte mask, 3 B x sum(d_in): q, k, v, o 4 x 4096, gate and up 2 x 4096,
  // down 14336: 3 x 38912 = 116,736 B.
  const Job with = AdapterJob({"recompute.granularity=none"});
  const Job without = AdapterJob({"recompute.granularity=none", "adapter.dropout=0"});
  const MemoryConstants c = testing::Constants();
  const LayerSpec& layer = with.model.layers[0];
  EXPECT_DOUBLE_EQ(LayerActivationsPerToken(with, c, layer).saved -
                       LayerActivationsPerToken(without, c, layer).saved,
                   116'736.0);
}

// LoRA under megatron-core: Megatron-SWIFT's Qwen3-30B-A3B script (modelscope/ms-swift@3602360
// examples/train/cached_dataset/mcore.sh: 4 GPUs, EP 4, lora_rank 32 on all-linear, distributed
// optimizer). PEFT makes the adapters in fp32, then megatron-core's Float16Module casts the whole
// model to bf16 (module.bfloat16()), and the distributed optimizer keeps fp32 master shards of
// them as of any bf16 parameter. By hand (Qwen3-30B-A3B: hidden 2048, 32 query / 4 KV heads of
// 128, 128 experts of intermediate 768, 48 layers):
//   attention adapters per layer: linear_qkv 32 x (2048 + 5120) + linear_proj 32 x (4096 + 2048)
//     = 229,376 + 196,608 = 425,984; x 48 = 20,447,232 (dense, DP 4)
//   expert adapters per expert and layer: linear_fc1 32 x (2048 + 1536) + linear_fc2
//     32 x (768 + 2048) = 114,688 + 90,112 = 204,800; x 32 local experts (128 / EP 4) x 48
//     = 314,572,800 (expert-DP 4 / EP 4 = 1)
//   weights: 2 B x (20,447,232 + 314,572,800) = 670,040,064 B (PEFT's fp32 would be twice that)
//   master weights: 4 B x (20,447,232 / 4 + 314,572,800 / 1) = 4 x 319,684,608 = 1,278,738,432 B
//   moments: 8 B x 319,684,608 = 2,557,476,864 B; gradients: 4 B x 335,020,032 = 1,340,080,128 B
TEST(AdapterMemory, MegatronCoreCastsAdaptersToBf16WithFp32MasterShards) {
  const std::string text =
      "model: qwen3-30b-a3b\n"
      "cluster: {gpu: A800, gpus_per_node: 4, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1, ep: 4}\n"
      "batch: {micro_batch: 1, global_batch: 16}\n"
      "sequence: {max_tokens: 8192, packing: true}\n"
      "recompute: {granularity: full, method: uniform, num_layers: 1}\n"
      "precision: {params: bf16, grads: fp32}\n"
      "optimizer: {distributed: true, moments: fp32}\n"
      "framework: {name: ms-swift}\n"
      "adapter: {kind: lora, rank: 32, alpha: 64, targets: [all-linear]}\n";
  auto spec = ParseJobSpec(text, "megatron_lora.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  const MemoryLedger ledger = ComputeLedger(*job, testing::Constants());
  const std::string adapters =
      "weights: adapters (lora r=32 on linear_qkv, linear_proj, linear_fc1, linear_fc2)";
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, adapters).count(), 670'040'064.0);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "optimizer: master weights (fp32)").count(),
                   1'278'738'432.0);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "optimizer: Adam moments (fp32)").count(),
                   2'557'476'864.0);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "gradient buffer (fp32)").count(), 1'340'080'128.0);
}

}  // namespace
}  // namespace strata

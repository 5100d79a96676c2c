// The GEMM inputs Transformer Engine keeps in FP8 under megatron-core's TE layers
// (data/memory_overheads.yaml, te_fp8_activations), per layer and per token, by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/activations.h"
#include "support/golden.h"

namespace strata::te_fp8_activations_test {
namespace {

Job FixtureJob(const std::string& fixture, const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec(testing::TestPath("fixtures/plan/" + fixture), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

LayerActivationBytes FirstLayer(const std::string& fixture, const std::vector<std::string>& sets) {
  const Job job = FixtureJob(fixture, sets);
  return LayerActivationsPerToken(job, testing::Constants(), job.model.layers[0]);
}

constexpr const char* kLlama = "mb-405b-h100x1024.yaml";
constexpr const char* kQwen = "mb-qwen3-235b-h100x256.yaml";

// Llama-3.1-405B, one dense layer on a rank of Megatron-Bridge's H100 layout (TP8 with sequence
// parallelism, no recompute; hidden h 16,384, 128 query heads and 8 KV heads of 128, FFN f
// 53,248), bytes per token:
//   bf16: the two norms' inputs and outputs 4h / SP 8 = 8,192 values; q, k, v, the attention
//   output (2 x 16,384 + 2 x 1,024) and gate+up, the SwiGLU output (3f) / TP 8 = 24,320 values;
//   x 2 B = 65,024 B, + 128 heads x 4 B of log-sum-exp / 8 = 64 B -> 65,088 B.
//   TE FP8 (NVIDIA/TransformerEngine@70f536662 (v2.9) pytorch/module/layernorm_linear.py:405-414
//   keeps the fused norm's FP8 output, linear.py:377-390 linear_fc2's FP8 input): the two norm
//   outputs 2h / 8 = 4,096 values and the SwiGLU output f / 8 = 6,656 values at 1 B instead of 2:
//   65,088 - 10,752 = 54,336 B, of which 10,752 B FP8. Tensorwise (Float8CurrentScaling) keeps one
//   scale per tensor; linear_proj keeps the bf16 attention output (NVIDIA/Megatron-LM core_v0.14.0
//   attention.py:197-208, set_save_original_input when fp8_recipe != 'delayed'; megatron-core
//   0.16 here).
TEST(TeFp8Activations, DenseLayerKeepsNormOutputsAndFc2InputInFp8) {
  const LayerActivationBytes bf16 = FirstLayer(kLlama, {"fp8.recipe=none"});
  EXPECT_DOUBLE_EQ(bf16.saved, 65088.0);
  EXPECT_DOUBLE_EQ(bf16.te_fp8, 0.0);
  const LayerActivationBytes fp8 = FirstLayer(kLlama, {});  // the fixture's tensorwise
  EXPECT_DOUBLE_EQ(fp8.te_fp8, 10752.0);
  EXPECT_DOUBLE_EQ(fp8.saved, 54336.0);
}

// Delayed scaling: megatron-core leaves linear_proj saving its FP8 copy of the attention output
// beside the bf16 one flash attention keeps (attention.py:197-208 excludes 'delayed'): + q / TP
// = 16,384 / 8 = 2,048 B -> 56,384 B. The same before megatron-core 0.14 under any recipe.
// Blockwise (1x128 blocks, fp32 scales: 4 / 128 B a value) and MXFP8 (one E8M0 byte per 32):
// 10,752 x 1.03125 = 11,088 B -> 54,672 B.
TEST(TeFp8Activations, DelayedScalingKeepsAnFp8CopyOfTheAttentionOutput) {
  EXPECT_DOUBLE_EQ(FirstLayer(kLlama, {"fp8.recipe=delayed"}).saved, 56384.0);
  EXPECT_DOUBLE_EQ(FirstLayer(kLlama, {"fp8.recipe=delayed"}).te_fp8, 12800.0);
  EXPECT_DOUBLE_EQ(
      FirstLayer(kLlama, {"framework.name=megatron-core", "framework.version=0.13"}).saved,
      56384.0);
  EXPECT_DOUBLE_EQ(FirstLayer(kLlama, {"fp8.recipe=blockwise"}).saved, 54672.0);
  EXPECT_DOUBLE_EQ(FirstLayer(kLlama, {"fp8.recipe=mxfp8"}).saved, 54672.0);
}

// Qwen3-235B-A22B, one MoE layer (TP2 with SP, EP32, ETP 1, balanced routing; h 4,096, 64 query
// heads and 4 KV heads of 128 with QK norm, 128 experts, top-8, expert FFN f 1,536):
//   bf16: replicated (over SP 2): the two norms 4h = 16,384, 8 routed copies of the expert input
//   and output (2h) and of fc1's output and the SwiGLU output (3f): 8 x 12,800 = 102,400;
//   118,784 / 2 x 2 B = 118,784 B; sharded (over TP 2): q, k, v, the attention output 17,408 and
//   q, k before their norms 8,704: 26,112 / 2 x 2 B = 26,112 B; fp32: router logits 128 x 4 / 2 =
//   256 B and log-sum-exp 64 x 4 / 2 = 128 B -> 145,280 B.
//   TE FP8: the attention norm's output h (linear_qkv's input) and, per routed copy, the expert
//   input h and the SwiGLU output f (GroupedLinear's fc1 and fc2 inputs, grouped_linear.py:
//   197-204): 4,096 + 8 x 5,632 = 49,152 values / 2 at 1 B instead of 2: 145,280 - 24,576 =
//   120,704 B. The MoE layer's own norm output stays bf16: the router keeps it.
TEST(TeFp8Activations, MoeLayerKeepsExpertInputsInFp8) {
  const LayerActivationBytes bf16 = FirstLayer(kQwen, {"fp8.recipe=none"});
  EXPECT_DOUBLE_EQ(bf16.saved, 145280.0);
  const LayerActivationBytes fp8 = FirstLayer(kQwen, {});
  EXPECT_DOUBLE_EQ(fp8.te_fp8, 24576.0);
  EXPECT_DOUBLE_EQ(fp8.saved, 120704.0);
}

// torchao's Float8Linear (torchtitan's float8) keeps the high-precision input
// (pytorch/ao torchao/float8/float8_linear.py, matmul_with_hp_or_float8_args.forward:
// ctx.save_for_backward(input_hp, weight_hp_t)): nothing changes. A TE recipe outside
// megatron-core's layers is not modelled either.
TEST(TeFp8Activations, TorchaoAndNonMegatronEnginesKeepBf16) {
  const auto layer = [](const std::vector<std::string>& sets) {
    auto spec =
        LoadJobSpec(testing::TestPath("golden/cli_memory/torchtitan_eager_8b/job.yaml"), sets);
    EXPECT_TRUE(spec.ok()) << spec.error().Format();
    auto job = ResolveJob(*spec);
    EXPECT_TRUE(job.ok()) << job.error().Format();
    return LayerActivationsPerToken(*job, testing::Constants(), job->model.layers[0]);
  };
  const double bf16 = layer({}).saved;
  EXPECT_DOUBLE_EQ(layer({"fp8.recipe=torchao_tensorwise"}).saved, bf16);
  EXPECT_DOUBLE_EQ(layer({"fp8.recipe=torchao_rowwise"}).saved, bf16);
  EXPECT_DOUBLE_EQ(layer({"fp8.recipe=torchao_tensorwise"}).te_fp8, 0.0);
}

// The whole job: every layer of a stage saves the same bytes per token, so the stored
// activations of the most loaded stage scale by the per-token ratio, 54,336 / 65,088
// (Llama) and 120,704 / 145,280 (Qwen3), and --explain names the FP8 tensors.
TEST(TeFp8Activations, PublishedH100Fp8LayoutsStoreTheRatioOfThePerTokenBytes) {
  const MemoryConstants constants = testing::Constants();
  for (const auto& [fixture, ratio] :
       {std::pair{kLlama, 54336.0 / 65088.0}, std::pair{kQwen, 120704.0 / 145280.0}}) {
    SCOPED_TRACE(fixture);
    const Job fp8 = FixtureJob(fixture, {});
    const Job bf16 = FixtureJob(fixture, {"fp8.recipe=none"});
    const MemoryLedger ledger = ComputeLedger(fp8, constants);
    const ActivationMemory a = ComputeActivations(fp8, constants, ledger.stage);
    const ActivationMemory b = ComputeActivations(bf16, constants, ledger.stage);
    EXPECT_NEAR(a.stored.count() / b.stored.count(), ratio, 1e-9);
    bool named = false;
    for (const LedgerItem& item : a.items) {
      named |=
          item.note.find(
              "Transformer Engine FP8 (tensorwise) keeps GEMM inputs quantized "
              "at 1 B a value") != std::string::npos &&
          item.note.find("linear_proj keeps the attention output in bf16") != std::string::npos;
    }
    EXPECT_TRUE(named);
  }
}

}  // namespace
}  // namespace strata::te_fp8_activations_test

// Adapter shapes and counts (model/adapter.h) against numbers derived by hand from the
// published Llama-3.1-8B config: hidden 4096, 32 heads of 128, 8 KV heads (1024 wide),
// intermediate 14336, 32 layers.
#include "strata/model/adapter.h"

#include <gtest/gtest.h>

#include "strata/model/model_config.h"

namespace strata {
namespace {

ModelConfig Llama8b() {
  auto model = LoadModelConfig("llama-3.1-8b");
  EXPECT_TRUE(model.ok()) << model.error().Format();
  return *model;
}

AdapterSpec Lora(AdapterKind kind, int64_t rank, std::vector<std::string> targets,
                 double dropout = 0) {
  AdapterSpec a;
  a.kind = kind;
  a.rank = rank;
  a.alpha = 2.0 * static_cast<double>(rank);
  a.targets = std::move(targets);
  a.dropout = dropout;
  return a;
}

int64_t ModelAdapterParams(const ModelConfig& m, const AdapterSpec& a) {
  int64_t total = 0;
  for (const LayerSpec& layer : m.layers) total += AdapterCostOfLayer(m, a, layer).params;
  return total;
}

TEST(Adapter, ParameterCountsOfLlama8b) {
  const ModelConfig m = Llama8b();
  struct Case {
    const char* name;
    AdapterSpec adapter;
    int64_t params;
  };
  const Case cases[] = {
      // 32 layers x 16 x ((4096+4096) + (4096+1024) + (4096+1024) + (4096+4096))
      // = 32 x 16 x 26624 = 13,631,488: what PEFT's print_trainable_parameters() prints for
      // Llama-3-8B with r=16 on q, k, v, o.
      {"r16 qkvo", Lora(AdapterKind::kLora, 16, {"q_proj", "k_proj", "v_proj", "o_proj"}),
       13'631'488},
      // + gate and up (4096+14336) and down (14336+4096): 3 x 18432 = 55296 per layer;
      // 32 x 16 x (26624 + 55296) = 41,943,040.
      {"r16 all-linear", Lora(AdapterKind::kQlora, 16, {"all-linear"}), 41'943'040},
      // r=8 on q and v only (PEFT's default targets for Llama): 32 x 8 x (8192 + 5120) = 3,407,872.
      {"r8 qv", Lora(AdapterKind::kLora, 8, {"q_proj", "v_proj"}), 3'407'872},
      // DoRA adds a magnitude per output feature: 32 x (4096 + 1024 + 1024 + 4096) = 327,680.
      {"dora r16 qkvo", Lora(AdapterKind::kDora, 16, {"q_proj", "k_proj", "v_proj", "o_proj"}),
       13'631'488 + 327'680},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ModelAdapterParams(m, c.adapter), c.params) << c.name;
  }
}

TEST(Adapter, SavedTensorsAndFlopPerLayer) {
  const ModelConfig m = Llama8b();
  const LayerSpec& layer = m.layers[0];
  // r16 on q, k, v, o without dropout: A x of each, 4 x 16 = 64 elements per token.
  const AdapterLayerCost plain = AdapterCostOfLayer(
      m, Lora(AdapterKind::kLora, 16, {"q_proj", "k_proj", "v_proj", "o_proj"}), layer);
  EXPECT_DOUBLE_EQ(plain.saved_elements_per_token, 64.0);
  EXPECT_DOUBLE_EQ(plain.mask_bytes_per_token, 0.0);
  // Forward FLOP per token: 2 x 16 x 26624 = 851,968.
  EXPECT_DOUBLE_EQ(plain.flop_per_token, 851'968.0);
  EXPECT_DOUBLE_EQ(plain.flop_per_forward, 0.0);
  // With dropout each matrix keeps the dropped copy of its input and a 1-byte mask:
  // d_in = 4096 (q, k, v) + 4096 (o) x 1 = 16384 elements and bytes more.
  const AdapterLayerCost dropped = AdapterCostOfLayer(
      m, Lora(AdapterKind::kLora, 16, {"q_proj", "k_proj", "v_proj", "o_proj"}, 0.05), layer);
  EXPECT_DOUBLE_EQ(dropped.saved_elements_per_token, 64.0 + 16384.0);
  EXPECT_DOUBLE_EQ(dropped.mask_bytes_per_token, 16384.0);
  // DoRA forms B A for each matrix once per forward: 2 x 16 x (4096x4096 + 4096x1024 x 2 +
  // 4096x4096) = 32 x 41,943,040 = 1,342,177,280 FLOP.
  const AdapterLayerCost dora = AdapterCostOfLayer(
      m, Lora(AdapterKind::kDora, 16, {"q_proj", "k_proj", "v_proj", "o_proj"}), layer);
  EXPECT_DOUBLE_EQ(dora.flop_per_forward, 1'342'177'280.0);
}

TEST(Adapter, Nf4WithDoubleQuantisation) {
  // QLoRA section 2: 4 bits + 8/64 (fp8 absmax per 64 weights) + 32/(64 x 256) (fp32 constant
  // per 256 absmax values) = 4 + 0.125 + 0.001953125 = 4.126953125 bits.
  EXPECT_DOUBLE_EQ(Nf4BitsPerWeight(), 4.126953125);
}

TEST(Adapter, NoAdapterCostsNothing) {
  const ModelConfig m = Llama8b();
  AdapterSpec none;
  none.targets = {"all-linear"};
  none.rank = 16;
  EXPECT_EQ(AdapterCostOfLayer(m, none, m.layers[0]).params, 0);
}

// megatron-core fuses q, k and v into linear_qkv and gate and up into linear_fc1; Megatron-SWIFT
// puts one adapter on each fused linear (one A over the shared input). At r 8 on one layer:
//   linear_qkv  8 x (4096 + 4096 + 2 x 1024)   =  81,920
//   linear_proj 8 x (4096 + 4096)              =  65,536
//   linear_fc1  8 x (4096 + 2 x 14336)         = 262,144
//   linear_fc2  8 x (14336 + 4096)             = 147,456   total 557,056
// against PEFT's seven separate matrices, 655,360: three A's of 8 x 4096 fewer (k, v, up).
// With dropout each fused linear keeps one dropped copy of its input: 4096 x 3 + 14336 = 26,624
// elements a token, not the seven matrices' 38,912.
TEST(Adapter, MegatronFusedLinearsCarryOneAdapterEach) {
  const ModelConfig m = Llama8b();
  const LayerSpec& layer = m.layers[0];
  const std::vector<std::string> fused = {"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"};
  const AdapterLayerCost f = AdapterCostOfLayer(m, Lora(AdapterKind::kLora, 8, fused, 0.05), layer);
  EXPECT_EQ(f.params, 557'056);
  EXPECT_DOUBLE_EQ(f.saved_elements_per_token, 4 * 8 + 26'624.0);
  const AdapterLayerCost all =
      AdapterCostOfLayer(m, Lora(AdapterKind::kLora, 8, {"all-linear"}, 0.05), layer);
  EXPECT_EQ(all.params, 655'360);
  EXPECT_DOUBLE_EQ(all.saved_elements_per_token, 7 * 8 + 38'912.0);
  // The same FLOP either way: 2 r (d_in + d_out) summed over the matrices is 2 x params.
  EXPECT_DOUBLE_EQ(f.flop_per_token, 2.0 * 557'056);
  EXPECT_EQ(FusedTargetOf("k_proj"), "linear_qkv");
  EXPECT_EQ(FusedTargetOf("up_proj"), "linear_fc1");
  EXPECT_EQ(FusedTargetOf("linear_qkv"), "");
}

}  // namespace
}  // namespace strata

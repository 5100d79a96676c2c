// Adapter shapes and counts (model/adapter.h) against numbers derived by hand from the
// published Llama-3.1-8B config: hidden 4096, 32 heads of 128, 8 KV heads (1024 wide),
// intermediate 14336, 32 layers.
#include "strata/model/adapter.h"

#include <gtest/gtest.h>

#include "strata/model/model_config.h"

namespace strata::adapter_test {
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

// Qwen3-30B-A3B (data/models/qwen3-30b-a3b.json): 48 layers, hidden 2048, 32 q heads x 128 =
// 4096, 4 KV heads x 128 = 512, every layer MoE with 128 experts of width 768, top 8, no shared
// expert. all-linear at r 32, by hand:
// megatron-core (ms-swift's all-linear: linear_qkv, linear_proj, linear_fc1, linear_fc2; the
// TopKRouter only with all-router), one A and B per expert on the grouped linears:
//   linear_qkv  32 x (2048 + 4096 + 2 x 512)       =    229,376
//   linear_proj 32 x (4096 + 2048)                 =    196,608
//   linear_fc1  128 x 32 x (2048 + 2 x 768)        = 14,680,064
//   linear_fc2  128 x 32 x (768 + 2048)            = 11,534,336
//   a layer: 26,640,384; 48 layers: 1,278,738,432, of which routed 48 x 26,214,400 =
//   1,258,291,200.
// PEFT on transformers 4.x (every nn.Linear: q, k, v, o; each expert's gate, up and down; the
// router `gate`):
//   q 32 x (2048 + 4096) = 196,608; k and v 32 x (2048 + 512) = 81,920 each; o 196,608
//   experts 128 x 3 x 32 x (2048 + 768) = 34,603,008; router 32 x (2048 + 128) = 69,632
//   a layer: 35,229,696; 48 layers: 1,691,025,408.
// A token passes top 8 experts: routed FLOP per token and layer 8 x 2 x 32 x ((2048 + 1536) +
// (768 + 2048)) = 3,276,800 (megatron); saved A x per token 2 x 32 (attention) + 8 x 2 x 32.
TEST(Adapter, AllLinearOnQwen3MoeExperts) {
  auto loaded = LoadModelConfig("qwen3-30b-a3b");
  ASSERT_TRUE(loaded.ok()) << loaded.error().Format();
  const ModelConfig& m = *loaded;
  const AdapterSpec megatron = Lora(AdapterKind::kLora, 32, MegatronAllLinear(m));
  EXPECT_EQ(MegatronAllLinear(m),
            (std::vector<std::string>{"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"}));
  const AdapterLayerCost layer = AdapterCostOfLayer(m, megatron, m.layers[0]);
  EXPECT_EQ(layer.params, 26'640'384);
  EXPECT_EQ(layer.routed_params, 26'214'400);
  EXPECT_DOUBLE_EQ(layer.routed_flop_per_token, 3'276'800.0);
  EXPECT_DOUBLE_EQ(layer.flop_per_token, 3'276'800.0 + 2.0 * (229'376 + 196'608));
  EXPECT_DOUBLE_EQ(layer.saved_elements_per_token, 2 * 32 + 8 * 2 * 32.0);
  EXPECT_DOUBLE_EQ(layer.routed_saved_elements_per_token, 8 * 2 * 32.0);
  const AdapterCoverage cov = CoverageOf(m, megatron);
  EXPECT_EQ(cov.params, 1'278'738'432);
  EXPECT_EQ(cov.routed_params, 1'258'291'200);
  EXPECT_EQ(cov.matrices,
            (std::vector<std::string>{
                "linear_qkv 2048->5120 on 48 layers", "linear_proj 4096->2048 on 48 layers",
                "linear_fc1 2048->1536 x 128 routed experts (8 a token) on 48 layers",
                "linear_fc2 768->2048 x 128 routed experts (8 a token) on 48 layers"}));
  EXPECT_EQ(ModelAdapterParams(m, Lora(AdapterKind::kLora, 32, {"all-linear"})), 1'691'025'408);
  // all-router adds megatron-core's TopKRouter, h -> E: 48 x 32 x (2048 + 128) = 3,342,336.
  AdapterSpec router = megatron;
  router.targets.emplace_back("router");
  EXPECT_EQ(ModelAdapterParams(m, router), 1'278'738'432 + 3'342'336);
}

// Qwen3-Next-80B-A3B (data/models/qwen3-next-80b-a3b.json, the published config): hidden 2048;
// Gated DeltaNet with 16 key heads and 32 value heads of 128 (key_dim 2048, value_dim 4096);
// MoE of 512 experts of width 512, top 10, one shared expert of 512 with a gate. Layer 0 is a
// Gated DeltaNet layer. At r 8:
//   in_proj_qkvz 8 x (2048 + 2 x 2048 + 2 x 4096) = 114,688
//   in_proj_ba   8 x (2048 + 2 x 32)              =  16,896
//   out_proj     8 x (4096 + 2048)                =  49,152   GDN: 180,736
// megatron-core's all-linear adds linear_fc1/fc2 on the 512 experts, 512 x 8 x ((2048 + 1024) +
// (512 + 2048)) = 23,068,672, and on the shared expert 8 x (3072 + 2560) = 45,056: 23,294,464.
// FLOP per token: 2 x 180,736 + 10 x 2 x 45,056 + 2 x 45,056 = 1,352,704.
TEST(Adapter, GatedDeltaNetProjectionsOfQwen3Next) {
  auto loaded = LoadModelConfig("qwen3-next-80b-a3b");
  ASSERT_TRUE(loaded.ok()) << loaded.error().Format();
  const ModelConfig& m = *loaded;
  const LayerSpec& gdn = m.layers[0];
  ASSERT_EQ(gdn.mixer, MixerKind::kGatedDeltaNet);
  const AdapterLayerCost projections = AdapterCostOfLayer(
      m, Lora(AdapterKind::kLora, 8, {"in_proj_qkvz", "in_proj_ba", "out_proj"}), gdn);
  EXPECT_EQ(projections.params, 180'736);
  EXPECT_EQ(projections.routed_params, 0);
  const AdapterLayerCost all =
      AdapterCostOfLayer(m, Lora(AdapterKind::kLora, 8, MegatronAllLinear(m)), gdn);
  EXPECT_EQ(all.params, 23'294'464);
  EXPECT_EQ(all.routed_params, 23'068'672);
  EXPECT_DOUBLE_EQ(all.flop_per_token, 1'352'704.0);
  // The shared expert's gate is a parameter in megatron-core, an nn.Linear h -> 1 under PEFT:
  // 8 x (2048 + 1) = 16,392 more with it named.
  const AdapterLayerCost gate =
      AdapterCostOfLayer(m, Lora(AdapterKind::kLora, 8, {"gate_proj", "shared_expert_gate"}), gdn);
  // gate_proj on 512 experts and the shared expert: 513 x 8 x (2048 + 512) = 10,506,240.
  EXPECT_EQ(gate.params, 10'506'240 + 16'392);
}

}  // namespace
}  // namespace strata::adapter_test

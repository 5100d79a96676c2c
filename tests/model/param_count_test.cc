// Parameter counts of the reference configs, every digit. Expected values are the exact
// counts of the reference table (checked by hand from each config and against the published
// totals); the derivation of each is written beside it.
#include "strata/model/param_count.h"

#include <gtest/gtest.h>

#include <string>

#include "strata/core/file_io.h"
#include "strata/model/model_config.h"

namespace strata::param_count_test {
namespace {

ModelConfig Load(const std::string& name) {
  auto config = LoadModelConfig(name);
  EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().Format());
  return config.ok() ? *config : ModelConfig{};
}

struct TotalCase {
  const char* name;
  int64_t expected_text_total;
};

// Per-layer formulas (h hidden, q = heads x head_dim, kv = kv_heads x head_dim, f ffn width):
//   attention = h q + 2 h kv + q h (+ q/k norms 2 head_dim; + biases; + sinks), SwiGLU = 3 h f,
//   MoE = E x 3 h f_e + router E h (+ shared), two RMSNorms 2h; plus embedding and head V h each
//   and the final norm h.
const TotalCase kTotals[] = {
    // 32 x (4096x4096 + 2x4096x1024 + 4096x4096 + 3x4096x14336 + 2x4096) + 2x128256x4096 + 4096
    {"llama-3.1-8b", 8'030'261'248},
    // 80 x (8192x8192 + 2x8192x1024 + 8192x8192 + 3x8192x28672 + 2x8192) + 2x128256x8192 + 8192
    {"llama-3.1-70b", 70'553'706'496},
    // 126 x (2x16384x16384 + 2x16384x1024 + 3x16384x53248 + 2x16384) + 2x128256x16384 + 16384
    {"llama-3.1-405b", 405'853'388'800},
    // 32 x (attn 41,943,040 + 8 x 3x4096x14336 + router 8x4096 + 8192) + 2x32000x4096 + 4096
    {"mixtral-8x7b", 46'702'792'704},
    // 48 x (attn 2048x4096x2 + 2x2048x512 + 256 + 128 x 3x2048x768 + 128x2048 + 4096)
    //   + 2x151936x2048 + 2048
    {"qwen3-30b-a3b", 30'532'122'624},
    // 94 x (attn 4096x8192x2 + 2x4096x512 + 256 + 128 x 3x4096x1536 + 128x4096 + 8192)
    //   + 2x151936x4096 + 4096
    {"qwen3-235b-a22b", 235'093'634'560},
    // 64 x (attn 5120x8192x2 + 2x5120x1024 + q/k norms 256 + 3x5120x25600 + 2x5120)
    //   + 2x151936x5120 + 5120 = 64 x 487,598,336 + 1,555,824,640 + 5120
    {"qwen3-32b", 32'762'123'264},
    // Qwen2 layers carry q/k/v biases (5120 + 2x1024) without a config field:
    // 64 x (attn 5120x5120x2 + 2x5120x1024 + biases 7,168 + 3x5120x27648 + 2x5120)
    //   + 2x152064x5120 + 5120 = 64 x 487,605,248 + 1,557,135,360 + 5120 (the card rounds to
    //   32.5B; the checkpoint's tensors sum to this 32.76B)
    {"qwen2.5-32b", 32'763'876'352},
    // 48 x (attn 62,921,728 as above + 3x5120x13824 + 2x5120) + 2x152064x5120 + 5120
    //   = 48 x 275,268,608 + 1,557,135,360 + 5120 (card: 14.7B)
    {"qwen2.5-14b", 14'770'033'664},
    // 40 x (attn 5120x5120x2 + 2x5120x1024 + q/k norms 256 + 3x5120x17408 + 2x5120)
    //   + 2x151936x5120 + 5120 = 40 x 330,311,936 + 1,555,824,640 + 5120 (card: 14.8B)
    {"qwen3-14b-base", 14'768'307'200},
    // Qwen2 attention with biases: q h x h + h, k/v 2 x (h x kv + kv), o h x h. Tied embeddings
    // count the V x h matrix once. Each total rounds to its card's figure (data/models/
    // catalog.yaml), and total minus embeddings to the card's non-embedding figure.
    // 24 x (attn 896x896x2 + 896 + 2x(896x128 + 128) + 3x896x4864 + 2x896) + 151936x896 + 896
    //   = 24 x 14,912,384 + 136,134,656 + 896 (card: 0.49B, 0.36B non-embedding)
    {"qwen2.5-0.5b", 494'032'768},
    // 28 x (attn 1536x1536x2 + 1536 + 2x(1536x256 + 256) + 3x1536x8960 + 2x1536) + 151936x1536
    //   + 1536 = 28 x 46,797,824 + 233,373,696 + 1536 (card: 1.54B, 1.31B non-embedding)
    {"qwen2.5-1.5b", 1'543'714'304},
    // 36 x (attn 2048x2048x2 + 2048 + 2x(2048x256 + 256) + 3x2048x11008 + 2x2048) + 151936x2048
    //   + 2048 = 36 x 77,076,992 + 311,164,928 + 2048 (card: 3.09B, 2.77B non-embedding)
    {"qwen2.5-3b", 3'085'938'688},
    // 28 x (attn 3584x3584x2 + 3584 + 2x(3584x512 + 512) + 3x3584x18944 + 2x3584)
    //   + 2x152064x3584 + 3584 = 28 x 233,057,792 + 1,089,994,752 + 3584 (card: 7.61B, 6.53B
    //   non-embedding); Qwen2-7B has the same shapes (its card's table: 7.6B)
    {"qwen2.5-7b", 7'615'616'512},
    {"qwen2-7b", 7'615'616'512},
    // Qwen3, q/k norms of head_dim 128 each, no biases, q = heads x 128 (wider than h for 0.6B):
    // 28 x (attn 1024x2048 + 2x1024x1024 + 2048x1024 + 256 + 3x1024x3072 + 2x1024)
    //   + 151936x1024 (tied) + 1024 = 28 x 15,730,944 + 155,582,464 + 1024 (card: 0.6B, 0.44B
    //   non-embedding)
    {"qwen3-0.6b", 596'049'920},
    // 36 x (attn 2560x4096x2 + 2x2560x1024 + 256 + 3x2560x9728 + 2x2560) + 151936x2560 (tied)
    //   + 2560 = 36 x 100,930,816 + 388,956,160 + 2560 (card: 4.0B, 3.6B non-embedding)
    {"qwen3-4b", 4'022'468'096},
    // 36 x (attn 4096x4096x2 + 2x4096x1024 + 256 + 3x4096x12288 + 2x4096) + 2x151936x4096
    //   + 4096 = 36 x 192,946,432 + 1,244,659,712 + 4096 (card: 8.2B, 6.95B non-embedding)
    {"qwen3-8b", 8'190'735'360},
    // 36 GDN x 33,718,464 + 12 gated attn x 27,263,488 + 48 x (512 x 3x2048x512 + 512x2048
    //   + shared 3x2048x512 + gate 2048 + 4096) + 2x151936x2048 + 2048 (no MTP in this config)
    {"qwen3-next-80b-a3b", 79'674'391'296},
    // 61 MLA layers x 187,107,328; 3 dense 3x7168x18432; 58 MoE x (256+1) x 3x7168x2048
    //   + router 256x7168 + bias 256; norms 2x7168 per layer; 2x129280x7168 + 7168; MTP excluded
    {"deepseek-v3", 671'026'419'200},
    // 36 x (attn with biases 2880x4096 + 4096 + 2x(2880x512 + 512) + 4096x2880 + 2880, sinks 64;
    //   128 experts x (3x2880x2880 + 2x2880 + 2880); router 128x2880 + 128; 2x2880)
    //   + 2x201088x2880 + 2880
    {"gpt-oss-120b", 116'829'156'672},
    // 30 x 33,718,464 + 10 x 27,263,488 + 40 x (805,306,368 + 3,672,064 + 4,096)
    //   + 2 x 248320x2048 + 2048
    {"qwen3.6-35b-a3b", 34'660'610'688},
};

TEST(ParamCountTest, TextTotalsOfTheReferenceConfigs) {
  for (const auto& c : kTotals) {
    const ParamBreakdown p = CountParams(Load(c.name));
    EXPECT_EQ(p.text_total(), c.expected_text_total) << c.name;
  }
}

TEST(ParamCountTest, ReferenceModelBreakdown) {
  const ModelConfig config = Load("qwen3.6-35b-a3b");
  const ParamBreakdown p = CountParams(config);
  // 40 layers x 256 experts x 3 x 2048 x 512.
  EXPECT_EQ(p.text_expert(), 32'212'254'720);
  // 34,660,610,688 - 32,212,254,720: what EP does not shard (the reference case's figure).
  EXPECT_EQ(p.text_non_expert(), 2'448'355'968);
  // eh_proj 2x2048x2048 + 2 pre-norms 4096 + full-attention MoE layer (27,263,488 + 805,306,368
  // + 3,672,064 + 4,096) + final norm 2048.
  EXPECT_EQ(p.mtp.total, 844'640'768);
  EXPECT_EQ(p.mtp.expert, 805'306'368);
  // patch embed 3x2x16x16x1152 + 1152, pos-embed 2304x1152, 27 x 15,239,504, merger 30,679,808.
  EXPECT_EQ(p.vision.total, 446'571'248);
  EXPECT_EQ(p.vision.per_block, 15'239'504);
  EXPECT_EQ(p.vision.mergers, 30'679'808);
  // Layers with 8 of 256 experts active (30 x 33,718,464 + 10 x 27,263,488 + 40 x (8 x
  // 3,145,728 + 3,672,064 + 4,096)) + head 248,320 x 2048.
  EXPECT_EQ(p.active_matmul, 2'946'427'520);
  // + input embedding 508,559,360 + final norm 2048.
  EXPECT_EQ(p.active_with_embedding, 3'454'988'928);
  // Per-GPU parameters at EP8 (reference case): non-expert + experts / 8 + vision.
  EXPECT_EQ(p.text_non_expert() + p.text_expert() / 8 + p.vision.total, 6'921'459'056);
}

struct LayerCase {
  int64_t index;
  MixerKind mixer;
  int64_t mixer_params;  // attention or linear attention
  int64_t expert;
  int64_t non_expert;
};

// Shapes of the reference table. Layer 0 is Gated DeltaNet, layer 3 gated full attention.
const LayerCase kReferenceLayers[] = {
    // in_proj_qkv 2048x8192 + in_proj_z 2048x4096 + in_proj_a/b 2x2048x32 + conv 8192x4
    //   + A_log 32 + dt_bias 32 + norm 128 + out_proj 4096x2048 = 33,718,464;
    // non-expert = 33,718,464 + router 524,288 + shared 3,145,728 + gate 2048 + norms 4096.
    {0, MixerKind::kGatedDeltaNet, 33'718'464, 805'306'368, 37'394'624},
    // q_proj 2048x8192 + k/v 2x2048x512 + o_proj 4096x2048 + q/k norms 512 = 27,263,488;
    // non-expert = 27,263,488 + 3,672,064 + 4,096.
    {3, MixerKind::kFullAttention, 27'263'488, 805'306'368, 30'939'648},
};

TEST(ParamCountTest, ReferenceModelLayers) {
  const ParamBreakdown p = CountParams(Load("qwen3.6-35b-a3b"));
  ASSERT_EQ(p.layers.size(), 40u);
  for (const auto& c : kReferenceLayers) {
    const LayerParams& layer = p.layers[static_cast<size_t>(c.index)];
    EXPECT_EQ(layer.spec.mixer, c.mixer) << c.index;
    const ModuleKind kind = c.mixer == MixerKind::kGatedDeltaNet ? ModuleKind::kLinearAttention
                                                                 : ModuleKind::kAttention;
    EXPECT_EQ(layer.modules[kind], c.mixer_params) << c.index;
    EXPECT_EQ(layer.expert(), c.expert) << c.index;
    EXPECT_EQ(layer.non_expert(), c.non_expert) << c.index;
    // One expert: 3 x 2048 x 512.
    EXPECT_EQ(layer.per_expert, 3'145'728) << c.index;
    // Router 256 x 2048; shared expert 3 x 2048 x 512 + gate 2048; norms 2 x 2048.
    EXPECT_EQ(layer.modules[ModuleKind::kRouter], 524'288) << c.index;
    EXPECT_EQ(layer.modules[ModuleKind::kSharedExperts], 3'147'776) << c.index;
    EXPECT_EQ(layer.modules[ModuleKind::kNorms], 4'096) << c.index;
  }
  // full_attention_interval 4: layers 3, 7, ..., 39 are full attention: 10 of 40.
  EXPECT_EQ(Load("qwen3.6-35b-a3b").CountLayers(MixerKind::kFullAttention), 10);
}

TEST(ParamCountTest, ModuleKindsSumToTheTotal) {
  // The by-kind rows of `strata model` must add up to the total it prints.
  for (const auto& c : kTotals) {
    const ParamBreakdown p = CountParams(Load(c.name));
    int64_t sum = 0;
    for (ModuleKind kind : AllModuleKinds()) sum += p.AllModules()[kind];
    EXPECT_EQ(sum, p.Total()) << c.name;
  }
}

TEST(ParamCountTest, TiedEmbeddingHasNoHead) {
  // Tying removes the V x h head: llama-3.1-8b tied = 8,030,261,248 - 128,256 x 4096.
  auto text = ReadFile(DataDir() + "/models/llama-3.1-8b.json");
  ASSERT_TRUE(text.ok());
  std::string tied = *text;
  tied.replace(tied.find("\"tie_word_embeddings\": false"), 28, "\"tie_word_embeddings\": true");
  auto config = ParseModelConfig(tied, "tied.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(CountParams(*config).text_total(), 8'030'261'248 - 128'256 * 4'096);
  EXPECT_EQ(CountParams(*config).text[ModuleKind::kHead], 0);
}

}  // namespace
}  // namespace strata::param_count_test

namespace strata::param_count_test {
namespace {

TEST(ParamCountTest, Qwen2HasQkvBiasWithoutAField) {
  // Qwen2.5-7B: per layer q/o 3584^2 each, k/v 3584x512 each, q/k/v biases 3584 + 2 x 512,
  // SwiGLU 3 x 3584 x 18944, norms 2 x 3584 -> 233,057,792; x 28 + 2 x 152,064 x 3584 + 3584
  // = 7,615,616,512, the total the Qwen2.5-7B model card reports (7.61B).
  const char* json = R"({"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
    "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
    "vocab_size": 152064, "tie_word_embeddings": false, "rope_theta": 1000000.0})";
  auto config = ParseModelConfig(json, "qwen2.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(CountParams(*config).text_total(), 7'615'616'512);
}

}  // namespace
}  // namespace strata::param_count_test

// Parameter counts of one published checkpoint per architecture family, every digit, against the
// figure published for it (tests/model/configs/SOURCES.md names each source). The per-layer
// derivation is written beside each case so that a failure says which term is wrong.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "strata/core/file_io.h"
#include "strata/model/flops.h"
#include "strata/model/model_config.h"
#include "strata/model/param_count.h"
#include "support/golden.h"

namespace strata::family_params_test {
namespace {

std::string ConfigPath(const std::string& name) {
  return strata::testing::TestPath("model/configs/" + name + ".json");
}

ModelConfig LoadTestConfig(const std::string& name) {
  auto config = LoadModelConfig(ConfigPath(name));
  EXPECT_TRUE(config.ok()) << name << ": " << (config.ok() ? "" : config.error().Format());
  return config.ok() ? *config : ModelConfig{};
}

struct FamilyCase {
  const char* file;
  const char* family;
  int64_t published_total;  // text model (+ MTP), as the checkpoint's safetensors hold it
};

const FamilyCase kFamilies[] = {
    // wte 50257x768 + wpe 1024x768 + 12 x (2 LayerNorms 4x768 + c_attn 768x2304 + 2304 +
    // c_proj 768^2 + 768 + c_fc 768x3072 + 3072 + c_proj 3072x768 + 768 = 7,087,872) + ln_f 1536,
    // head tied.
    {"gpt2", "gpt2", 124'439'808},
    // 28 x (4 x 3072x4096 + 3 x 3072x24576 + 2 x 3072) + 256000x3072 (tied) + 3072.
    {"gemma-7b", "gemma", 8'537'680'896},
    // 26 x (q 2304x2048 + k/v 2x2304x1024 + o 2048x2304 + 3x2304x9216 + 4 norms 4x2304
    // = 77,865,984) + 256000x2304 (tied) + 2304.
    {"gemma-2-2b", "gemma2", 2'614'341'888},
    // 42 x (q 3584x4096 + k/v 2x3584x2048 + o 4096x3584 + 3x3584x14336 + 4x3584 = 198,195,200)
    // + 256000x3584 + 3584.
    {"gemma-2-9b", "gemma2", 9'241'705'984},
    // 26 x (q 1152x1024 + k/v 2x1152x256 + o 1024x1152 + q/k norms 2x256 + 3x1152x6912
    // + 4x1152 = 26,842,112) + 262144x1152 (tied) + 1152.
    {"gemma-3-1b", "gemma3_text", 999'885'952},
    // 32 x (2x4096^2 + 2x4096x1024 + 3x4096x14336 + 2x4096) + 2x32000x4096 + 4096.
    {"mistral-7b-v0.1", "mistral", 7'241'732'096},
    // 32 x (4x3072^2 + 3x3072x8192 + 2x3072) + 2x32064x3072 + 3072.
    {"phi-3-mini-4k", "phi3", 3'821'079'552},
    // DeepSeek-V3 shapes with 384 experts and 64 heads: 61 MLA layers; layer 0 dense
    // 3x7168x18432; 60 MoE layers x (384 + 1 shared) x 3x7168x2048 + router 384x7168 + bias 384;
    // 2 x 163840x7168 + 7168.
    {"kimi-k2-instruct", "kimi_k2", 1'026'408'232'448},
    // 32 x (4x4096^2 + q/k norms over all heads 2x4096 + 3x4096x11008 + 2x4096) + 2x100352x4096
    // + 4096.
    {"olmo-2-1124-7b", "olmo2", 7'298'617'344},
    // 16 x (4x2048^2 + 2x2048 + 64 x 3x2048x1024 + router 64x2048 + 2x2048) + 2x50304x2048 + 2048.
    {"olmoe-1b-7b-0924", "olmoe", 6'919'161'856},
    // 40 x (q 4096^2 + 4096 + k/v 2x(4096x256 + 256) + o 4096^2 + 3x4096x13696 + 4 norms 4x4096)
    // + 2x151552x4096 + 4096.
    {"glm-4-9b-0414", "glm4", 9'400'279'040},
    // 27 Mamba-2 blocks x (in_proj 4480x22656 + conv 12288x4 + 12288 + 3x128 + norm 10240
    // + out_proj 10240x4480 + 4480) + 4 attention blocks x (2x4480x5120 + 2x4480x1024 + 4480)
    // + 25 MLP blocks x (2x4480x15680 + 4480) + 2x131072x4480 + 4480.
    {"nemotron-nano-9b-v2", "nemotron_h", 8'888'227'328},
    // PhiMoE: LayerNorm with bias (4h per layer, 2h final), q/k/v/o biases, lm_head bias:
    // 32 x (attn 2x4096^2 + 2x4096x1024 + 4096 + 2x1024 + 4096 + 16 x 3x4096x6400 + router
    // 16x4096 + 4x4096) + 2x32064x4096 + 32064 + 2x4096.
    {"phi-3.5-moe", "phimoe", 41'873'153'344},
    // Megatron arguments of Llama-3-8B: the HF count; 128256 is already a multiple of 128 x TP1.
    {"megatron-llama3-8b", "megatron", 8'030'261'248},
};

TEST(FamilyParamsTest, PublishedTotalsOfEachFamily) {
  for (const auto& c : kFamilies) {
    const ModelConfig config = LoadTestConfig(c.file);
    EXPECT_EQ(config.family, c.family) << c.file;
    const ParamBreakdown p = CountParams(config);
    EXPECT_EQ(p.text_total() + p.mtp.total, c.published_total) << c.file;
    int64_t sum = 0;
    for (ModuleKind kind : AllModuleKinds()) sum += p.AllModules()[kind];
    EXPECT_EQ(sum, p.Total()) << c.file;
  }
}

TEST(FamilyParamsTest, DbrxFromItsNestedKeys) {
  // DBRX reads d_model, n_layers, n_heads, attn_config.kv_n_heads and ffn_config.*; LayerNorm
  // without bias. 40 x (6144x6144x2 + 2x6144x1024 + 16 x 3x6144x10752 + router 16x6144
  // + 2x6144) + 2x100352x6144 + 6144 = 131,596,523,520. Databricks publishes only "132B total
  // parameters", which this rounds to; the digits are derived here, not published.
  const ModelConfig dbrx = LoadTestConfig("dbrx-base");
  EXPECT_EQ(dbrx.family, "dbrx");
  EXPECT_EQ(dbrx.attention.num_kv_heads, 8);
  EXPECT_EQ(dbrx.moe.top_k, 4);
  EXPECT_EQ(CountParams(dbrx).text_total(), 131'596'523'520);
}

TEST(FamilyParamsTest, Baichuan2ByHand) {
  // Baichuan 2-7B (the model of the ms-swift 1.x import golden; shapes from the Baichuan 2
  // technical report, arXiv 2309.10305: hidden 4096, FFN 11008, 32 heads, 32 layers, vocabulary
  // 125,696). W_pack holds q, k and v: 3 x 4096^2; o_proj 4096^2; gate/up/down 3 x 4096 x 11008;
  // two RMSNorms. 32 x (4 x 16,777,216 + 135,266,304 + 8,192) = 6,476,267,520; embedding and the
  // untied NormHead 2 x 125,696 x 4096 = 1,029,701,632; final norm 4096: 7,505,973,248. No exact
  // published figure was found ("7B"); the digits are derived here.
  auto config = LoadModelConfig(
      strata::testing::TestPath("golden/cli_import/swift_v1_sft_args/baichuan2-7b.json"));
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(config->family, "baichuan");
  EXPECT_EQ(config->attention.num_kv_heads, 32);  // no num_key_value_heads: multi-head
  EXPECT_EQ(CountParams(*config).text_total(), 7'505'973'248);
}

TEST(FamilyParamsTest, LayerPatternsFollowTheFamily) {
  // Mistral 7B v0.1: sliding_window 4096 on all 32 layers.
  EXPECT_EQ(LoadTestConfig("mistral-7b-v0.1").CountLayers(MixerKind::kSlidingAttention), 32);
  // Gemma 2: even layers local (4096 window), odd layers global.
  const ModelConfig g2 = LoadTestConfig("gemma-2-9b");
  EXPECT_EQ(g2.CountLayers(MixerKind::kSlidingAttention), 21);
  EXPECT_EQ(g2.layers[0].mixer, MixerKind::kSlidingAttention);
  EXPECT_EQ(g2.layers[1].mixer, MixerKind::kFullAttention);
  // Gemma 3: 5 local then 1 global (sliding_window_pattern 6): layers 5, 11, 17, 23 global.
  const ModelConfig g3 = LoadTestConfig("gemma-3-1b");
  EXPECT_EQ(g3.CountLayers(MixerKind::kFullAttention), 4);
  EXPECT_EQ(g3.layers[5].mixer, MixerKind::kFullAttention);
  // head_dim 256 is not hidden/heads = 288.
  EXPECT_EQ(g3.attention.head_dim, 256);
  // Nemotron-Nano-9B-v2: 27 M, 4 *, 25 - in hybrid_override_pattern.
  const ModelConfig nh = LoadTestConfig("nemotron-nano-9b-v2");
  EXPECT_EQ(nh.CountLayers(MixerKind::kMamba2), 27);
  EXPECT_EQ(nh.CountLayers(MixerKind::kFullAttention), 4);
  EXPECT_EQ(nh.CountLayers(FfnKind::kDense), 25);
  // Kimi K2: first_k_dense_replace 1 -> 1 dense + 60 MoE layers.
  EXPECT_EQ(LoadTestConfig("kimi-k2-instruct").CountLayers(FfnKind::kMoe), 60);
}

TEST(FamilyParamsTest, Mamba2BlockByHand) {
  // One Nemotron-H Mamba-2 block: inner 128 x 80 = 10240, conv width 10240 + 2 x 8 x 128 = 12288,
  // in_proj 4480 x (2 x 10240 + 2048 + 128) = 4480 x 22656 = 101,498,880; conv 12288 x 4 + bias
  // 12288 = 61,440; A_log, D, dt_bias 384; gated norm 10240; out_proj 10240 x 4480 = 45,875,200.
  const ModelConfig nh = LoadTestConfig("nemotron-nano-9b-v2");
  const ParamBreakdown p = CountParams(nh);
  const LayerParams& m0 = p.layers[0];
  ASSERT_EQ(m0.spec.mixer, MixerKind::kMamba2);
  EXPECT_EQ(m0.modules[ModuleKind::kLinearAttention],
            101'498'880 + 61'440 + 384 + 10'240 + 45'875'200);
  EXPECT_EQ(m0.modules[ModuleKind::kNorms], 4480);  // one pre-norm per block
  EXPECT_EQ(m0.modules[ModuleKind::kDenseMlp], 0);
}

TEST(FamilyParamsTest, PlainMlpCountsTwoMatricesInFlops) {
  // GPT-2's MLP is up + down: forward GEMM FLOPs 2 x 2 x 768 x 3072 per token per layer.
  const ModelConfig gpt2 = LoadTestConfig("gpt2");
  const ForwardFlops f = CountForwardFlops(gpt2, 1024, AttentionMask::kCausal);
  EXPECT_DOUBLE_EQ(f.layers[0].ffn.count(), 2.0 * 2.0 * 768 * 3072);
}

TEST(FamilyParamsTest, MegatronVocabPaddingByTp) {
  // make_vocab_size_divisible_by 128 x TP 8 = 1024: 128256 -> 129024, 768 more rows in the
  // embedding and the untied head: + 2 x 768 x 4096.
  auto text = ReadFile(ConfigPath("megatron-llama3-8b"));
  ASSERT_TRUE(text.ok());
  std::string tp8 = *text;
  tp8.replace(tp8.find("\"tensor_model_parallel_size\": 1"), 31,
              "\"tensor_model_parallel_size\": 8");
  auto config = ParseModelConfig(tp8, "tp8.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(config->vocab_size, 129'024);
  EXPECT_EQ(CountParams(*config).text_total(), 8'030'261'248 + 2 * 768 * 4096);
}

TEST(FamilyParamsTest, MegatronDefaultsAreMegatrons) {
  // GPT-2 small as Megatron arguments, nothing else said: biases on, LayerNorm, tied, learned
  // positions, GELU 4h. The same count as HF GPT-2 except the vocabulary, padded 50257 -> 50304
  // (128 x TP1): 124,439,808 + 47 x 768.
  const char* json = R"({"num_layers": 12, "hidden_size": 768, "num_attention_heads": 12,
    "max_position_embeddings": 1024, "vocab_size": 50257})";
  auto config = ParseModelConfig(json, "gpt2-megatron.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(CountParams(*config).text_total(), 124'439'808 + 47 * 768);
}

TEST(FamilyParamsTest, UnknownFamiliesSayWhatIsClose) {
  // gemma3n is a known gap: the message names what is missing.
  auto gemma3n = ParseModelConfig(R"({"model_type": "gemma3n", "hidden_size": 2048})", "g.json");
  ASSERT_FALSE(gemma3n.ok());
  EXPECT_NE(gemma3n.error().Format().find("per-layer embeddings"), std::string::npos)
      << gemma3n.error().Format();
  auto other = ParseModelConfig(
      R"({"model_type": "brand_new", "kv_lora_rank": 512, "hidden_size": 1})", "b.json");
  ASSERT_FALSE(other.ok());
  const std::string msg = other.error().Format();
  EXPECT_NE(msg.find("deepseek_v3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("num_hidden_layers"), std::string::npos) << msg;
}

TEST(FamilyParamsTest, MalformedHybridPattern) {
  auto text = ReadFile(ConfigPath("nemotron-nano-9b-v2"));
  ASSERT_TRUE(text.ok());
  std::string bad = *text;
  bad.replace(bad.find("M-M-M-MM"), 8, "M-M-X-MM");
  auto config = ParseModelConfig(bad, "nh.json");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().Format().find("character 4 is 'X'"), std::string::npos)
      << config.error().Format();
}

}  // namespace
}  // namespace strata::family_params_test

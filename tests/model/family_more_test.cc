// Parameter counts of the families added after the first family table: Jamba (Mamba-1 hybrid),
// MiniMax (lightning-attention hybrid), GLM-4.5 (glm4_moe), ERNIE 4.5 (ernie4_5_moe), the
// vision-language wrappers (llava, Qwen2.5-VL, InternVL; Gemma 3 in gemma3_vision_test.cc) with
// their towers counted apart, and the families that were accepted but untested (gpt_bigcode,
// starcoder2, nemotron). Each config is the public config.json (tests/model/configs/SOURCES.md
// names its source); each total is the published figure where one exists, else a hand derivation
// written out here.
#include <gtest/gtest.h>

#include <string>

#include "strata/core/file_io.h"
#include "strata/model/flops.h"
#include "strata/model/model_config.h"
#include "strata/model/param_count.h"
#include "support/golden.h"

namespace strata::family_more_test {
namespace {

std::string ConfigPath(const std::string& name) {
  return strata::testing::TestPath("model/configs/" + name + ".json");
}

ModelConfig Load(const std::string& name) {
  auto config = LoadModelConfig(ConfigPath(name));
  EXPECT_TRUE(config.ok()) << name << ": " << (config.ok() ? "" : config.error().Format());
  return config.ok() ? *config : ModelConfig{};
}

TEST(FamilyMoreTest, JambaMatchesItsSafetensorsIndex) {
  // AI21-Jamba-1.5-Mini: model.safetensors.index.json total_size 103,140,646,656 bytes of bf16
  // = 51,570,323,328 parameters. By hand: 28 Mamba-1 layers x (in_proj 4096 x 16384
  // + conv 8192 x 4 + 8192 + x_proj 8192 x (256 + 32) + dt_proj 256 x 8192 + 8192
  // + A_log 8192 x 16 + D 8192 + out_proj 8192 x 4096 + dt/B/C norms 256 + 16 + 16
  // = 105,308,448) + 4 attention layers x (2 x 4096^2 + 2 x 4096 x 1024 = 41,943,040)
  // + 16 dense MLPs x 3 x 4096 x 14336 + 16 MoE x (16 x 3 x 4096 x 14336 + router 16 x 4096)
  // + 32 x 2 x 4096 norms + 2 x 65536 x 4096 (untied) + 4096.
  const ModelConfig jamba = Load("jamba-1.5-mini");
  EXPECT_EQ(jamba.family, "jamba");
  EXPECT_EQ(jamba.CountLayers(MixerKind::kFullAttention), 4);
  EXPECT_EQ(jamba.CountLayers(MixerKind::kMamba1), 28);
  EXPECT_EQ(jamba.CountLayers(FfnKind::kMoe), 16);
  EXPECT_EQ(jamba.layers[4].mixer, MixerKind::kFullAttention);  // attn_layer_offset 4
  EXPECT_EQ(jamba.layers[1].ffn, FfnKind::kMoe);                // expert_layer_offset 1
  const ParamBreakdown p = CountParams(jamba);
  EXPECT_EQ(p.layers[0].modules[ModuleKind::kLinearAttention], 105'308'448);
  EXPECT_EQ(p.text_total(), 103'140'646'656 / 2);
}

TEST(FamilyMoreTest, MiniMaxMatchesThePublishedTotal) {
  // MiniMax-M1 (the MiniMax-Text-01 architecture): 456,089,655,296 parameters, the Hub's
  // safetensors total as listed for MiniMaxAI/MiniMax-M1-80k and -40k; the model card says
  // "456 billion total". By hand: 70 lightning layers x (qkv 6144 x 24576 + gate 6144 x 8192
  // + norm 8192 + out 8192 x 6144 = 251,666,432) + 10 softmax layers x (6144 x 8192 x 2
  // + 2 x 6144 x 1024 = 113,246,208) + 80 x (32 x 3 x 6144 x 9216 + router 32 x 6144
  // + 2 x 6144) + 2 x 200064 x 6144 + 6144.
  const ModelConfig m = Load("minimax-m1-80k");
  EXPECT_EQ(m.family, "minimax_m1");
  EXPECT_EQ(m.CountLayers(MixerKind::kFullAttention), 10);
  EXPECT_EQ(m.CountLayers(MixerKind::kLightning), 70);
  EXPECT_EQ(m.layers[7].mixer, MixerKind::kFullAttention);
  const ParamBreakdown p = CountParams(m);
  EXPECT_EQ(p.layers[0].modules[ModuleKind::kLinearAttention], 251'666'432);
  EXPECT_EQ(p.text_total(), 456'089'655'296);
  // "45.9 billion activated per token": the decoder layers with 2 of 32 experts, without the
  // embedding and the head: 70 x 251,666,432 + 10 x 113,246,208 + 80 x (2 x 3 x 6144 x 9216
  // + router 196,608 + norms 12,288) = 45,944,913,920.
  int64_t active_layers = 0;
  for (const LayerParams& l : p.layers) active_layers += l.active;
  EXPECT_EQ(active_layers, 45'944'913'920);
}

TEST(FamilyMoreTest, Glm45AirIncludesItsMtpLayer) {
  // GLM-4.5-Air: 110,468,824,832 parameters, the Hub's safetensors total (zai-org/GLM-4.5-Air);
  // "106B total" in the model card is the main stack. Main: 46 layers x (q 4096 x 12288 + k/v
  // 2 x 4096 x 1024 + o 12288 x 4096 + q/k/v biases 14336 + 2 x 4096 norms) + layer 0 dense
  // 3 x 4096 x 10944 + 45 MoE x ((128 + 1) x 3 x 4096 x 1408 + router 128 x 4096 + bias 128)
  // + 2 x 151552 x 4096 + 4096 = 106,852,251,264. The MTP layer (model.layers.46) holds eh_proj
  // 8192 x 4096, enorm, hnorm, one MoE decoder layer, shared_head.norm and its own copies of
  // embed_tokens and shared_head.head: 2,375,059,584 + 2 x 151552 x 4096 = 3,616,573,568.
  const ModelConfig air = Load("glm-4.5-air");
  EXPECT_EQ(air.family, "glm4_moe");
  EXPECT_EQ(air.CountLayers(FfnKind::kMoe), 45);
  EXPECT_TRUE(air.attention.qkv_bias);
  EXPECT_FALSE(air.attention.qk_norm);
  EXPECT_TRUE(air.moe.router_bias);
  const ParamBreakdown p = CountParams(air);
  EXPECT_EQ(p.text_total(), 106'852'251'264);
  EXPECT_EQ(p.mtp.total, 3'616'573'568);
  EXPECT_EQ(p.Total(), 110'468'824'832);
}

TEST(FamilyMoreTest, ErnieMatchesItsSafetensorsTotal) {
  // ERNIE-4.5-21B-A3B (transformers layout, ernie4_5_moe): the Hub API's safetensors total for
  // baidu/ERNIE-4.5-21B-A3B-Thinking, the same architecture released in this layout, is
  // 21,825,437,888 ({"F32": 4,425,408, "BF16": 21,821,012,480}; a public copy of the API record
  // is cited in tests/model/configs/SOURCES.md). The model card says "21B total / 3B active".
  // By hand: 28 x (q 2560 x 2560 + k/v 2 x 2560 x 512 + o 2560 x 2560 + 2 x 2560) + layer 0 dense
  // 3 x 2560 x 12288 + 27 MoE layers (moe_layer_start_index 1 .. end 27) x (64 x 3 x 2560 x 1536
  // + 2 shared = 3 x 2560 x 3072 + router 64 x 2560 + e_score_correction_bias 64)
  // + 103424 x 2560 (tied) + 2560 = 21,825,437,888. The F32 tensors are the routers and their
  // correction biases: 27 x (64 x 2560 + 64) = 4,425,408.
  const ModelConfig e = Load("ernie-4.5-21b-a3b");
  EXPECT_EQ(e.family, "ernie4_5_moe");
  EXPECT_EQ(e.CountLayers(FfnKind::kMoe), 27);
  EXPECT_EQ(e.layers[0].ffn, FfnKind::kDense);
  EXPECT_EQ(e.moe.num_experts, 64);
  EXPECT_EQ(e.moe.top_k, 6);
  EXPECT_EQ(e.moe.num_shared_experts, 2);
  const ParamBreakdown p = CountParams(e);
  EXPECT_EQ(p.text[ModuleKind::kRouter], 4'425'408);
  EXPECT_EQ(p.text_total(), 4'425'408 + 21'821'012'480);
}

TEST(FamilyMoreTest, LlavaCountsTheClipTowerApart) {
  // llava-hf/llava-1.5-7b-hf: 7,063,427,072 parameters (sum of numel over
  // LlavaForConditionalGeneration, as asserted in public tests and blog posts). Text: Llama-2-7B
  // with the vocabulary grown to 32064 = 6,738,939,904 (the llava config gives only the
  // vocabulary: the widths are LlamaConfig's defaults). Vision: CLIP ViT-L/14-336, 24 blocks x
  // 12,596,224 + patch conv 3 x 14 x 14 x 1024 + class token 1024 + 577 positions x 1024 + pre
  // and post LayerNorms 4 x 1024 = 303,507,456; projector 1024 x 4096 + 4096 + 4096 x 4096
  // + 4096 = 20,979,712.
  const ModelConfig llava = Load("llava-1.5-7b-hf");
  EXPECT_EQ(llava.family, "llama");
  EXPECT_EQ(llava.hidden_size, 4096);
  const ParamBreakdown p = CountParams(llava);
  EXPECT_EQ(p.text_total(), 6'738'939'904);
  EXPECT_EQ(p.vision.mergers, 20'979'712);
  EXPECT_EQ(p.vision.total, 303'507'456 + 20'979'712);
  EXPECT_EQ(p.Total(), 7'063'427'072);
}

TEST(FamilyMoreTest, Qwen25VlCountsItsTowerApart) {
  // Qwen/Qwen2.5-VL-7B-Instruct: 8,292,166,656 in all, of which the visual module 676,550,144
  // and the language model 7,615,616,512 (a public fine-tuning notebook printed all three; the
  // Hub lists 8,292,166,656). Tower by hand: patch conv 3 x 2 x 14 x 14 x 1280 (no bias)
  // + 32 blocks x (2 RMSNorms 2 x 1280 + qkv 1280 x 3840 + 3840 + proj 1280^2 + 1280 + SwiGLU
  // 3 x 1280 x 3420 + 2 x 3420 + 1280 = 19,702,200) + merger (RMSNorm 1280 + 5120^2 + 5120
  // + 5120 x 3584 + 3584).
  const ModelConfig vl = Load("qwen2.5-vl-7b-instruct");
  EXPECT_EQ(vl.family, "qwen2_5_vl");
  const ParamBreakdown p = CountParams(vl);
  EXPECT_EQ(p.vision.per_block, 19'702'200);
  EXPECT_EQ(p.vision.total, 676'550'144);
  EXPECT_EQ(p.text_total(), 7'615'616'512);
  EXPECT_EQ(p.Total(), 8'292'166'656);
}

TEST(FamilyMoreTest, InternVlCountsInternVitAndMlp1Apart) {
  // The config is InternVL3-1B-Pretrained's as loaded (a public notebook printed it with the
  // module tree: InternViT-300M and Qwen2.5-0.5B with vocabulary 151674, lm_head untied).
  // InternVL2.5-1B has the same modules and shapes; its count, 938,193,024, is published in a
  // public table of Hub parameter counts ("opengvlab/internvl2_5-1b": 938193024). By hand:
  // tower: patch conv 3 x 14 x 14 x 1024 + 1024 (bias) + class token 1024 + 1025 positions
  // x 1024 + 24 blocks x (2 LayerNorms 4 x 1024 + qkv 1024 x 3072 + 3072 + proj 1024^2 + 1024
  // + fc1 1024 x 4096 + 4096 + fc2 4096 x 1024 + 1024 + ls1, ls2 2 x 1024 = 12,598,272)
  // = 304,012,288; mlp1: LayerNorm(4096) 8192 + 4096 x 896 + 896 + 896 x 896 + 896 = 4,482,816;
  // text: 24 x 14,912,384 + 2 x 151674 x 896 + 896 = 629,697,920.
  const ModelConfig ivl = Load("internvl3-1b-pretrained");
  EXPECT_EQ(ivl.family, "qwen2");
  const ParamBreakdown p = CountParams(ivl);
  EXPECT_EQ(p.vision.per_block, 12'598'272);
  EXPECT_EQ(p.vision.mergers, 4'482'816);
  EXPECT_EQ(p.vision.total, 304'012'288 + 4'482'816);
  EXPECT_EQ(p.text_total(), 629'697'920);
  EXPECT_EQ(p.Total(), 938'193'024);
}

TEST(FamilyMoreTest, GptBigCodeStarCoder) {
  // bigcode/starcoder: 15,517,456,384 parameters (the count listed for StarCoder-15B fine-tunes
  // in the public MultiPL-T model table). By hand: 40 x (c_attn 6144 x (6144 + 2 x 128) + 6400
  // + c_proj 6144^2 + 6144 + c_fc 6144 x 24576 + 24576 + c_proj 24576 x 6144 + 6144 + 2 LayerNorms
  // 4 x 6144 = 379,128,064) + wte 49152 x 6144 + wpe 8192 x 6144 + ln_f 12288, head tied.
  const ModelConfig sc = Load("starcoder");
  EXPECT_EQ(sc.family, "gpt_bigcode");
  EXPECT_EQ(sc.attention.num_kv_heads, 1);  // multi_query
  EXPECT_EQ(CountParams(sc).text_total(), 15'517'456'384);
}

TEST(FamilyMoreTest, StarCoder2) {
  // bigcode/starcoder2-15b: 15,957,889,024 parameters, the Hugging Face Hub's safetensors
  // metadata for the repository at revision 46d44742909c03ac8cee08eb03fdebce02e193ec (F32
  // weights, 63,831,628,056 bytes of files), as listed in a public model-card collection; the
  // model card itself says only "15B". The same count by hand: 40 x (q 6144^2 + k/v 2 x 6144 x 512
  // + o 6144^2 + biases 6144
  // + 2 x 512 + 6144 + c_fc 6144 x 24576 + 24576 + c_proj 24576 x 6144 + 6144 + 2 LayerNorms
  // with bias 4 x 6144 = 383,847,424) + 2 x 49152 x 6144 (untied) + 2 x 6144 = 15,957,889,024.
  const ModelConfig sc2 = Load("starcoder2-15b");
  EXPECT_EQ(sc2.family, "starcoder2");
  EXPECT_EQ(sc2.CountLayers(MixerKind::kSlidingAttention), 40);
  EXPECT_EQ(CountParams(sc2).text_total(), 15'957'889'024);
}

TEST(FamilyMoreTest, NemotronByHand) {
  // nvidia/Nemotron-Mini-4B-Instruct (Minitron-4B shapes), its Hub config.json verbatim. The Hub
  // shows "4.19B"; by hand: 32 x (q 3072^2 + k/v 2 x 3072 x 1024 + o 3072^2 + squared-ReLU
  // MLP 2 x 3072 x 9216 + 2 LayerNorm1p with bias 4 x 3072 = 81,801,216) + 2 x 256000 x 3072
  // (untied) + 2 x 3072 = 4,190,509,056.
  const ModelConfig n = Load("nemotron-mini-4b");
  EXPECT_EQ(n.family, "nemotron");
  EXPECT_EQ(n.mlp, MlpKind::kPlain);
  EXPECT_EQ(CountParams(n).text_total(), 4'190'509'056);
}

TEST(FamilyMoreTest, NemotronAgainstAPublishedTrainingLog) {
  // The one exact published count found: axolotl's QLoRA run of this checkpoint
  // (axolotl-ai-cloud/axolotl pull request #3506, examples/nemotron/nemotron-mini-4b-qlora.yaml:
  // lora_r 32 on q/k/v/o/up/down, pad token added) printed
  //   "trainable params: 46,137,344 || all params: 4,236,652,544".
  // The LoRA adapters, by hand: r x (in + out) per projection, per layer
  //   q 32 x (3072 + 3072) = 196,608; k, v 32 x (3072 + 1024) = 131,072 each;
  //   o 196,608; up, down 32 x (3072 + 9216) = 393,216 each; sum 1,441,792; x 32 layers
  //   = 46,137,344, the trainable figure exactly.
  // The log's tokenizer gained a pad token at id 256000 ("Updated tokens: {'pad_token_id':
  // 256000}"), so the embedding and the untied output layer have 256,001 rows: the base model
  // counts 2 x 3072 more than at 256,000. Base at 256,001 rows + adapters = all params.
  auto text = ReadFile(ConfigPath("nemotron-mini-4b"));
  ASSERT_TRUE(text.ok());
  std::string resized = *text;
  const std::string vocab = "\"vocab_size\": 256000";
  ASSERT_NE(resized.find(vocab), std::string::npos);
  resized.replace(resized.find(vocab), vocab.size(), "\"vocab_size\": 256001");
  auto config = ParseModelConfig(resized, "nemotron-mini-4b.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  constexpr int64_t kLora =
      32 * (2 * 32 * (3072 + 3072) + 2 * 32 * (3072 + 1024) + 2 * 32 * (3072 + 9216));
  static_assert(kLora == 46'137'344);
  EXPECT_EQ(CountParams(*config).text_total() + kLora, 4'236'652'544);
}

TEST(FamilyMoreTest, JambaFlopsPerTokenByHand) {
  // One Mamba-1 layer of Jamba-1.5-Mini, forward, per token: GEMMs in_proj 4096 x 16384,
  // out_proj 8192 x 4096, x_proj 8192 x 288, dt_proj 256 x 8192 = 105,119,744 MACs = 2 x that
  // FLOP; the scan: conv 4 x 8192 + state update and read-out 2 x 8192 x 16 = 294,912 MACs.
  const ModelConfig jamba = Load("jamba-1.5-mini");
  const ForwardFlops f = CountForwardFlops(jamba, 4096, AttentionMask::kCausal);
  ASSERT_EQ(f.layers[0].spec.mixer, MixerKind::kMamba1);
  EXPECT_DOUBLE_EQ(f.layers[0].projections.count(), 2.0 * 105'119'744);
  EXPECT_DOUBLE_EQ(f.layers[0].linear_state.count(), 2.0 * 294'912);
  // Sanity of the whole: at a short context the forward is about 2 FLOP per active matmul
  // parameter (the routers and attention over 16 tokens are a small remainder).
  const ForwardFlops short_ctx = CountForwardFlops(jamba, 16, AttentionMask::kCausal);
  const double per_param =
      short_ctx.main().count() / static_cast<double>(CountParams(jamba).active_matmul);
  EXPECT_GT(per_param, 1.99);
  EXPECT_LT(per_param, 2.01);
}

TEST(FamilyMoreTest, MalformedHybridKeys) {
  auto text = ReadFile(ConfigPath("minimax-m1-80k"));
  ASSERT_TRUE(text.ok());
  std::string bad = *text;
  bad.replace(bad.find("\"attn_type_list\": [\n    0,"), 28, "\"attn_type_list\": [\n    2,");
  auto config = ParseModelConfig(bad, "mm.json");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().Format().find("attn_type_list[0]"), std::string::npos)
      << config.error().Format();

  auto jamba = ReadFile(ConfigPath("jamba-1.5-mini"));
  ASSERT_TRUE(jamba.ok());
  std::string j = *jamba;
  j.replace(j.find("\"attn_layer_offset\": 4"), 22, "\"attn_layer_offset\": 9");
  auto jc = ParseModelConfig(j, "j.json");
  ASSERT_FALSE(jc.ok());
  EXPECT_NE(jc.error().Format().find("attn_layer_offset"), std::string::npos)
      << jc.error().Format();
}

TEST(FamilyMoreTest, UnknownFamiliesStillSayWhatIsClose) {
  auto gemma3n = ParseModelConfig(R"({"model_type": "gemma3n", "hidden_size": 1})", "g.json");
  ASSERT_FALSE(gemma3n.ok());
  EXPECT_NE(gemma3n.error().Format().find("gemma3_text"), std::string::npos)
      << gemma3n.error().Format();
  auto mamba = ParseModelConfig(
      R"({"model_type": "falcon_mamba_x", "mamba_d_state": 16, "hidden_size": 1})", "m.json");
  ASSERT_FALSE(mamba.ok());
  EXPECT_NE(mamba.error().Format().find("jamba"), std::string::npos) << mamba.error().Format();
}

}  // namespace
}  // namespace strata::family_more_test

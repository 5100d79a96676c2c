// Gemma 3 as released (Gemma3ForConditionalGeneration): a SigLIP So400m tower, Gemma 3's
// pooling projector and the gemma3_text model, the tower counted apart. The config is
// google/gemma-3-4b-it's as transformers 4.50.3 loads it (tests/model/configs/SOURCES.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "strata/core/file_io.h"
#include "strata/model/flops.h"
#include "strata/model/model_config.h"
#include "strata/model/param_count.h"
#include "support/golden.h"

namespace strata {
namespace {

std::string Gemma3Path() { return strata::testing::TestPath("model/configs/gemma-3-4b-it.json"); }

std::string Gemma3Text() {
  auto text = ReadFile(Gemma3Path());
  EXPECT_TRUE(text.ok());
  return text.ok() ? *text : std::string();
}

TEST(Gemma3VisionTest, FourBMatchesItsPublishedCount) {
  // sum(p.numel() for p in Gemma3ForConditionalGeneration(google/gemma-3-4b-it).parameters())
  // = 4,300,079,472: asserted by public evaluation scripts that load the checkpoint, listed for
  // google/gemma-3-4b-it in public model tables, and keras-hub's figure for MedGemma 4B (the
  // same shapes). keras-hub's Gemma 3 presets give 4,299,915,632 (vision + text) and
  // 3,880,099,328 (text only) with a 262,144-row vocabulary; the Hub checkpoint has 262,208 rows,
  // 64 x 2560 = 163,840 more. Their difference, 419,816,304, is the tower and projector.
  // By hand: tower: patch conv 3 x 14 x 14 x 1152 + 1152 = 678,528; positions (896 / 14)^2
  // = 4096 x 1152 = 4,718,592; 27 blocks x (2 LayerNorms 4 x 1152 + q/k/v/o 4 x 1152^2 + 4 x 1152
  // + fc1 1152 x 4304 + 4304 + fc2 4304 x 1152 + 1152 = 15,239,504); post-LayerNorm 2304.
  // Projector: RMSNorm 1152 + 1152 x 2560 (no bias) = 2,950,272.
  // Text: 34 x (q 2560 x 2048 + k/v 2 x 2560 x 1024 + o 2048 x 2560 + q/k norms 2 x 256
  // + 3 x 2560 x 10240 + 4 norms 4 x 2560 = 94,382,592) + 262208 x 2560 (tied) + 2560.
  auto config = ParseModelConfig(Gemma3Text(), "gemma-3-4b-it.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(config->family, "gemma3_text");
  EXPECT_TRUE(config->tie_word_embeddings);
  EXPECT_EQ(config->vision.kind, VisionKind::kSiglip);
  EXPECT_EQ(config->vision.spatial_merge_size, 4);  // 64 patches a side pooled to 16
  const ParamBreakdown p = CountParams(*config);
  EXPECT_EQ(p.vision.patch_embed, 678'528);
  EXPECT_EQ(p.vision.position_embed, 4'718'592);
  EXPECT_EQ(p.vision.per_block, 15'239'504);
  EXPECT_EQ(p.vision.mergers, 2'950'272);
  EXPECT_EQ(p.vision.total, 4'299'915'632 - 3'880'099'328);
  EXPECT_EQ(p.layers[0].total(), 94'382'592);
  EXPECT_EQ(p.text_total(), 3'880'099'328 + 64 * 2560);
  EXPECT_EQ(p.Total(), 4'300'079'472);
}

TEST(Gemma3VisionTest, TwelveBMatchesItsPublishedCount) {
  // google/gemma-3-12b-it: 12,187,325,040, listed for the (unsloth) gemma-3-12b-it checkpoint in
  // a public model table; keras-hub's gemma3_instruct_12b is 12,187,079,280 and
  // gemma3_instruct_12b_text 11,765,788,416 with 64 x 3840 = 245,760 fewer vocabulary rows.
  // The config is the one ostris/ai-toolkit builds its LTX-2 text encoder from. By hand: the
  // same tower, 416,866,032; projector 1152 + 1152 x 3840 = 4,424,832; text 48 x (q 3840 x 4096
  // + k/v 2 x 3840 x 2048 + o 4096 x 3840 + 512 + 3 x 3840 x 15360 + 4 x 3840 = 224,148,992)
  // + 262208 x 3840 (tied) + 3840 = 11,766,034,176.
  auto config = LoadModelConfig(strata::testing::TestPath("model/configs/gemma-3-12b-it.json"));
  ASSERT_TRUE(config.ok()) << config.error().Format();
  const ParamBreakdown p = CountParams(*config);
  EXPECT_EQ(p.vision.mergers, 4'424'832);
  EXPECT_EQ(p.vision.total, 12'187'079'280 - 11'765'788'416);
  EXPECT_EQ(p.text_total(), 11'765'788'416 + 64 * 3840);
  EXPECT_EQ(p.Total(), 12'187'325'040);
}

TEST(Gemma3VisionTest, LayerPatternFiveLocalOneGlobal) {
  // sliding_window_pattern 6: layers 5, 11, 17, 23, 29 are global, the other 29 local (1024).
  auto config = ParseModelConfig(Gemma3Text(), "gemma-3-4b-it.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(config->CountLayers(MixerKind::kFullAttention), 5);
  EXPECT_EQ(config->layers[29].mixer, MixerKind::kFullAttention);
  EXPECT_EQ(config->layers[33].mixer, MixerKind::kSlidingAttention);
  EXPECT_EQ(config->attention.sliding_window, 1024);
}

TEST(Gemma3VisionTest, HubFileWithFewKeysGetsTransformersDefaults) {
  // The config.json on the Hub names only what differs from Gemma3TextConfig's and
  // SiglipVisionConfig's defaults: no head counts, head_dim, vocabulary or channel count.
  // Without them the same checkpoint must count the same.
  nlohmann::json json = nlohmann::json::parse(Gemma3Text());
  for (const char* key : {"num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size",
                          "sliding_window_pattern"}) {
    json["text_config"].erase(key);
  }
  json["vision_config"].erase("num_channels");
  const std::string compact = json.dump(2);
  ASSERT_EQ(compact.find("\"vocab_size\""), std::string::npos);
  auto config = ParseModelConfig(compact, "compact.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(config->vocab_size, 262'208);
  EXPECT_EQ(config->attention.num_heads, 8);
  EXPECT_EQ(CountParams(*config).Total(), 4'300'079'472);
}

TEST(Gemma3VisionTest, TowerFlopsPerPatchByHand) {
  // GEMM MACs per image patch: patch conv 3 x 14 x 14 x 1152 = 677,376; 27 blocks x (q/k/v/o
  // 4 x 1152^2 + fc1, fc2 2 x 1152 x 4304 = 15,224,832) = 411,070,464; the projector 1152 x 2560
  // once per 4 x 4 pooled patches = 184,320. FLOPs are twice the MACs.
  auto config = ParseModelConfig(Gemma3Text(), "gemma-3-4b-it.json");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  const ForwardFlops f = CountForwardFlops(*config, 4096, AttentionMask::kCausal);
  EXPECT_DOUBLE_EQ(f.vision_per_patch.count(), 2.0 * (677'376 + 411'070'464 + 184'320));
}

TEST(Gemma3VisionTest, MalformedVisionKeysAreNamed) {
  std::string bad_tokens = Gemma3Text();
  bad_tokens.replace(bad_tokens.find("\"mm_tokens_per_image\": 256"), 26,
                     "\"mm_tokens_per_image\": 250");
  auto tokens = ParseModelConfig(bad_tokens, "g.json");
  ASSERT_FALSE(tokens.ok());
  EXPECT_NE(tokens.error().Format().find("mm_tokens_per_image"), std::string::npos)
      << tokens.error().Format();

  std::string head = Gemma3Text();
  head.replace(head.find("\"vision_use_head\": false"), 24, "\"vision_use_head\": true");
  auto with_head = ParseModelConfig(head, "g.json");
  ASSERT_FALSE(with_head.ok());
  EXPECT_NE(with_head.error().Format().find("vision_config.vision_use_head"), std::string::npos)
      << with_head.error().Format();

  std::string size = Gemma3Text();
  size.replace(size.find("\"image_size\": 896"), 17, "\"image_size\": 900");
  auto odd = ParseModelConfig(size, "g.json");
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.error().Format().find("patch_size"), std::string::npos) << odd.error().Format();
}

}  // namespace
}  // namespace strata

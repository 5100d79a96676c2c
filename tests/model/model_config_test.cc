// Config parsing: the layouts real checkpoints use, and a clear error for each kind of bad
// input, with the full error text asserted.
#include "strata/model/model_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "strata/core/file_io.h"
#include "strata/model/param_count.h"

namespace strata::model_config_test {
namespace {

std::string Catalog(const std::string& name) {
  auto text = ReadFile(DataDir() + "/models/" + name + ".json");
  EXPECT_TRUE(text.ok());
  return text.ok() ? *text : "";
}

// Replaces the first occurrence of `from` (which must exist) in `text`.
std::string Edit(std::string text, const std::string& from, const std::string& to) {
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

struct ErrorCase {
  const char* name;
  std::string json;
  const char* expected_error;  // Error::Format()
};

TEST(ModelConfigTest, BadInputGivesAClearError) {
  const std::string llama = Catalog("llama-3.1-8b");
  const std::string qwen = Catalog("qwen3.6-35b-a3b");
  const ErrorCase cases[] = {
      {"empty file", "  \n", "cfg.json: the file is empty; expected a config.json object"},
      // The first 120 bytes end right after `  "intermediate_size"` (21 characters) on line 7,
      // so the parser stops at column 22 waiting for the ':'.
      {"truncated", llama.substr(0, 120),
       "cfg.json:7:22: malformed JSON: syntax error while parsing object separator - unexpected "
       "end of input; expected ':'"},
      {"trailing comma", "{\"model_type\": \"llama\",}",
       "cfg.json:1:24: malformed JSON: syntax error while parsing object key - unexpected '}'; "
       "expected string literal"},
      {"number out of range", "{\"model_type\": \"llama\", \"hidden_size\": 1e400}",
       "cfg.json: malformed JSON: number overflow parsing '1e400'"},
      {"not an object", "[1, 2]",
       "cfg.json: expected a JSON object at the top level, got an array"},
      {"misspelt field", Edit(llama, "\"hidden_size\"", "\"hiden_size\""),
       "cfg.json: hidden_size: missing required field\n  hint: found 'hiden_size': did you mean "
       "'hidden_size'?"},
      {"wrong type", Edit(llama, "\"hidden_size\": 4096", "\"hidden_size\": \"4096\""),
       "cfg.json: hidden_size: expected a positive integer, got the string \"4096\""},
      {"zero size", Edit(llama, "\"num_hidden_layers\": 32", "\"num_hidden_layers\": 0"),
       "cfg.json: num_hidden_layers: expected a positive integer, got 0"},
      {"negative size", Edit(llama, "\"vocab_size\": 128256", "\"vocab_size\": -5"),
       "cfg.json: vocab_size: expected a positive integer, got -5"},
      {"fractional size", Edit(llama, "\"intermediate_size\": 14336", "\"intermediate_size\": 1.5"),
       "cfg.json: intermediate_size: expected a positive integer, got 1.5"},
      {"heads do not divide",
       Edit(llama, "\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5"),
       "cfg.json: num_key_value_heads: num_attention_heads (32) is not a multiple of "
       "num_key_value_heads (5)"},
      {"unknown model type", Edit(llama, "\"model_type\": \"llama\"", "\"model_type\": \"lama\""),
       "cfg.json: model_type: unknown model type 'lama'\n  hint: did you mean 'llama'?"},
      {"nested field misspelt", Edit(qwen, "\"linear_num_key_heads\"", "\"linear_num_keyheads\""),
       "cfg.json: text_config.linear_num_key_heads: missing required field\n  hint: found "
       "'linear_num_keyheads': did you mean 'linear_num_key_heads'?"},
      {"unknown layer type", Edit(qwen, "\"linear_attention\",", "\"linear_atention\","),
       "cfg.json: text_config.layer_types[0]: unknown layer type 'linear_atention'\n  hint: did "
       "you mean 'linear_attention'?"},
      {"layer list too short", Edit(qwen, "\"num_hidden_layers\": 40", "\"num_hidden_layers\": 41"),
       "cfg.json: text_config.layer_types: has 40 entries but num_hidden_layers is 41"},
      {"vision field wrong type", Edit(qwen, "\"depth\": 27", "\"depth\": true"),
       "cfg.json: vision_config.depth: expected a positive integer, got true"},
      {"linear heads do not divide",
       Edit(qwen, "\"linear_num_value_heads\": 32", "\"linear_num_value_heads\": 24"),
       "cfg.json: text_config.linear_num_value_heads: linear_num_value_heads (24) is not a "
       "multiple of linear_num_key_heads (16)"},
      {"absurd layer count",
       Edit(llama, "\"num_hidden_layers\": 32", "\"num_hidden_layers\": 1000000000000"),
       "cfg.json: num_hidden_layers: expected at most 65536 layers, got 1000000000000"},
      // The bound counts 32 layers plus one spare: 33 x 3 x 2^40 x 2^40 = 1.197e26 (the
      // SwiGLU term dominates), far past int64; refused before any int64 count is formed.
      {"overflowing sizes",
       Edit(Edit(llama, "\"hidden_size\": 4096",
                 "\"hidden_size\": 1099511627776, \"head_dim\": 128"),
            "\"intermediate_size\": 14336", "\"intermediate_size\": 1099511627776"),
       "cfg.json: the sizes describe about 1.2e+26 parameters, more than the 1e+16 strata "
       "accepts; check the widths and counts"},
      {"top-k above experts",
       Edit(qwen, "\"num_experts_per_tok\": 8", "\"num_experts_per_tok\": 300"),
       "cfg.json: text_config.num_experts_per_tok: routes each token to 300 experts but there are "
       "only 256"},
  };
  for (const auto& c : cases) {
    auto result = ParseModelConfig(c.json, "cfg.json");
    ASSERT_FALSE(result.ok()) << c.name;
    EXPECT_EQ(result.error().Format(), c.expected_error) << c.name;
  }
}

TEST(ModelConfigTest, EveryTruncationIsAnError) {
  // A strict prefix of a JSON object is never a complete document, so every cut of every
  // shipped config must be refused (and never crash: CI runs this under ASan and UBSan).
  for (const char* name : {"qwen3.6-35b-a3b", "deepseek-v3", "gpt-oss-120b", "llama-3.1-8b",
                           "mixtral-8x7b", "qwen3-next-80b-a3b"}) {
    const std::string text = Catalog(name);
    const size_t last_brace = text.rfind('}');
    for (size_t n = 0; n < last_brace; ++n) {
      auto result = ParseModelConfig(std::string_view(text).substr(0, n), "cut.json");
      EXPECT_FALSE(result.ok()) << name << " cut at " << n;
      if (!result.ok()) {
        EXPECT_EQ(result.error().file, "cut.json");
      }
    }
  }
}

TEST(ModelConfigTest, UnknownCatalogNameSuggestsTheClosest) {
  auto result = LoadModelConfig("qwen3-30b-a3");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().Format(),
            "unknown model 'qwen3-30b-a3': not a file and not a catalog name in data/models/\n"
            "  hint: did you mean 'qwen3-30b-a3b'?");
}

TEST(ModelConfigTest, MissingFileNamesThePath) {
  auto result = LoadModelConfig("no/such/config.json");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().Format().find("no/such/config.json"), std::string::npos);
}

// The same architecture laid out differently must count the same.
struct LayoutCase {
  const char* name;
  std::string json;
  int64_t expected_text_total;
};

TEST(ModelConfigTest, FlatAndNestedLayoutsAgree) {
  const std::string qwen = Catalog("qwen3.6-35b-a3b");
  // Flat: the text_config fields at the top, vision dropped: the text total is unchanged
  // (34,660,610,688, reference table).
  std::string flat = qwen;
  flat = Edit(flat, "\"text_config\": {", "\"ignored_text\": {");
  const size_t vision = flat.find(",\n  \"vision_config\"");
  ASSERT_NE(vision, std::string::npos);
  flat = flat.substr(0, vision) + "\n}";
  // Lift the inner block by re-parsing: build it with nlohmann instead of string edits.
  auto inner_start = flat.find("\"ignored_text\": {");
  std::string inner = flat.substr(inner_start + 16);
  inner = inner.substr(0, inner.rfind('}'));  // drop the root's closing brace
  const LayoutCase cases[] = {
      {"nested text_config", qwen, 34'660'610'688},
      {"flat layout", inner, 34'660'610'688},
      // layer_types removed: full_attention_interval 4 gives the same 30 + 10 split.
      {"interval instead of list", Edit(qwen, "\"layer_types\"", "\"unused_layer_types\""),
       34'660'610'688},
      // rope_theta at the top level instead of inside rope_parameters.
      {"rope at the top",
       Edit(qwen, "\"rope_parameters\": {", "\"rope_theta\": 10000000, \"x\": {"), 34'660'610'688},
  };
  for (const auto& c : cases) {
    auto config = ParseModelConfig(c.json, "cfg.json");
    ASSERT_TRUE(config.ok()) << c.name << ": " << config.error().Format();
    EXPECT_EQ(CountParams(*config).text_total(), c.expected_text_total) << c.name;
  }
}

TEST(ModelConfigTest, LayerPatterns) {
  // gpt-oss alternates sliding (window 128) and full attention, 18 of each; DeepSeek-V3 has 3
  // dense then 58 MoE layers, all MLA.
  auto gpt = LoadModelConfig("gpt-oss-120b");
  ASSERT_TRUE(gpt.ok());
  EXPECT_EQ(gpt->CountLayers(MixerKind::kSlidingAttention), 18);
  EXPECT_EQ(gpt->attention.sliding_window, 128);
  EXPECT_TRUE(gpt->attention.sinks);
  auto ds = LoadModelConfig("deepseek-v3");
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ(ds->CountLayers(FfnKind::kDense), 3);
  EXPECT_EQ(ds->CountLayers(MixerKind::kMla), 61);
  EXPECT_EQ(ds->mtp_layers, 1);
}

}  // namespace
}  // namespace strata::model_config_test

// What a launch command's model name resolves to in the catalog (data/models/). The names are
// the ones public launch scripts pass most (ms-swift, verl and Megatron-LM examples); each
// expected model is the config whose architecture the Hub checkpoint publishes.
#include "strata/importer/model_match.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

struct MatchCase {
  const char* name;
  const char* expected_model;
  const char* expected_how;
};

TEST(ModelMatchTest, HubNamesResolveToCatalogConfigs) {
  const MatchCase cases[] = {
      // The instruct checkpoint has the base model's architecture: -Instruct is dropped.
      {"Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b", "catalog name after dropping -instruct"},
      {"Qwen/Qwen2.5-0.5B-Instruct", "qwen2.5-0.5b", "catalog name after dropping -instruct"},
      {"Qwen/Qwen2-7B-Instruct", "qwen2-7b", "catalog name after dropping -instruct"},
      {"Qwen/Qwen3-8B", "qwen3-8b", "catalog name"},
      {"Qwen3-0.6B", "qwen3-0.6b", "catalog name"},
      // Qwen3.5-35B-A3B publishes the architecture of the catalog's Qwen3.6-35B-A3B config
      // (every architecture field equal), so the name is an alias, not a second file.
      {"Qwen/Qwen3.5-35B-A3B", "qwen3.6-35b-a3b",
       "alias: qwen3.5-35b-a3b has the qwen3.6-35b-a3b architecture"},
      {"Qwen/Qwen3.5-35B-A3B-Base", "qwen3.6-35b-a3b",
       "alias: qwen3.5-35b-a3b has the qwen3.6-35b-a3b architecture after dropping -base"},
  };
  for (const auto& c : cases) {
    auto match = MatchModel(c.name);
    ASSERT_TRUE(match.ok()) << c.name << ": " << match.error().Format();
    EXPECT_EQ(match->model, c.expected_model) << c.name;
    EXPECT_EQ(match->how, c.expected_how) << c.name;
  }
}

TEST(ModelMatchTest, UnknownNameSuggestsTheClosestCatalogName) {
  // A doubled key: one edit from qwen3-8b, two from any other catalog name.
  auto match = MatchModel("Qwen/Qwen3-8BB");
  ASSERT_FALSE(match.ok());
  EXPECT_EQ(match.error().message, "no model in the catalog matches 'Qwen/Qwen3-8BB'");
  EXPECT_EQ(match.error().hint,
            "pass --model with a catalog name or a config.json path; did you mean 'qwen3-8b'?");
}

}  // namespace
}  // namespace strata

// torchtitan's model names -> the catalog (data/models/torchtitan_flavors.yaml): the shipped table
// parses, maps only to catalog configs of the same architecture, says why where it maps to none,
// and a malformed table is a clear error. The importer (a TOML's [model]) and the log analyser
// (the "Building llama3 8B with" line) both read it: tests/importer and tests/logs.
#include "strata/model/torchtitan_flavors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "strata/core/file_io.h"

namespace strata {
namespace {

TEST(TitanFlavorsTest, ShippedTableMapsToCatalogConfigs) {
  const std::string path = DataDir() + "/models/torchtitan_flavors.yaml";
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  auto table = ParseTitanFlavors(*text, path);
  ASSERT_TRUE(table.ok()) << table.error().Format();
  EXPECT_EQ(table->size(), 10u);
  for (const TitanFlavor& f : *table) {
    if (f.model.empty()) {
      EXPECT_FALSE(f.why.empty()) << f.name << "/" << f.flavor;
      continue;
    }
    EXPECT_TRUE(std::filesystem::exists(DataDir() + "/models/" + f.model + ".json"))
        << f.name << "/" << f.flavor << " -> " << f.model;
  }
}

TEST(TitanFlavorsTest, FlavorsResolveOrSayWhyNot) {
  struct Case {
    const char* name;
    const char* flavor;
    const char* model;  // "" for an error
  };
  const Case cases[] = {
      {"llama3", "8B", "llama-3.1-8b"},
      {"llama3", "405B", "llama-3.1-405b"},
      {"deepseek_v3", "671B", "deepseek-v3"},
      // torchtitan's qwen3 "32B": dim 5120, 64 layers, 64 heads, 8 KV heads, FFN 25600,
      // vocabulary 151,936 (models/qwen3/__init__.py) = Qwen3-32B's config.json.
      {"qwen3", "32B", "qwen3-32b"},
      {"qwen3", "30B-A3B", "qwen3-30b-a3b"},
  };
  for (const Case& c : cases) {
    auto model = TitanCatalogModel(c.name, c.flavor, "line 1");
    ASSERT_TRUE(model.ok()) << model.error().Format();
    EXPECT_EQ(*model, c.model);
  }
  auto debug = TitanCatalogModel("llama3", "debugmodel", "t.toml:3: model.name");
  ASSERT_FALSE(debug.ok());
  EXPECT_EQ(debug.error().Format(),
            "torchtitan model 'llama3/debugmodel' (t.toml:3: model.name) has no strata catalog "
            "entry: torchtitan's test configuration (dim 256, 6 layers), not a released model\n"
            "  hint: give the model: --model with a catalog name or a config.json path");
  auto unknown = TitanCatalogModel("llama3", "13B", "line 4");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "torchtitan model 'llama3/13B' (line 4) has no strata catalog entry");
}

TEST(TitanFlavorsTest, AMalformedTableIsAnError) {
  struct Case {
    const char* name;
    const char* yaml;
    const char* error;
  };
  const Case cases[] = {
      {"twice",
       "flavors:\n  - {name: llama3, flavor: 8B, model: llama-3.1-8b}\n"
       "  - {name: llama3, flavor: 8B, model: llama-3.1-70b}\n",
       "llama3/8B is listed twice"},
      {"none without why", "flavors:\n  - {name: llama3, flavor: debugmodel, model: none}\n",
       "why"},
      {"misspelt key", "flavors:\n  - {name: llama3, flavour: 8B, model: llama-3.1-8b}\n", "flavo"},
      {"truncated", "flavors:\n  - {name: llama3, flavor: 8B, mod", "t.yaml"},
      {"not a list", "flavors: llama3\n", "expected a list of flavors"},
  };
  for (const Case& c : cases) {
    auto table = ParseTitanFlavors(c.yaml, "t.yaml");
    ASSERT_FALSE(table.ok()) << c.name;
    EXPECT_NE(table.error().Format().find(c.error), std::string::npos)
        << c.name << ": " << table.error().Format();
  }
}

}  // namespace
}  // namespace strata

// The catalog index (data/models/catalog.yaml): the shipped file parses and covers every config,
// and malformed or truncated input gives a clear error.
#include "strata/model/model_catalog.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "strata/core/file_io.h"

namespace strata::model_catalog_test {
namespace {

TEST(ModelCatalogTest, ShippedIndexCoversEveryConfig) {
  auto catalog = LoadModelCatalog();
  ASSERT_TRUE(catalog.ok()) << catalog.error().Format();
  for (const auto& entry : std::filesystem::directory_iterator(DataDir() + "/models")) {
    if (entry.path().extension() != ".json") continue;
    auto found = FindCatalogModel(entry.path().stem().string());
    ASSERT_TRUE(found.ok());
    EXPECT_TRUE(found->has_value()) << entry.path().stem().string() << " missing from catalog.yaml";
  }
  // The reference case quotes 6N with N = 3.0B for Qwen3.6-35B-A3B ("A3B").
  auto reference = FindCatalogModel("qwen3.6-35b-a3b");
  ASSERT_TRUE(reference.ok() && reference->has_value());
  EXPECT_EQ((*reference)->nominal_active_params, 3'000'000'000);
}

struct ErrorCase {
  const char* name;
  const char* yaml;
  const char* expected_error;
};

TEST(ModelCatalogTest, BadInput) {
  const ErrorCase cases[] = {
      {"misspelt key",
       "models:\n  m:\n    nominal_params: 1.0e9\n    nominal_active_param: 1.0e9\n"
       "    source: x\n",
       // Line 4 holds the misspelt key.
       "c.yaml:4: models.m.nominal_active_param: unknown field 'nominal_active_param'\n"
       "  hint: did you mean 'nominal_active_params'?"},
      {"fractional count",
       "models:\n  m:\n    nominal_params: 1.5\n    nominal_active_params: 1.0e9\n    source: x\n",
       "c.yaml:3: models.m.nominal_params: expected a positive whole parameter count such as "
       "3.0e9"},
      {"truncated", "models:\n  m:\n    nominal_params: [1.0e9\n",
       "c.yaml:4:1: malformed YAML: end of sequence flow not found"},
  };
  for (const auto& c : cases) {
    auto result = ParseModelCatalog(c.yaml, "c.yaml");
    ASSERT_FALSE(result.ok()) << c.name;
    EXPECT_EQ(result.error().Format(), c.expected_error) << c.name;
  }
}

}  // namespace
}  // namespace strata::model_catalog_test

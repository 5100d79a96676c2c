#include "strata/core/json_input.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata {
namespace {

TEST(JsonInput, NumbersBeyondDoubleRangeAreAnErrorNotAnException) {
  // 1e400 > DBL_MAX (about 1.8e308): nlohmann throws out_of_range 406 after the syntax check.
  const auto r = ParseUntrustedJson(R"({"a": 1e400})", "f.json", 10, "a test document");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Format(),
            "f.json: not valid JSON: number overflow parsing '1e400', expected a test document");
}

TEST(JsonInput, PreviewIsBoundedAndCompact) {
  EXPECT_EQ(JsonPreview(nlohmann::json::parse(R"({"a":[1,2],"b":"x"})")), R"({"a":[1,2],"b":"x"})");
  nlohmann::json big = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i) big.push_back(i);
  // "[0,1,2,...": 57 characters then "...", 60 in all, without serialising 100,000 numbers.
  const std::string shown = JsonPreview(big, 60);
  EXPECT_EQ(shown.size(), 60u);
  EXPECT_EQ(shown.substr(0, 10), "[0,1,2,3,4");
  EXPECT_EQ(shown.substr(57), "...");
}

}  // namespace
}  // namespace strata

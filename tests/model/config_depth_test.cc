// A config.json goes through the same depth bound as every JSON strata reads
// (core/json_input.h, kJsonMaxDepth): a hostile file nested 100,000 deep is an error naming the
// line, not a stack overflow in the parser or in the destructor of the parsed value.
#include <gtest/gtest.h>

#include <string>

#include "strata/model/model_config.h"

namespace strata {
namespace {

TEST(ModelConfigDepth, DeepNestingIsRefusedBeforeParsing) {
  std::string text = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto config = ParseModelConfig(text, "deep.json");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().message.find("nested deeper than 64 levels"), std::string::npos)
      << config.error().Format();
  EXPECT_EQ(config.error().line, 1);
}

}  // namespace
}  // namespace strata

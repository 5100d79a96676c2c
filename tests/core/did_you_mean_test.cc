#include "strata/core/did_you_mean.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(DidYouMean, EditDistanceByHand) {
  // kitten -> sitting: substitute k/s, e/i, insert g = 3 (the textbook example).
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("MoDeL", "model"), 0u);  // case-insensitive
}

TEST(DidYouMean, SuggestsCloseNamesOnly) {
  const std::vector<std::string> names = {"num_experts", "num_attention_heads", "hidden_size"};
  EXPECT_EQ(DidYouMeanHint("num_expert", names), "did you mean 'num_experts'?");
  EXPECT_EQ(DidYouMeanHint("zzzzzzzzzzzz", names),
            "expected one of: num_experts, num_attention_heads, hidden_size");
}

}  // namespace
}  // namespace strata

#include "strata/core/text_scan.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(TextScan, Integers) {
  EXPECT_EQ(ParseInt64(" 42\r"), 42);
  EXPECT_EQ(ParseInt64("-7"), -7);
  EXPECT_FALSE(ParseInt64("42x").has_value());
  EXPECT_FALSE(ParseInt64("").has_value());
  // 19 digits could overflow int64_t (max 9,223,372,036,854,775,807): refused, not wrapped.
  EXPECT_FALSE(ParseInt64("9999999999999999999").has_value());
  EXPECT_EQ(ParseInt64("999999999999999999"), 999999999999999999);
  size_t consumed = 0;
  EXPECT_EQ(LeadingInt("  1843, rest", &consumed), 1843);
  EXPECT_EQ(consumed, 6u);
  EXPECT_EQ(IntAfter("WorkNCCL(SeqNum=1580, OpType=ALLREDUCE", "SeqNum="), 1580);
  EXPECT_FALSE(IntAfter("OpType=ALLREDUCE", "SeqNum=").has_value());
}

TEST(TextScan, TrimAndDepth) {
  EXPECT_EQ(TrimSpace(" \t a b \r\n"), "a b");
  // {"a": [1, {"b": "[[["}]}: three levels (the third opens at byte 10); brackets inside
  // strings do not count.
  const char* three = R"({"a": [1, {"b": "[[["}]})";
  EXPECT_FALSE(JsonTooDeepAt(three, 3).has_value());
  EXPECT_EQ(JsonTooDeepAt(three, 2), 10u);
  EXPECT_FALSE(JsonTooDeepAt(R"("\"[[" )", 0).has_value());
  EXPECT_EQ(JsonTooDeepAt("[[[[", 3), 3u);  // truncated input is still measured
}

}  // namespace
}  // namespace strata

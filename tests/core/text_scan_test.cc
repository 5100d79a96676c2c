#include "strata/core/text_scan.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

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

// The line splitter every "file:line" parser uses. By hand: "a\r\nb\n\nc" has four lines,
// numbered 1-4: "a" (the CR is dropped), "b", "" (the empty line between two LFs) and "c" (no
// final LF, still a line); "x\n" has one line; "" has none.
TEST(TextScan, LinesAndWords) {
  const std::vector<TextLine> lines = SplitLines("a\r\nb\n\nc");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].text, "a");
  EXPECT_EQ(lines[1].text, "b");
  EXPECT_EQ(lines[2].text, "");
  EXPECT_EQ(lines[3].text, "c");
  EXPECT_EQ(lines[3].number, 4);
  EXPECT_EQ(SplitLines("x\n").size(), 1u);
  EXPECT_TRUE(SplitLines("").empty());
  int count = 0;
  ForEachLine("one\ntwo", [&](const TextLine& l) { count += l.number; });
  EXPECT_EQ(count, 3);  // lines 1 and 2
  const std::vector<std::string_view> words = SplitWords(" eth0\t 1500  up ");
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(words[1], "1500");
}

}  // namespace
}  // namespace strata

// The one wall-clock parser (core/timestamp.h) that the log readers and the hang analysis share.
// Expected values are read off the inputs by hand.
#include "strata/core/timestamp.h"

#include <gtest/gtest.h>

namespace strata::timestamp_test {
namespace {

TEST(ParseLogTimestamp, DifferencesInSeconds) {
  // 2024-04-06 03:02:12 -> 03:02:18 is 6 s; a day boundary adds 86,400 s.
  auto a = ParseLogTimestamp("2024-04-06 03:02:12");
  auto b = ParseLogTimestamp("2024-04-06 03:02:18");
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(*b - *a, 6.0);
  auto c = ParseLogTimestamp("2024-04-07 03:02:12");
  EXPECT_DOUBLE_EQ(*c - *a, 86400.0);
  // Fractions: megatron-core 0.16 prints microseconds, Python logging milliseconds after ','.
  auto us = ParseLogTimestamp("2026-05-12 03:14:07.512345");
  auto ms = ParseLogTimestamp("2026-05-12 03:14:07,512");
  auto whole = ParseLogTimestamp("2026-05-12 03:14:07");
  EXPECT_NEAR(*us - *whole, 0.512345, 1e-6);
  EXPECT_NEAR(*ms - *whole, 0.512, 1e-6);
  // 1970-01-01 is day 0.
  EXPECT_DOUBLE_EQ(*ParseLogTimestamp("1970-01-02 00:00:01"), 86401.0);
  for (const char* bad : {"2024-13-06 03:02:12", "2024-04-06 25:02:12", "2024/04/06 03:02:12",
                          "2024-04-06", "2024-04-06-03:02:12", "garbage"}) {
    EXPECT_FALSE(ParseLogTimestamp(bad).has_value()) << bad;
  }
  EXPECT_TRUE(FindLeadingTimestamp(" [2024-04-06 02:55:45] iteration 2/ 100").has_value());
  EXPECT_TRUE(FindLeadingTimestamp("[titan] 2026-05-18 16:04:46,338 - root").has_value());
  EXPECT_FALSE(FindLeadingTimestamp(" iteration      122/  250000 |").has_value());
}

TEST(ParseLogTimestamp, DateAndTimePartedBySpaceTOrUnderscore) {
  // ISO 8601's 'T' and torchrun's failure record ("time : 2024-08-20_11:37:36") part the date
  // from the time where Python's logging puts a space: the same instant, to the second.
  const auto space = ParseLogTimestamp("2024-08-20 11:37:36");
  ASSERT_TRUE(space.has_value());
  EXPECT_EQ(ParseLogTimestamp("2024-08-20T11:37:36"), space);
  EXPECT_EQ(ParseLogTimestamp("2024-08-20_11:37:36"), space);
  // 2024-08-20 is day 19955 since 1970-01-01 (54 years, 13 of them leap: 54 * 365 + 13 = 19723
  // days to 2024-01-01, then 31+29+31+30+31+30+31 = 213 days to 08-01 and 19 more); 11:37:36 is
  // 41856 s: 19955 * 86400 + 41856 = 1724153856.
  EXPECT_DOUBLE_EQ(*space, 1724153856.0);
}

}  // namespace
}  // namespace strata::timestamp_test

// The small scanners under the log parsers: numbers as frameworks print them, durations,
// launcher prefixes and ANSI colours. Expected values are read off the inputs by hand.
#include "strata/logs/log_scan.h"

#include <gtest/gtest.h>

#include <cmath>

namespace strata {
namespace {

TEST(ParseLogNumber, FrameworkSpellings) {
  struct Case {
    const char* text;
    double expected;
  };
  const Case cases[] = {
      {"1.818812E+00", 1.818812},  // megatron's {:.6E}
      {"9.150E-06", 9.150e-06},    // older forks' {:.3E}
      {"2e-06", 2e-06},            // python repr
      {" 5630.1 ", 5630.1},        // padded
      {"7,282", 7282},             // torchtitan tps with thousands separators
      {"1,234,567.5", 1234567.5},
      {"-0.003", -0.003},
      {"np.float64(0.343)", 0.343},  // verl under numpy 2
      {"np.int64(12)", 12},
  };
  for (const auto& c : cases) {
    auto v = ParseLogNumber(c.text);
    ASSERT_TRUE(v.has_value()) << c.text;
    EXPECT_DOUBLE_EQ(*v, c.expected) << c.text;
  }
  EXPECT_TRUE(std::isnan(*ParseLogNumber("nan")));
  EXPECT_TRUE(std::isnan(*ParseLogNumber("NaN")));
  EXPECT_TRUE(std::isinf(*ParseLogNumber("inf")));
  EXPECT_LT(*ParseLogNumber("-inf"), 0);
  for (const char* bad : {"", "abc", "1.2.3", "12x", "7,28a", "np.float64(1.0", "--1", "1e"}) {
    EXPECT_FALSE(ParseLogNumber(bad).has_value()) << bad;
  }
}

// Fuzzing finding 21: a NeMo line's "global_step: 1.11111e+69" was converted to int64
// (undefined behaviour). A step is a whole number in [0, 2^53); anything else is no step.
TEST(StepFromNumber, OnlyWholeNonNegativeExactValues) {
  EXPECT_EQ(StepFromNumber(794.0), 794);  // Lightning's "global_step=794.0"
  EXPECT_EQ(StepFromNumber(0), 0);
  EXPECT_EQ(StepFromNumber(9007199254740991.0), 9007199254740991);  // 2^53 - 1
  EXPECT_FALSE(StepFromNumber(9007199254740992.0));                 // 2^53
  EXPECT_FALSE(StepFromNumber(1.11111e69));
  EXPECT_FALSE(StepFromNumber(-1));
  EXPECT_FALSE(StepFromNumber(794.5));
  EXPECT_FALSE(StepFromNumber(std::nan("")));
  EXPECT_FALSE(StepFromNumber(INFINITY));
}

TEST(ParseDurationSeconds, SwiftAndTqdm) {
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("2s"), 2);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("20m 3s"), 1203);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("2d 0h 8m 17s"), 2 * 86400 + 8 * 60 + 17);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("9:07:58"), 9 * 3600 + 7 * 60 + 58);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("01:02"), 62);
  for (const char* bad : {"", "3x", "1:2:3:4", "m", "5"}) {
    EXPECT_FALSE(ParseDurationSeconds(bad).has_value()) << bad;
  }
}

TEST(StripLauncherPrefix, KnownLaunchers) {
  struct Case {
    const char* line;
    int rank;
    const char* text;
  };
  const Case cases[] = {
      {"[rank3]:[titan] step: 1", 3, "[titan] step: 1"},
      {"[default12]:iteration 1", 12, "iteration 1"},
      {"7: {'loss': 1.0}", 7, "{'loss': 1.0}"},
      {"[1,5]<stdout>: step=3, skipped=0", 5, " step=3, skipped=0"},
      {"(TaskRunner pid=16292) step:2 - a:1", -1, "step:2 - a:1"},
      // Not launcher prefixes: content that looks alike.
      {"[Rank 0] (after 1 iterations) memory (MB)", -1,
       "[Rank 0] (after 1 iterations) memory (MB)"},
      {"[2024-04-06 02:55:45] x", -1, "[2024-04-06 02:55:45] x"},
      {"2024-01-01 x", -1, "2024-01-01 x"},
  };
  for (const auto& c : cases) {
    const PrefixedLine p = StripLauncherPrefix(c.line);
    EXPECT_EQ(p.rank, c.rank) << c.line;
    EXPECT_EQ(p.text, c.text) << c.line;
  }
}

}  // namespace
}  // namespace strata

#include "strata/core/units.h"

#include <gtest/gtest.h>

#include <functional>
#include <type_traits>

namespace strata::units_test {
namespace {

// Mixing kinds must not compile: bytes plus seconds, or a bare double into Bytes.
static_assert(!std::is_invocable_v<std::plus<>, Bytes, Seconds>);
static_assert(!std::is_invocable_v<std::plus<>, FlopCount, FlopPerSecond>);
static_assert(!std::is_convertible_v<double, Bytes>);
static_assert(!std::is_convertible_v<Bytes, double>);

TEST(Units, DecimalAndBinaryScalesDiffer) {
  // 96 GB = 96e9 B = 96e9 / 2^30 GiB = 89.4070 GiB.
  EXPECT_NEAR(Bytes::GB(96).gib(), 89.4070, 1e-4);
  EXPECT_DOUBLE_EQ(Bytes::GiB(1).count(), 1073741824.0);
}

TEST(Units, CrossKindOperators) {
  // 148 TFLOP/s for 2 s is 296 TFLOP; 1 GB over 50 GB/s is 20 ms.
  EXPECT_DOUBLE_EQ((FlopPerSecond::Tera(148) * Seconds::Of(2)).tflop(), 296.0);
  EXPECT_NEAR((Bytes::GB(1) / BytesPerSecond::GBps(50)).ms(), 20.0, 1e-9);
  // 400 Gb/s is 50 GB/s: the one bits-to-bytes conversion.
  EXPECT_DOUBLE_EQ(BytesPerSecond::Gbps(400).gb_per_s(), 50.0);
}

struct ParseCase {
  const char* name;
  const char* input;
  double expected_bytes;
};

TEST(Units, ParseBytesAccepts) {
  const ParseCase cases[] = {
      {"decimal", "96GB", 96e9},
      {"binary", "80GiB", 80.0 * 1073741824.0},
      {"space and fraction", "1.5 TiB", 1.5 * 1099511627776.0},
      {"plain bytes", "512B", 512},
      {"exponent", "1e3MB", 1e9},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = ParseBytes(c.input);
    ASSERT_TRUE(r.ok()) << r.error().Format();
    EXPECT_DOUBLE_EQ(r->count(), c.expected_bytes);
  }
}

struct ErrorCase {
  const char* name;
  const char* input;
  const char* expected_error;
};

TEST(Units, ParseBytesRejects) {
  const ErrorCase cases[] = {
      {"bare G is ambiguous", "96G",
       "unknown unit 'G' in '96G' (expected one of: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)\n"
       "  hint: a bare K/M/G is ambiguous (decimal or binary?): write GB (1e9) or GiB (2^30)"},
      {"no unit", "96",
       "'96' has no unit (expected one of: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)\n"
       "  hint: a bare K/M/G is ambiguous (decimal or binary?): write GB (1e9) or GiB (2^30)"},
      {"negative", "-1GB", "expected a non-negative size, got '-1GB'"},
      {"not a number", "lots", "expected a size with a unit, got 'lots'"},
      {"empty", "", "expected a size with a unit, got ''"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = ParseBytes(c.input);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().Format(), c.expected_error);
  }
}

TEST(Units, ParseBandwidthKeepsBitsAndBytesApart) {
  // 400 Gb/s = 400e9 / 8 B/s = 50 GB/s; 900 GB/s stays 900e9 B/s.
  EXPECT_DOUBLE_EQ(ParseBandwidth("400Gb/s")->gb_per_s(), 50.0);
  EXPECT_DOUBLE_EQ(ParseBandwidth("900GB/s")->gb_per_s(), 900.0);
  EXPECT_DOUBLE_EQ(ParseBandwidth("4.0TB/s")->gb_per_s(), 4000.0);
  EXPECT_DOUBLE_EQ(ParseBandwidth("25Gbps")->gb_per_s(), 3.125);
  EXPECT_FALSE(ParseBandwidth("400G").ok());
}

TEST(Units, ParseSeconds) {
  EXPECT_DOUBLE_EQ(ParseSeconds("120s")->s(), 120.0);
  EXPECT_DOUBLE_EQ(ParseSeconds("5min")->s(), 300.0);
  EXPECT_DOUBLE_EQ(ParseSeconds("250ms")->s(), 0.25);
  EXPECT_FALSE(ParseSeconds("5").ok());
}

TEST(Units, FormatRoundTrips) {
  // parse(format(x)) == x to the printed precision.
  const Bytes b = Bytes::GB(13.84);
  EXPECT_EQ(FormatGB(b), "13.84 GB");
  auto back = ParseBytes(FormatGB(b));
  ASSERT_TRUE(back.ok());
  EXPECT_NEAR(back->gb(), 13.84, 1e-9);
  EXPECT_EQ(FormatGiB(Bytes::GiB(12.5)), "12.50 GiB");
  EXPECT_EQ(FormatGBps(BytesPerSecond::GBps(450)), "450.0 GB/s");
  EXPECT_EQ(FormatTflops(FlopPerSecond::Tera(148)), "148.0 TFLOP/s");
}

}  // namespace
}  // namespace strata::units_test

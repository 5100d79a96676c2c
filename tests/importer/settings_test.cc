// Settings' number readers: what Python's float() (argparse's type=float) and Hydra read is read,
// every malformed or truncated value is refused naming the key and the line it came from.
#include "strata/importer/settings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

Settings One(const std::string& value) {
  Settings s;
  s.Set("--lr", value, "--lr (line 4)");
  return s;
}

TEST(SettingsTest, NumberReadsWhatPythonReads) {
  const struct {
    const char* text;
    double expected;  // float(text) in Python 3
  } kCases[] = {
      {"1e-3", 0.001},   {".5", 0.5}, {"5.", 5.0},       {"0.001", 0.001},    {"3", 3.0},
      {"-0.5", -0.5},    {"+2", 2.0}, {"1E5", 100000.0}, {"1_000.5", 1000.5},  // PEP 515
      {"2.5e+2", 250.0},
  };
  for (const auto& c : kCases) {
    Settings s = One(c.text);
    auto r = s.Number("lr");
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().Format();
    ASSERT_TRUE(r->has_value()) << c.text;
    EXPECT_DOUBLE_EQ(**r, c.expected) << c.text;
    EXPECT_TRUE(s.Unused().empty()) << c.text;  // read, so not listed as dropped
  }
  Settings none;
  auto absent = none.Number("lr");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
}

TEST(SettingsTest, AMalformedOrTruncatedNumberIsRefusedNamingKeyAndLine) {
  // Each is a ValueError in Python's float() (inf and nan excepted: Python reads them, no setting
  // the importer reads takes them).
  for (const char* text :
       {"",     "abc", "-",  "+",    ".",   "1e",  "1e-",   "2.5e+", "0.0.1", "1.5.", "1,5", "0x10",
        "1__0", "_1",  "1_", "1_.5", "+-1", "--1", "1e999", "inf",   "nan",   "1 e3", "3GB"}) {
    Settings s = One(text);
    auto r = s.Number("lr");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput) << text;
    EXPECT_EQ(r.error().field, "lr") << text;
    EXPECT_EQ(r.error().message, std::string("expected a number, got '") + text + "'");
    EXPECT_EQ(r.error().hint, "read from --lr (line 4)") << text;
  }
}

TEST(SettingsTest, NumbersReadsASpaceSeparatedList) {
  Settings s = One("1e-2 0.001  .5");
  auto r = s.Numbers("lr");
  ASSERT_TRUE(r.ok()) << r.error().Format();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_DOUBLE_EQ((*r)[0], 0.01);
  EXPECT_DOUBLE_EQ((*r)[1], 0.001);
  EXPECT_DOUBLE_EQ((*r)[2], 0.5);
  Settings none;
  auto absent = none.Numbers("lr");
  ASSERT_TRUE(absent.ok());
  EXPECT_TRUE(absent->empty());

  const struct {
    const char* text;
    const char* message;
  } kBad[] = {
      {"0.01 x", "expected numbers separated by spaces, got '0.01 x' ('x' is not a number)"},
      {"1e-2 1e", "expected numbers separated by spaces, got '1e-2 1e' ('1e' is not a number)"},
      {"", "expected one number or more, got ''"},
      {"  ", "expected one number or more, got '  '"},
  };
  for (const auto& c : kBad) {
    Settings bad = One(c.text);
    auto e = bad.Numbers("lr");
    ASSERT_FALSE(e.ok()) << c.text;
    EXPECT_EQ(e.error().field, "lr") << c.text;
    EXPECT_EQ(e.error().message, c.message) << c.text;
    EXPECT_EQ(e.error().hint, "read from --lr (line 4)") << c.text;
  }
}

}  // namespace
}  // namespace strata

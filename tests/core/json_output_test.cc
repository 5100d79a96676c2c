// JSON numbers are exact: integral values print as integers, others with every digit a round
// trip needs (the old output rounded to 6 significant digits: 0.0815148 for 0.08151476...).
#include "strata/core/json_output.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata {
namespace {

TEST(JsonOutput, IntegralValuesAreIntegers) {
  // A parameter count held in a double (2,894,927,216) prints without ".0" or an exponent.
  EXPECT_EQ(JsonNumber(2894927216.0).dump(), "2894927216");
  // FLOPs per token of the reference model are integers above 1e10.
  EXPECT_EQ(JsonNumber(25060000000.0).dump(), "25060000000");
  EXPECT_TRUE(JsonNumber(3.0).is_number_integer());
}

TEST(JsonOutput, FractionsKeepFullPrecision) {
  // 8.151476...% must not come out as 8.15148.
  const double mfu = 8.1514764532;
  EXPECT_EQ(JsonNumber(mfu).dump(), "8.1514764532");
  EXPECT_DOUBLE_EQ(Json::parse(JsonNumber(1.0 / 3.0).dump()).get<double>(), 1.0 / 3.0);
}

TEST(JsonOutput, HugeValuesStayDoubles) {
  // Above 2^53 a double is not an exact integer count; it stays a double.
  EXPECT_TRUE(JsonNumber(1e300).is_number_float());
}

}  // namespace
}  // namespace strata

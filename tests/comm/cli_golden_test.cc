// Golden tests of `strata map` and `strata comm` (tests/golden/cli_map, cli_comm; the case
// layout is in support/golden.h). The numbers are checked independently by bandwidth_map_test,
// collective_cost_test and layout_traffic_test; these pin the presentation (units in headers,
// JSON field names, error text, exit codes).
#include <gtest/gtest.h>

#include "support/golden.h"

namespace strata {
namespace {

TEST(MapCommCliGolden, Map) { testing::RunCliGoldenSuite("cli_map"); }
TEST(MapCommCliGolden, Comm) { testing::RunCliGoldenSuite("cli_comm"); }

}  // namespace
}  // namespace strata

// Golden tests of `strata model` and `strata mfu` (tests/golden/cli_model, cli_mfu; the case
// layout is in support/golden.h). The numbers in the goldens are checked independently by
// param_count_test, flops_test and mfu_test; these pin the presentation (units in every header,
// JSON field names, error text).
#include <gtest/gtest.h>

#include "support/golden.h"

namespace strata {
namespace {

TEST(ModelCliGoldenTest, Model) { testing::RunCliGoldenSuite("cli_model"); }
TEST(ModelCliGoldenTest, Mfu) { testing::RunCliGoldenSuite("cli_mfu"); }

}  // namespace
}  // namespace strata

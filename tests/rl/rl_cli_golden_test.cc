// Golden tests of `strata rl` (tests/golden/cli_rl; the case layout is in support/golden.h). The
// numbers are checked independently by kv_cache_test, rollout_test and rl_step_test; these pin
// the presentation (units in every header, JSON field names, error text and exit codes).
#include <gtest/gtest.h>

#include "support/golden.h"

namespace strata {
namespace {

TEST(RlCliGoldenTest, Rl) { testing::RunCliGoldenSuite("cli_rl", 10); }

}  // namespace
}  // namespace strata

// Golden tests of `strata memory` (tests/golden/cli_memory; the case layout is in
// support/golden.h). The numbers are checked independently by ledger_test; these pin the
// presentation: units on every number, JSON field names, the verdict, the OOM advice and the
// error text.
#include <gtest/gtest.h>

#include "support/golden.h"

namespace strata {
namespace {

TEST(MemoryCliGolden, AllCases) { testing::RunCliGoldenSuite("cli_memory", 8); }

}  // namespace
}  // namespace strata

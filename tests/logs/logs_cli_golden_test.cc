// `strata logs` end to end on every case of tests/golden/logs/ (real public logs with their
// SOURCE, the synthetic reference case, malformed and empty inputs): stdout, stderr, exit code.
#include <gtest/gtest.h>

#include "support/golden.h"

namespace strata {
namespace {

TEST(LogsCli, GoldenCases) { testing::RunCliGoldenSuite("logs", 25); }

}  // namespace
}  // namespace strata

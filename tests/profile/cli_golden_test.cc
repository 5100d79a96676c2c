// `strata profile` as a user runs it, on the public traces and on broken input: the goldens of
// tests/golden/profile/ (stdout, stderr and the exit code; SOURCES.md there names each input).
#include <gtest/gtest.h>

#include "support/golden.h"

namespace strata {
namespace {

TEST(ProfileCli, Goldens) { strata::testing::RunCliGoldenSuite("profile", 8); }

}  // namespace
}  // namespace strata

// Golden tests of `strata import` (tests/golden/cli_import; inputs and their sources in
// tests/golden/cli_import/SOURCES.md). The values in them are checked field by field in
// import_job_test.cc; these pin the rendering, the provenance comments and the error text.
#include <gtest/gtest.h>

#include "support/golden.h"

namespace strata {
namespace {

TEST(ImportCliGoldenTest, Import) { testing::RunCliGoldenSuite("cli_import", 16); }

}  // namespace
}  // namespace strata

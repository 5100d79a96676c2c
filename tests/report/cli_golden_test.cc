// The step, plan and compare commands end to end: each case of tests/golden/cli_{step,plan,
// compare}/ runs the binary with its args and compares stdout, stderr and the exit code with
// the case's expected.out (UPDATE_GOLDEN=1 rewrites them; reviewers read the diff). The docs'
// examples of these commands (tests/cli/docs_examples_test.cc) are generated the same way.
// cli_step/calibrated_from_a_trace: a calibrated step prints neither the error band nor the
// record of its model's runs, which both measure the uncalibrated model.
#include <gtest/gtest.h>

#include "support/golden.h"

namespace strata {
namespace {

TEST(StepCliGolden, AllCases) { testing::RunCliGoldenSuite("cli_step", 8); }
TEST(PlanCliGolden, AllCases) { testing::RunCliGoldenSuite("cli_plan", 14); }
TEST(CompareCliGolden, AllCases) { testing::RunCliGoldenSuite("cli_compare", 5); }

}  // namespace
}  // namespace strata

// Golden tests of `strata model` and `strata mfu`: tests/golden/cli_model/<case>/ and
// tests/golden/cli_mfu/<case>/ each hold `args` (one argument per line, "{golden}" standing for
// the case directory) and expected.out (stdout then stderr, and the exit code). The numbers in
// the goldens are checked independently by param_count_test, flops_test and mfu_test; these
// tests pin the presentation (units in every header, JSON field names, error text).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/golden.h"

namespace strata {
namespace {

std::vector<std::string> ReadArgs(const std::string& dir) {
  std::vector<std::string> args;
  std::istringstream in(testing::ReadTestFile(dir + "/args"));
  std::string line;
  while (std::getline(in, line)) {
    const auto pos = line.find("{golden}");
    if (pos != std::string::npos) line.replace(pos, 8, testing::TestPath(dir));
    if (!line.empty()) args.push_back(line);
  }
  return args;
}

void RunSuite(const std::string& suite) {
  const auto cases = testing::GoldenCases("golden/" + suite);
  ASSERT_FALSE(cases.empty()) << suite;
  for (const auto& name : cases) {
    const std::string dir = "golden/" + suite + "/" + name;
    const testing::CliResult r = testing::RunCli(ReadArgs(dir));
    std::string actual =
        r.out + "--- stderr\n" + r.err + "--- exit code " + std::to_string(r.exit_code) + "\n";
    // Paths of the checkout differ between machines: write the case directory as {golden}.
    const std::string abs = testing::TestPath(dir);
    for (size_t pos; (pos = actual.find(abs)) != std::string::npos;) {
      actual.replace(pos, abs.size(), "{golden}");
    }
    EXPECT_TRUE(testing::MatchesGolden(dir + "/expected.out", actual)) << dir;
  }
}

TEST(ModelCliGoldenTest, Model) { RunSuite("cli_model"); }
TEST(ModelCliGoldenTest, Mfu) { RunSuite("cli_mfu"); }

}  // namespace
}  // namespace strata

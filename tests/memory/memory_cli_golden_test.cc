// Golden tests of `strata memory`: tests/golden/cli_memory/<case>/ holds `args` (one argument
// per line, "{golden}" standing for the case directory), any input files, and expected.out
// (stdout, then stderr, then the exit code). The numbers are checked independently by
// ledger_test; these pin the presentation: units on every number, JSON field names, the
// verdict, the OOM advice and the error text.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

TEST(MemoryCliGolden, AllCases) {
  const auto cases = testing::GoldenCases("golden/cli_memory");
  ASSERT_GE(cases.size(), 8u);
  for (const auto& name : cases) {
    const std::string dir = "golden/cli_memory/" + name;
    const testing::CliResult r = testing::RunCli(ReadArgs(dir));
    std::string actual = r.out + "--- stderr\n" + r.err + "--- exit code " +
                         std::to_string(r.exit_code) + "\n";
    // The checkout's location differs between machines: write the case directory as {golden}.
    const std::string abs = testing::TestPath(dir);
    for (size_t pos; (pos = actual.find(abs)) != std::string::npos;) {
      actual.replace(pos, abs.size(), "{golden}");
    }
    EXPECT_TRUE(testing::MatchesGolden(dir + "/expected.out", actual)) << dir;
  }
}

}  // namespace
}  // namespace strata

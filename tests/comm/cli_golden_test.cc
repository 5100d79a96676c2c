// Golden tests of `strata map` and `strata comm`: tests/golden/cli_map/<case>/ and
// tests/golden/cli_comm/<case>/ each hold `args` (one argument per line, "{golden}" standing for
// the case directory) and expected.out (stdout, stderr and the exit code). The numbers are
// checked independently by bandwidth_map_test, collective_cost_test and layout_traffic_test;
// these pin the presentation (units in headers, JSON field names, error text, exit codes).
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/golden.h"

namespace strata {
namespace {

std::vector<std::string> CaseArgs(const std::string& dir) {
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

void RunGoldenSuite(const std::string& suite) {
  const auto cases = testing::GoldenCases("golden/" + suite);
  ASSERT_FALSE(cases.empty()) << suite;
  for (const auto& name : cases) {
    const std::string dir = "golden/" + suite + "/" + name;
    const testing::CliResult r = testing::RunCli(CaseArgs(dir));
    std::string actual = r.out + "--- stderr\n" + r.err + "--- exit code " +
                         std::to_string(r.exit_code) + "\n";
    const std::string abs = testing::TestPath(dir);
    for (size_t pos; (pos = actual.find(abs)) != std::string::npos;) {
      actual.replace(pos, abs.size(), "{golden}");
    }
    EXPECT_TRUE(testing::MatchesGolden(dir + "/expected.out", actual)) << dir;
  }
}

TEST(MapCommCliGolden, Map) { RunGoldenSuite("cli_map"); }
TEST(MapCommCliGolden, Comm) { RunGoldenSuite("cli_comm"); }

}  // namespace
}  // namespace strata

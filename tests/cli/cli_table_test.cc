// The command table as a user meets it: every subcommand answers --help, rejects an unknown
// flag with exit code 2, and a misspelt command gets "did you mean".
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/golden.h"

namespace strata {
namespace {

// The command table as main.cc holds it, read from `strata help` (its "commands:" section), so
// a command added to the table is checked without editing this file.
std::vector<std::string> CommandTable() {
  const auto help = testing::RunCli({"help"});
  std::vector<std::string> names;
  const size_t start = help.out.find("commands:\n");
  if (start == std::string::npos) return names;
  size_t pos = start + 10;
  while (pos < help.out.size() && help.out.compare(pos, 2, "  ") == 0) {
    const size_t end = help.out.find(' ', pos + 2);
    names.push_back(help.out.substr(pos + 2, end - pos - 2));
    pos = help.out.find('\n', pos) + 1;
  }
  return names;
}

TEST(CliTable, TheTableIsReadFromTheBinary) {
  const auto names = CommandTable();
  // The commands the README documents are all there (the table may hold more).
  for (const char* name : {"model", "mfu", "memory", "map", "comm", "hang", "collect"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

// The commands that read a job take the same job arguments (job_options.h).
TEST(CliTable, JobCommandsShareTheJobOptions) {
  for (const char* command : {"memory", "mfu", "map", "step", "plan", "checkpoint", "report"}) {
    SCOPED_TRACE(command);
    const auto help = testing::RunCli({command, "--help"});
    for (const char* option : {"--model", "--set", "--from", "job"}) {
      EXPECT_NE(help.out.find(option), std::string::npos) << option << "\n" << help.out;
    }
  }
}

TEST(CliTable, EveryCommandHasHelpAndRejectsUnknownFlags) {
  const auto commands = CommandTable();
  ASSERT_GE(commands.size(), 7u);
  for (const auto& command : commands) {
    SCOPED_TRACE(command);
    const auto help = testing::RunCli({command, "--help"});
    EXPECT_EQ(help.exit_code, 0) << help.err;
    EXPECT_NE(help.out.find("Usage: strata " + command), std::string::npos) << help.out;
    const auto bad = testing::RunCli({command, "--no-such-flag"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_EQ(bad.err.rfind("strata: error: ", 0), 0u) << bad.err;
  }
}

TEST(CliTable, UnknownCommandSuggestsTheClosest) {
  const auto r = testing::RunCli({"memroy"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "strata: error: unknown command 'memroy'\n  hint: did you mean 'memory'?\n");
}

TEST(CliTable, HelpListsEveryCommand) {
  const auto r = testing::RunCli({"help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* command : {"model", "mfu", "memory", "map", "comm", "hang", "collect"}) {
    EXPECT_NE(r.out.find(std::string("  ") + command + " "), std::string::npos) << command;
  }
  const auto version = testing::RunCli({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("schema_version 1"), std::string::npos) << version.out;
}

}  // namespace
}  // namespace strata

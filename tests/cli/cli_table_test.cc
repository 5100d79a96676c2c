// The command table as a user meets it: every subcommand answers --help, rejects an unknown
// flag with exit code 2, and a misspelt command gets "did you mean".
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/golden.h"

namespace strata {
namespace {

const std::vector<std::string> kCommands = {"model", "mfu",  "memory",  "map",      "comm",
                                            "hang",  "collect", "preflight", "checkpoint"};

TEST(CliTable, EveryCommandHasHelpAndRejectsUnknownFlags) {
  for (const auto& command : kCommands) {
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
  for (const auto& command : kCommands) {
    EXPECT_NE(r.out.find("  " + command + " "), std::string::npos) << command;
  }
  const auto version = testing::RunCli({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("schema_version 1"), std::string::npos) << version.out;
}

}  // namespace
}  // namespace strata

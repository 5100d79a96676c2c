// With watchdog lines as the only evidence, the verdict's headline, its "hang" field and the exit
// code must agree (fuzzing round one: the headline said "stalled at collective #12" while the JSON
// said "hang": false and the exit code was 0). A watchdog logs a queue only when a collective
// timed out or failed, so each of these real logs is a hang.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/golden.h"

namespace strata::hang {
namespace {

TEST(WatchdogOnlyVerdict, HeadlineHangFieldAndExitCodeAgree) {
  for (const char* c :
       {"timeout_generations", "desync_report", "torch_2_6_followon", "ansi_crlf"}) {
    SCOPED_TRACE(c);
    const auto r = testing::RunCli(
        {"hang", "--json", testing::TestPath(std::string("golden/watchdog/") + c + "/input.log")});
    const auto v = nlohmann::json::parse(r.out);
    const std::string headline = v["headline"];
    const bool says_hang = headline.rfind("hang: ", 0) == 0;
    EXPECT_EQ(says_hang, v["hang"].get<bool>()) << headline;
    EXPECT_EQ(r.exit_code, v["hang"].get<bool>() ? 1 : 0) << r.err;
    EXPECT_TRUE(says_hang) << headline;  // a timeout the watchdog caught is a hang
  }
}

}  // namespace
}  // namespace strata::hang

#include "strata/hang/parsers/nccl_ras.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/golden.h"

namespace strata::hang {
namespace {

// tests/golden/nccl_ras/<case>/input.{txt,json} -> expected.json: the report or the error text.
TEST(NcclRasGolden, AllCases) {
  const auto cases = testing::GoldenCases("golden/nccl_ras");
  ASSERT_GE(cases.size(), 15u);
  for (const std::string& name : cases) {
    SCOPED_TRACE(name);
    std::string input;
    for (const auto& f :
         std::filesystem::directory_iterator(testing::TestPath("golden/nccl_ras/" + name))) {
      if (f.path().filename().string().starts_with("input")) input = f.path().filename().string();
    }
    ASSERT_FALSE(input.empty());
    const std::string relative = "golden/nccl_ras/" + name + "/" + input;
    const auto report = ParseNcclRas(testing::ReadTestFile(relative), relative);
    Json out;
    if (report.ok()) {
      out = ToJson(*report);
    } else {
      out["error"] = report.error().Format();
    }
    EXPECT_TRUE(
        testing::MatchesGolden("golden/nccl_ras/" + name + "/expected.json", DumpJson(out)));
    EXPECT_EQ(!report.ok(), name.starts_with("error_") || name.starts_with("hostile_"));
  }
}

// The reference case's DEAD/INCOMPLETE sample (section 3.7): the same dead process is missing
// rank 17 of the 40-rank world communicator, rank 1 of its EP communicator and rank 2 of its
// expert-DP communicator; the communicator sizes come from the table's "Ranks per comm" column.
TEST(NcclRas, DeadProcessAndCommunicatorLocalRanks) {
  const std::string relative = "golden/nccl_ras/text_dead_incomplete/input.txt";
  const auto report = ParseNcclRas(testing::ReadTestFile(relative), relative);
  ASSERT_TRUE(report.ok()) << report.error().Format();
  EXPECT_EQ(report->nccl_version, "2.27.5+cuda12.8");
  EXPECT_EQ(report->total_processes, 40);  // "Processes (total)" column
  ASSERT_EQ(report->dead_or_unreachable.size(), 1u);
  EXPECT_EQ(report->dead_or_unreachable[0].pid, 3181122);
  EXPECT_EQ(report->dead_or_unreachable[0].host, "10.10.0.13");
  EXPECT_EQ(report->dead_or_unreachable[0].gpu, 1);
  EXPECT_EQ(report->dead_or_unreachable[0].status, "DEAD");
  struct Expected {
    const char* hash;
    int64_t nranks, missing_rank;
  };
  const Expected expected[] = {
      {"cf264af53edbe986", 40, 17}, {"5b1e07c2d94a3f10", 8, 1}, {"a03d6e9f1c27b854", 5, 2}};
  ASSERT_EQ(report->communicators.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const RasCommunicator& c = report->communicators[i];
    EXPECT_EQ(c.hash, expected[i].hash);
    EXPECT_EQ(c.status, "INCOMPLETE");
    EXPECT_EQ(c.nranks, expected[i].nranks);
    ASSERT_EQ(c.missing.size(), 1u);
    EXPECT_EQ(c.missing[0].comm_rank, expected[i].missing_rank);
  }
}

// The documented MISMATCH sample: 26 ranks at 6650, 6 at 6649 and those six are listed.
TEST(NcclRas, MismatchListsTheRanksBehind) {
  const std::string relative = "golden/nccl_ras/text_documented_mismatch/input.txt";
  const auto report = ParseNcclRas(testing::ReadTestFile(relative), relative);
  ASSERT_TRUE(report.ok()) << report.error().Format();
  ASSERT_EQ(report->communicators.size(), 1u);
  const RasCommunicator& c = report->communicators[0];
  EXPECT_EQ(c.status, "MISMATCH");
  EXPECT_EQ(c.nranks, 32);
  ASSERT_EQ(c.count_groups.size(), 2u);
  EXPECT_EQ(c.count_groups[0].ranks_count, 26);
  EXPECT_EQ(c.count_groups[0].op_count, 6650);
  EXPECT_EQ(c.count_groups[1].ranks_count, 6);
  EXPECT_EQ(c.count_groups[1].op_count, 6649);
  EXPECT_EQ(c.count_groups[1].ranks, (std::vector<int64_t>{0, 2, 3, 4, 5, 7}));
  const std::map<int64_t, int64_t> behind = {{0, 6649}, {2, 6649}, {3, 6649},
                                             {4, 6649}, {5, 6649}, {7, 6649}};
  EXPECT_EQ(c.coll_count_by_rank, behind);
}

// JSON: rank 2 launched 1843 + 10 = 1853 operations, ranks 0 and 1 launched 1844 + 10 = 1854;
// rank 3 is missing and considered dead.
TEST(NcclRas, JsonCountsAndDeadRank) {
  const std::string relative = "golden/nccl_ras/json_mismatch/input.json";
  const auto report = ParseNcclRas(testing::ReadTestFile(relative), relative);
  ASSERT_TRUE(report.ok()) << report.error().Format();
  const RasCommunicator& c = report->communicators.at(0);
  EXPECT_EQ(c.status, "INCOMPLETE,MISMATCH");
  EXPECT_EQ(c.hash, "27a079b828ff1a75");
  EXPECT_EQ(c.nranks, 4);
  const std::map<int64_t, int64_t> counts = {{0, 1854}, {1, 1854}, {2, 1853}};
  EXPECT_EQ(c.coll_count_by_rank, counts);
  ASSERT_EQ(report->dead_or_unreachable.size(), 1u);
  EXPECT_EQ(report->dead_or_unreachable[0].pid, 201);
  EXPECT_EQ(report->dead_or_unreachable[0].status, "DEAD");
}

TEST(NcclRas, Errors) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"",
       "r.txt: the file is empty, expected NCCL RAS output (ncclras or 'echo verbose status | "
       "nc localhost 28028')"},
      {"\nERROR: Unknown command\n",
       "r.txt:2: the RAS server answered with an error: ERROR: "
       "Unknown command"},
      {"hello\n",
       "r.txt:1: expected NCCL RAS output (a 'NCCL version' line, a 'Job summary' or a "
       "communicator table), found 'hello'"},
      {"{\"nccl_version\": \"2.29.1\"}",
       "r.txt: communicators: missing required field (is this "
       "`ncclras -f json` output?)"},
  };
  for (const Case& c : cases) {
    const auto report = ParseNcclRas(c.text, "r.txt");
    ASSERT_FALSE(report.ok()) << c.text;
    EXPECT_EQ(report.error().Format(), c.error);
  }
}

}  // namespace
}  // namespace strata::hang

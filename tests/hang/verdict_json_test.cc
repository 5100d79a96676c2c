// The verdict JSON for scripts (issue 8, "numbers and units"): every rank set carries an array of
// integers next to its "16-23" string, and a rank placed on a host carries host and local rank as
// separate fields. Checked on the fixture bundles of tests/golden/hang/ (40 ranks as 5 nodes of
// 8, h20-node01..05, RANK = 8 * node index + LOCAL_RANK; tests/golden/hang/README.md).
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/golden.h"

namespace strata::hang::verdict_json_test {
namespace {

using strata::testing::RunCli;
using strata::testing::TestPath;

nlohmann::json Verdict(const std::string& fixture) {
  const auto r = RunCli({"hang", "--json", TestPath("golden/hang/" + fixture + "/input")});
  return nlohmann::json::parse(r.out);
}

std::vector<int64_t> Range(int64_t first, int64_t last) {
  std::vector<int64_t> out;
  for (int64_t r = first; r <= last; ++r) out.push_back(r);
  return out;
}

TEST(VerdictJson, RankSetsAreArraysAsWellAsRanges) {
  // missing-node: h20-node03's bundle never came back. Node 3 is the third of five 8-GPU nodes,
  // so its ranks are 2*8 .. 2*8+7 = 16..23; the other 32 ranks were seen.
  const auto j = Verdict("missing-node");
  EXPECT_EQ(j["schema_version"], 1);  // fields were added, none changed meaning
  EXPECT_EQ(j["ranks"]["missing"]["ranges"], "16-23");
  EXPECT_EQ(j["ranks"]["missing"]["list"].get<std::vector<int64_t>>(), Range(16, 23));
  std::vector<int64_t> seen = Range(0, 15);
  for (int64_t r : Range(24, 39)) seen.push_back(r);
  EXPECT_EQ(j["ranks"]["seen"]["list"].get<std::vector<int64_t>>(), seen);
  EXPECT_EQ(j["ranks"]["seen"]["count"], 32);
  EXPECT_EQ(j["ranks"]["dead"]["list"].get<std::vector<int64_t>>(), std::vector<int64_t>{});
  EXPECT_EQ(j["culprit"]["ranks"]["list"].get<std::vector<int64_t>>(), Range(16, 23));
}

TEST(VerdictJson, TheCulpritCarriesHostAndLocalRankAsFields) {
  // reference-oom-teardown: the culprit is rank 17 = 8 * 2 + 1, i.e. the third node (h20-node03),
  // LOCAL_RANK 1. The human string stays; the fields are separate.
  const auto j = Verdict("reference-oom-teardown");
  EXPECT_EQ(j["culprit"]["host"], "h20-node03 (LOCAL_RANK 1, GPU 1)");
  ASSERT_EQ(j["culprit"]["processes"].size(), 1u);
  const auto& p = j["culprit"]["processes"][0];
  EXPECT_EQ(p["rank"], 17);
  EXPECT_EQ(p["host"], "h20-node03");
  EXPECT_EQ(p["local_rank"], 1);
  EXPECT_EQ(p["source"], "manifest");
  EXPECT_EQ(j["finding"]["processes"], j["culprit"]["processes"]);
}

TEST(VerdictJson, EveryPlacedRankHasItsHostAndLocalRank) {
  const auto j = Verdict("reference-oom-teardown");
  ASSERT_EQ(j["processes"].size(), 40u);
  for (const auto& p : j["processes"]) {
    const int64_t rank = p["rank"].get<int64_t>();
    EXPECT_EQ(p["host"], "h20-node0" + std::to_string(rank / 8 + 1)) << rank;
    EXPECT_EQ(p["local_rank"], rank % 8) << rank;
  }
}

}  // namespace
}  // namespace strata::hang::verdict_json_test

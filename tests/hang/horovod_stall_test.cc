// Horovod's stall inspector warnings (horovod_stall.h). The message texts follow Horovod's
// source: the newest format is StallInspector::CheckForStalledTensors in
// horovod/common/stall_inspector.cc (horovod/horovod, commit
// 0f37436eae7485aa586231f85b8fc6b2ad4b78ca); the "[missing ranks:" and "[ready ranks:" lines
// are the older operations.cc's; real pastes of each are cases in tests/golden/hang-real.
#include "strata/hang/parsers/horovod_stall.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/hang/analysis/analysis.h"
#include "strata/hang/analysis/horovod_finding.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::hang {
namespace {

constexpr const char* kWarning =
    "[2021-05-01 10:00:00.000000: W horovod/common/stall_inspector.cc:107] One or more tensors "
    "were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for "
    "remainder of ranks for more than 60 seconds. This may indicate that different ranks are "
    "trying to submit different tensors or that only subset of ranks is submitting tensors, "
    "which will cause deadlock. \n";

std::vector<FailureSignal> Stalls(const std::string& text) {
  std::vector<FailureSignal> out;
  for (FailureSignal& s : ScanFailures(text, "rank0.log")) {
    if (s.kind == FailureKind::kHorovodStall) out.push_back(std::move(s));
  }
  return out;
}

// The shutdown variant: stall_inspector.cc marks each rank past
// HOROVOD_STALL_SHUTDOWN_TIME_SECONDS with '!' after its number and ends with the "Will
// shutdown." sentence. Ranks 1 and 3 are listed, so those two are missing; the mark says shutdown.
TEST(HorovodStall, ShutdownVariantNamesTheMarkedRanks) {
  const auto s = Stalls(std::string(kWarning) +
                        "Missing ranks:\n"
                        "1!: [grad_a, grad_b]\n"
                        "3: [grad_a]\n"
                        "One or more rank (marked by \"!\") is stalled for longer than 120 "
                        "seconds. Will shutdown.\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].ranks, (std::vector<int64_t>{1, 3}));
  EXPECT_NE(s[0].detail.find("shuts down"), std::string::npos) << s[0].detail;
  EXPECT_EQ(s[0].line, 3);  // the first list line, "1!: [": line 1 header, 2 "Missing ranks:"
}

// Horovod up to 0.13 listed the ranks that ARE ready. Ready 5, 6, 3, 1, 4, 0: the ranks 0..6
// (6 is the highest listed, so 0..6 exist) not in that list are {2}.
TEST(HorovodStall, ReadyRanksFormatGivesTheRanksNotListed) {
  const auto s = Stalls(
      "Stalled ops:\n"
      "HorovodBroadcast_w_0 [ready ranks: 5, 6, 3, 1, 4, 0], \n"
      "HorovodBroadcast_b_0 [ready ranks: 5, 6, 3, 1, 4, 0], \n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].ranks, std::vector<int64_t>{2});
  // Every rank up to the highest listed is ready: the missing ones are above it, not known.
  const auto above = Stalls("Stalled ops:\nHorovodAllreduce_x_0 [ready ranks: 1, 0], \n");
  ASSERT_EQ(above.size(), 1u);
  EXPECT_TRUE(above[0].ranks.empty());
}

// Open MPI's --tag-output tag torn into a line when ranks write at once.
TEST(HorovodStall, MpiTagsAreDroppedWhereverTheyAre) {
  EXPECT_EQ(StripMpiTags("[1,0]<stderr>:[2019-04-13 13:53:31.[1,0]<stderr>:851588: W x"),
            "[2019-04-13 13:53:31.851588: W x");
  EXPECT_EQ(StripMpiTags("[1,12]<stdout>:3: [t]"), "3: [t]");
  EXPECT_EQ(StripMpiTags("[rank3]: [1,x]<stderr>: kept"), "[rank3]: [1,x]<stderr>: kept");
  const auto s = Stalls(
      "[1,0]<stderr>:Stalled ranks:\n"  // no first sentence yet: not a list
      "[1,0]<stderr>:4: [t]\n" +
      std::string("[1,0]<stderr>:") + kWarning +
      "[1,0]<stderr>:Stalled ranks:\n"
      "[1,0]<stderr>:6: [horovod_allreduce.0, horovod_allreduce.1 ...][1,0]<stderr>:\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].ranks, std::vector<int64_t>{6});
}

// Truncated: the paste ends inside the list, mid-name; the rank at the line's start stands.
// Malformed: a rank list that is not numbers, or a number no job has, is no rank list.
TEST(HorovodStall, TruncatedAndMalformedLists) {
  auto s = Stalls(std::string(kWarning) + "Missing ranks:\n0: [grad_a, grad_b\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].ranks, std::vector<int64_t>{0});
  EXPECT_TRUE(Stalls(std::string(kWarning)).empty());  // cut before any list: no ranks named
  EXPECT_TRUE(Stalls("x [missing ranks: one]\n").empty());
  EXPECT_TRUE(Stalls("x [missing ranks: 99999999999]\n").empty());
  EXPECT_TRUE(Stalls("x [missing ranks: ]\n").empty());
  EXPECT_TRUE(Stalls("Missing ranks:\n3: [1, 2]\n").empty());  // without the warning: any text
}

// Two warnings a minute apart in one log: rank 0 caught up between them (listed in the first
// only), so the verdict names the second's ranks, {4}.
TEST(HorovodStall, TheLastWarningOfALogCounts) {
  EvidenceSet set;
  AddEvidenceFile(set,
                  std::string(kWarning) + "Missing ranks:\n0: [a]\n4: [a]\n" + kWarning +
                      "Missing ranks:\n4: [a]\n",
                  "rank0.log");
  Finding f;
  ASSERT_TRUE(HorovodStall(set, f));
  EXPECT_EQ(f.kind, "lagging_rank");
  EXPECT_EQ(f.ranks, std::vector<int64_t>{4});
  const Verdict v = Analyze(set, {});
  EXPECT_TRUE(v.hang);
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{4});
}

}  // namespace
}  // namespace strata::hang

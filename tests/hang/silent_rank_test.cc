// The silent rank (issue 9): ranks that time out in a collective while a rank of the job left no
// line at all point at that rank: it never reached the collective. The lines follow torch 2.4's
// watchdog format as pasted in public reports (tests/golden/hang-real/, e.g. basicsr-737).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "strata/hang/analysis/analysis.h"
#include "strata/hang/evidence/evidence_set.h"

namespace strata::hang {
namespace {

std::string TimeoutLine(int rank, int64_t seq) {
  return fmt::format(
      "[rank{0}]:[E1130 10:00:0{0}.000000000 ProcessGroupNCCL.cpp:616] [Rank {0}] Watchdog caught "
      "collective "
      "operation timeout: WorkNCCL(SeqNum={1}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
      "Timeout(ms)=600000) ran "
      "for 600041 milliseconds before timing out.\n",
      rank, seq);
}

Verdict AnalyzeLog(const std::string& text) {
  EvidenceSet set;
  AddEvidenceFile(set, text, "train.log");
  return Analyze(set, {});
}

// Ranks 1, 2 and 3 time out at SeqNum 808; rank 0 printed nothing. The world is at least 4
// (ranks 0..3 appear or are implied), rank 0 is the only one unheard: 1 silent rank against 3
// waiters is a minority, so it is named.
TEST(SilentRank, ARankWithNoLineWhileTheOthersTimeOutIsTheSuspect) {
  const Verdict v = AnalyzeLog(TimeoutLine(1, 808) + TimeoutLine(2, 808) + TimeoutLine(3, 808));
  EXPECT_EQ(v.silent, std::vector<int64_t>{0});
  EXPECT_EQ(v.finding.kind, "silent_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{0});
  EXPECT_EQ(v.finding.op, "ALLREDUCE");
  EXPECT_EQ(v.finding.seq, 808);
  EXPECT_EQ(v.finding.timeout_ms, 600000);
  ASSERT_TRUE(v.culprit.has_value());
  EXPECT_EQ(v.culprit->ranks, std::vector<int64_t>{0});
  EXPECT_TRUE(v.hang);
}

// NCCL's init line gives the communicator size: 8 ranks. Ranks 0-5 time out and rank 6 printed
// its init line; rank 7 is the only rank without a line (1 of 6 waiters: at most a quarter).
TEST(SilentRank, TheWorldSizeComesFromNcclInitLines) {
  std::string log =
      "[rank6]:node2:4242:4300 [6] NCCL INFO comm 0x55d0c0a0 rank 6 nranks 8 cudaDev 6 nvmlDev 6 "
      "busId 0xb000 "
      "commId 0x1f2e3d4c5b6a7988 - Init COMPLETE\n";
  for (int r = 0; r < 6; ++r) log += TimeoutLine(r, 12);
  const Verdict v = AnalyzeLog(log);
  EXPECT_EQ(v.silent, std::vector<int64_t>{7});
  EXPECT_EQ(v.finding.kind, "silent_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{7});
}

// One rank's paste says nothing about its peers: no silent rank is inferred from it.
TEST(SilentRank, OneRanksTimeoutNamesNobodyElse) {
  const Verdict v = AnalyzeLog(TimeoutLine(3, 5));
  EXPECT_TRUE(v.silent.empty());
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  EXPECT_TRUE(v.finding.ranks.empty());
}

// Ranks 4-7 time out (one node's log of a two-node job): ranks 0-3 are as many as the waiters,
// a partial copy rather than four stuck ranks. They are listed in a note, not named as culprits.
TEST(SilentRank, HalfAJobWithoutLinesIsAPartialCopyNotSilence) {
  const Verdict v =
      AnalyzeLog(TimeoutLine(4, 9) + TimeoutLine(5, 9) + TimeoutLine(6, 9) + TimeoutLine(7, 9));
  EXPECT_TRUE(v.silent.empty());
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  bool noted = false;
  for (const std::string& n : v.notes)
    noted = noted || n.find("ranks 0-3 of a world of 8") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace strata::hang

// The silent rank (issue 9): ranks that time out in a collective while a rank of the job left no
// line at all point at that rank: it never reached the collective. The lines follow torch 2.4's
// watchdog format as pasted in public reports (tests/golden/hang-real/, e.g. basicsr-737).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <string>

#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"

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
    noted = noted || n.find("ranks 0-3 of a world of at least 8") != std::string::npos;
  EXPECT_TRUE(noted);
}

bool HasNote(const Verdict& v, const std::string& text) {
  for (const std::string& n : v.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

// Fuzzing finding 18: a 3 KB input whose lines named a rank in the tens of millions made the
// analysis walk every rank up to it (40 s, 540 MB). A rank beyond kMaxWorldSize (2^20) is a
// misread number: no world is inferred from it, so nobody is named silent and no note lists
// the ranks below it; the timeouts are still reported.
TEST(SilentRank, ARankNumberBeyondAnyJobInfersNoWorld) {
  const Verdict v = AnalyzeLog(TimeoutLine(1, 7) + TimeoutLine(2, 7) + TimeoutLine(3, 7) +
                               "[Rank 1099511627776] Watchdog caught collective operation "
                               "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, "
                               "NumelOut=1, Timeout(ms)=600000) ran for 600041 milliseconds "
                               "before timing out.\n");
  EXPECT_TRUE(v.silent.empty());
  EXPECT_FALSE(HasNote(v, "of a world of"));
  EXPECT_TRUE(HasNote(v, "rank 1099511627776 is beyond any job (1048576 ranks at most)"));
  EXPECT_EQ(v.finding.kind, "collective_timeout");
}

// An init line claiming 2^40 ranks is corrupt: ignored, and the world is inferred from the ranks
// that appear (0..3), where rank 0 alone is unheard against three waiters: named silent.
TEST(SilentRank, AnNcclInitLineBeyondAnyJobIsIgnored) {
  const Verdict v = AnalyzeLog(
      "[rank1]:node1:1:2 [1] NCCL INFO comm 0x55d0c0a0 rank 1 nranks 1099511627776 cudaDev 1 - "
      "Init COMPLETE\n" +
      TimeoutLine(1, 7) + TimeoutLine(2, 7) + TimeoutLine(3, 7));
  EXPECT_EQ(v.silent, std::vector<int64_t>{0});
}

// WORLD_SIZE 2^20 (the largest world taken) with ranks 1-4 timing out: 1,048,572 ranks unheard,
// far more than the waiters, listed as runs in one note: "0,5-1048575".
TEST(SilentRank, AMillionRankWorldIsNotedAsRuns) {
  EvidenceSet set;
  AddEvidenceFile(set,
                  TimeoutLine(1, 3) + TimeoutLine(2, 3) + TimeoutLine(3, 3) + TimeoutLine(4, 3),
                  "train.log");
  set.ranks.push_back({});  // the manifest record of rank 1 (a waiter), with its WORLD_SIZE
  set.ranks.back().process.rank = 1;
  set.ranks.back().process.pid = 4242;
  set.ranks.back().process.world_size = int64_t{1} << 20;
  const Verdict v = Analyze(set, {});
  EXPECT_TRUE(v.silent.empty());
  EXPECT_TRUE(HasNote(v, "ranks 0,5-1048575 of a world of 1048576"))
      << fmt::format("{}", fmt::join(v.notes, "\n"));
}

}  // namespace
}  // namespace strata::hang

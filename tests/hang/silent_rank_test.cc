// The silent rank (issue 9): ranks that time out in a collective while a rank of the job left no
// line at all point at that rank: it never reached the collective. Issue 33: only where the log
// shows it went on past the timeouts (a launcher's record of a worker's end after them); a text
// that ends at the timeout lines is an excerpt, and the missing rank's own line may follow
// (silent_ranks.h). The lines follow torch 2.4's watchdog format as pasted in public reports
// (tests/golden/hang-real/, e.g. basicsr-737).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <string>

#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang::silent_rank_test {
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

bool HasNote(const Verdict& v, const std::string& text) {
  for (const std::string& n : v.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

// torchrun's record of a worker's end, as torch 2.4's elastic agent prints it once the watchdog
// has taken worker `local_rank` down (SIGABRT, exit code -6).
std::string LauncherLine(int local_rank) {
  return fmt::format(
      "E1130 10:00:09.000000 4200 torch/distributed/elastic/multiprocessing/api.py:833] failed "
      "(exitcode: -6) local_rank: {0} (pid: 424{0}) of binary: /usr/bin/python3\n",
      local_rank);
}

// Ranks 1, 2 and 3 time out at SeqNum 808; rank 0 printed nothing, and the text ends at the
// timeout lines. Until issue 33 rank 0 was named silent here. That expectation was wrong: this is
// the shape of two real pastes (ai2cm/ace#348: ranks 3, 2, 1 time out at SeqNum 1132079 and the
// paste is cut right after; xiuqhou/Salience-DETR#8: ranks 3, 1, 0, then the cut), where the
// missing rank's own line (rank 0's; rank 2's in the second) may simply follow: each rank's
// watchdog prints its own timeout line (ProcessGroupNCCL's watchdogHandler checks only the work
// its own rank enqueued), and nothing after the three lines shows the log went on. So no rank is
// named, and a note says which rank was not seen, why, and what would settle it.
TEST(SilentRank, ALogThatEndsAtTheTimeoutLinesNamesNoSilentRank) {
  const Verdict v = AnalyzeLog(TimeoutLine(1, 808) + TimeoutLine(2, 808) + TimeoutLine(3, 808));
  EXPECT_TRUE(v.silent.empty());
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_EQ(v.finding.op, "ALLREDUCE");
  EXPECT_EQ(v.finding.seq, 808);
  EXPECT_FALSE(v.culprit.has_value());
  EXPECT_TRUE(v.hang);
  // World: ranks 1..3 appear, so at least 4; rank 0 is the one gap. The last timeout line is
  // rank 3's, line 3 of train.log.
  EXPECT_TRUE(HasNote(v,
                      "rank 0 of a world of at least 4 (from the ranks that appear (up to rank 3)) "
                      "left no line, dump or stack while ranks 1-3 timed out, and is not named "
                      "silent: the evidence ends with no launcher record after the timeouts (the "
                      "last timeout line is train.log:3), and each rank's watchdog prints its own "
                      "timeout line, so its line may simply lie past the end of this excerpt; the "
                      "log on to the launcher's exit records, rank 0's own log, or a py-spy or "
                      "Flight Recorder dump of rank 0 would settle it"))
      << fmt::format("{}", fmt::join(v.notes, "\n"));
}

// The same three timeouts, and the log goes on to torchrun's record that worker 1 ended (the
// watchdog took it down): by then a rank that had waited in the collective as long as the others
// had printed its own timeout line, and rank 0 printed nothing. Rank 0 is the suspect (1 gap
// below 3 waiters), and the launcher's line is cited as the evidence that the log went on.
TEST(SilentRank, ARankWithNoLineWhenTheLogRunsOnToTheLauncherIsTheSuspect) {
  const Verdict v =
      AnalyzeLog(TimeoutLine(1, 808) + TimeoutLine(2, 808) + TimeoutLine(3, 808) + LauncherLine(1));
  EXPECT_EQ(v.silent, std::vector<int64_t>{0});
  EXPECT_EQ(v.finding.kind, "silent_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{0});
  EXPECT_EQ(v.finding.op, "ALLREDUCE");
  EXPECT_EQ(v.finding.seq, 808);
  EXPECT_EQ(v.finding.timeout_ms, 600000);
  ASSERT_EQ(v.finding.evidence.size(), 2U);
  EXPECT_NE(v.finding.evidence[1].find("train.log:4"), std::string::npos) << v.finding.evidence[1];
  ASSERT_TRUE(v.culprit.has_value());
  EXPECT_EQ(v.culprit->ranks, std::vector<int64_t>{0});
  EXPECT_TRUE(v.hang);
}

// A waiter's own traceback after the timeouts is not the log going on: the watchdog's exception
// surfaces in that process at once, within the same second as the timeout lines (the real paste
// of huggingface/accelerate#157 has a traceback right after six ranks' timeouts, and ranks 5 and
// 6 of its eight are not in it). Rank 0 is not named.
TEST(SilentRank, AWaitersTracebackIsNotTheLogGoingOn) {
  const Verdict v =
      AnalyzeLog(TimeoutLine(1, 808) + TimeoutLine(2, 808) + TimeoutLine(3, 808) +
                 "[rank1]: Traceback (most recent call last):\n"
                 "[rank1]:   File \"train.py\", line 80, in <module>\n"
                 "[rank1]:     dist.all_reduce(loss)\n"
                 "[rank1]: torch.distributed.DistBackendError: [Rank 1] Watchdog caught collective "
                 "operation timeout\n");
  EXPECT_TRUE(v.silent.empty());
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  EXPECT_TRUE(HasNote(v, "rank 0 of a world of at least 4"));
}

// A launcher record in another file than the timeouts says nothing about where the timeout
// file ends: rank 0 is not named.
TEST(SilentRank, ALauncherRecordInAnotherFileIsNotTheLogGoingOn) {
  EvidenceSet set;
  AddEvidenceFile(set, TimeoutLine(1, 808) + TimeoutLine(2, 808) + TimeoutLine(3, 808),
                  "train.log");
  AddEvidenceFile(set, LauncherLine(1), "launcher.log");
  const Verdict v = Analyze(set, {});
  EXPECT_TRUE(v.silent.empty());
  EXPECT_EQ(v.finding.kind, "collective_timeout");
}

// NCCL's init line gives the communicator size: 8 ranks. Ranks 0-5 time out and rank 6 printed
// its init line; rank 7 is the only rank without a line (1 of 6 waiters: at most a quarter). The
// log runs on to torchrun's record of worker 0's end, so rank 7 had the time to print its own
// timeout line: named. (Until issue 33 the launcher line was not there and rank 7 was named all
// the same; that text ends at the timeout lines, an excerpt, and is the next test.)
TEST(SilentRank, TheWorldSizeComesFromNcclInitLines) {
  std::string log =
      "[rank6]:node2:4242:4300 [6] NCCL INFO comm 0x55d0c0a0 rank 6 nranks 8 cudaDev 6 nvmlDev 6 "
      "busId 0xb000 "
      "commId 0x1f2e3d4c5b6a7988 - Init COMPLETE\n";
  for (int r = 0; r < 6; ++r) log += TimeoutLine(r, 12);
  const Verdict v = AnalyzeLog(log + LauncherLine(0));
  EXPECT_EQ(v.silent, std::vector<int64_t>{7});
  EXPECT_EQ(v.finding.kind, "silent_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{7});
}

// The same world of 8 from the init line, and the text ends at the six timeout lines: rank 7 is
// noted with the world's source, not named (ranks 6 and 7 may both print theirs next).
TEST(SilentRank, AStatedWorldSizeAloneDoesNotMakeAnExcerptComplete) {
  std::string log =
      "[rank6]:node2:4242:4300 [6] NCCL INFO comm 0x55d0c0a0 rank 6 nranks 8 cudaDev 6 nvmlDev 6 "
      "busId 0xb000 "
      "commId 0x1f2e3d4c5b6a7988 - Init COMPLETE\n";
  for (int r = 0; r < 6; ++r) log += TimeoutLine(r, 12);
  const Verdict v = AnalyzeLog(log);
  EXPECT_TRUE(v.silent.empty());
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  // The init line is line 1 and ranks 0-5 are lines 2-7: the last timeout line is line 7.
  EXPECT_TRUE(HasNote(v,
                      "rank 7 of a world of 8 (from NCCL init lines (nranks 8)) left no line, dump "
                      "or stack while ranks 0-5 timed out, and is not named silent: the evidence "
                      "ends with no launcher record after the timeouts (the last timeout line is "
                      "train.log:7)"))
      << fmt::format("{}", fmt::join(v.notes, "\n"));
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
// that appear (0..3), where rank 0 alone is unheard against three waiters, and the log runs on to
// torchrun's record (since issue 33 the condition for naming it; the text used to end at the
// timeouts): named silent.
TEST(SilentRank, AnNcclInitLineBeyondAnyJobIsIgnored) {
  const Verdict v = AnalyzeLog(
      "[rank1]:node1:1:2 [1] NCCL INFO comm 0x55d0c0a0 rank 1 nranks 1099511627776 cudaDev 1 - "
      "Init COMPLETE\n" +
      TimeoutLine(1, 7) + TimeoutLine(2, 7) + TimeoutLine(3, 7) + LauncherLine(1));
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
}  // namespace strata::hang::silent_rank_test

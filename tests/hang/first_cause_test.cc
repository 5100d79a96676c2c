// Issue 33: verdicts that were wrong or misleading. Each input below is built from line formats
// quoted in tests/golden/hang-real/ (the case named beside it); the verdict each must give is
// derived by hand in the comment above it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hang/first_cause_inputs.h"
#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"
#include "support/golden.h"

namespace strata::hang::first_cause_test {
namespace {

using strata::testing::TestPath;

using namespace inputs;  // NOLINT: the inputs of these tests

// A run whose log says it finished (HF Trainer's closing line and metrics dict, then the end of
// torchrun's success line) and holds no failure line ended cleanly: "healthy", so exit 0, never
// "no verdict" (3).
TEST(FirstCause, ACleanExitIsNoHang) {
  const Verdict v = AnalyzeLog(
      "Training completed. Do not forget to share your model on huggingface.co/models =)\n"
      "{'train_runtime': 5123.4, 'train_samples_per_second': 12.5, 'epoch': 3.0}\n"
      "[default] worker group successfully finished.\n");
  EXPECT_EQ(v.finding.kind, "healthy");
  EXPECT_FALSE(v.hang);
  EXPECT_EQ(v.headline.rfind("no hang", 0), 0u) << v.headline;
}

// torchrun's summary names rank 2 as the root cause, killed by SIGKILL (cppo-6's format); ranks 0
// and 1 then time out in the allreduce rank 2 never joined. The kill comes first and explains the
// timeouts: dead_rank [2], not a collective timeout with no culprit.
TEST(FirstCause, ARankKilledFromOutsideComesBeforeTheTimeoutsItCauses) {
  const Verdict v = AnalyzeLog(TimeoutLine(0, 77, "ALLREDUCE") + TimeoutLine(1, 77, "ALLREDUCE") +
                               "Root Cause (first observed failure):\n"
                               "[0]:\n"
                               "  time      : 2025-02-27_08:14:07\n"
                               "  host      : node1\n"
                               "  rank      : 2 (local_rank: 2)\n"
                               "  exitcode  : -9 (pid: 14750)\n"
                               "  error_file: <N/A>\n"
                               "  traceback : Signal 9 (SIGKILL) received by PID 14750\n");
  EXPECT_EQ(v.finding.kind, "dead_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{2});
}

// A start-up failure cannot follow a collective that ran: NCCL's "unhandled system error"
// (nccl-875's bootstrap class) printed after rank 0's collective timeout is a consequence of the
// abort, and the timeout is the first failure.
TEST(FirstCause, ABootstrapErrorAfterATimeoutIsAConsequence) {
  const Verdict v = AnalyzeLog(TimeoutLine(0, 9, "ALLREDUCE") +
                               "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled "
                               "system error, NCCL version 2.10.3\n");
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  EXPECT_EQ(v.finding.seq, 9);
}

// Three ranks time out at SeqNum 5; rank 2's line was wrapped by the terminal inside "OpType=",
// so its op is unknown. An unknown op is not a different collective: no mismatch, and rank 2 is
// not the culprit.
TEST(FirstCause, AnEmptyOpNameNeverMakesAWaitingRankTheCulprit) {
  const Verdict v = AnalyzeLog(TimeoutLine(0, 5, "ALLREDUCE") + TimeoutLine(1, 5, "ALLREDUCE") +
                               TimeoutLine(2, 5, ""));
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  EXPECT_FALSE(v.culprit.has_value());
  ASSERT_EQ(v.pg_stalls.size(), 1u);
  EXPECT_TRUE(v.pg_stalls[0].mismatch.empty()) << v.pg_stalls[0].mismatch;
}

// Rank 0 completed work 12, rank 1 only 10 (both enqueued 12): the stall is at 11 = 10 + 1.
// Rank 1 waits in 11; rank 0 is past it, so it must not be listed as waiting at 11.
TEST(FirstCause, NoRankWaitsAtASequenceNumberItAlreadyPassed) {
  const Verdict v = AnalyzeLog(StatusLine(0, 12, 12) + StatusLine(1, 12, 10));
  ASSERT_EQ(v.pg_stalls.size(), 1u);
  const PgStall& s = v.pg_stalls[0];
  EXPECT_EQ(s.stalled_seq, 11);
  EXPECT_EQ(s.waiting, std::vector<int64_t>{1});
  EXPECT_EQ(s.ahead, std::vector<int64_t>{0});
  EXPECT_TRUE(s.behind.empty());
}

// Two ranks: rank 0 waits on a FileLock in a torch extension build, rank 1 waits in all_reduce.
// The groups are one rank each, so no majority exists; rank 1 waits on rank 0, which no
// collective holds: rank 0 is the culprit.
TEST(FirstCause, ALoneProcessOutsideAnyCollectiveIsTheCulprit) {
  EvidenceSet set;
  AddEvidenceFile(set, PySpy(4100, kInFileLock, true), "pyspy-rank0.txt", 0);
  AddEvidenceFile(set, PySpy(4101, kInAllReduce, false), "pyspy-rank1.txt", 1);
  const Verdict v = Analyze(set, {});
  ASSERT_TRUE(v.culprit.has_value()) << v.headline;
  EXPECT_EQ(v.culprit->ranks, std::vector<int64_t>{0});
  EXPECT_EQ(v.finding.kind, "lagging_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{0});
  EXPECT_TRUE(v.hang);
}

// The same without a RANK anywhere: processes are known by pid (4100, 4101, 4102), and a pid is
// never printed as a rank. Two wait in all_reduce, one is in the FileLock: the culprit is "pid
// 4100", and the finding names no rank.
TEST(FirstCause, ProcessIdsAreNotPrintedAsRanks) {
  EvidenceSet set;
  AddEvidenceFile(set, PySpy(4100, kInFileLock, true), "a.txt");
  AddEvidenceFile(set, PySpy(4101, kInAllReduce, false), "b.txt");
  AddEvidenceFile(set, PySpy(4102, kInAllReduce, false), "c.txt");
  const Verdict v = Analyze(set, {});
  EXPECT_EQ(v.headline.rfind("hang: culprit pid 4100 (RANK unknown)", 0), 0u) << v.headline;
  EXPECT_NE(v.headline.find("2 processes (4101-4102) wait in all_reduce"), std::string::npos)
      << v.headline;
  EXPECT_TRUE(v.finding.ranks.empty());
}

// pytorch-118369's shape, in torch 1.x's format without a group: rank 0 times out at SeqNum
// 96120 and 96117 (two groups, each with its own counter), rank 7 at 64088. Rank 0's lines
// belong to groups the log does not name, so rank 0 is never listed as waiting at rank 7's
// 64088, and the group-less lines are not called the default group "0".
TEST(FirstCause, TimeoutsOfDifferentGroupsAreNotMerged) {
  const auto old_line = [](int rank, int64_t seq) {
    return fmt::format(
        "[E ProcessGroupNCCL.cpp:828] [Rank {}] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum={}, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800123 "
        "milliseconds before timing out.\n",
        rank, seq);
  };
  const Verdict v = AnalyzeLog(old_line(0, 96120) + old_line(0, 96117) + old_line(7, 64088));
  for (const PgStall& s : v.pg_stalls) {
    EXPECT_NE(s.pg, "0");
    EXPECT_EQ(std::count(s.waiting.begin(), s.waiting.end(), 0), 0) << s.stalled_seq;
    EXPECT_EQ(std::count(s.ahead.begin(), s.ahead.end(), 0), 0) << s.stalled_seq;
  }
  EXPECT_EQ(v.finding.kind, "collective_timeout");
}

// lama-324's status lines as a terminal 118 columns wide wraps them: rank 1's inside
// "NCCL", rank 2's inside "completed". Joined, ranks 0 and 1 completed 4012 and rank 2 only
// 4011, which the cut lines hid: the stall is at 4012. Rank 2 is inside 4012 (enqueued 4012,
// timed out there), which the others completed, so it is not behind (the convention of
// docs/hang-accuracy.md for a rank inside a collective another rank completed): a timeout, no
// rank named.
TEST(FirstCause, TerminalWrappedStatusLinesKeepTheRankBehind) {
  const Verdict v = AnalyzeLog(
      "[rank0]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] Timeout at NCCL work: 4013, last "
      "enqueued NCCL work: 4013, last completed NCCL work: 4012.\n"
      "[rank1]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 1] Timeout at NCCL work: 4013, last "
      "enqueued NCCL work: 4013, last completed NCC\n"
      "L work: 4012.\n"
      "[rank2]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 2] Timeout at NCCL work: 4012, last "
      "enqueued NCCL work: 4012, last com\n"
      "pleted NCCL work: 4011.\n");
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  EXPECT_TRUE(v.finding.ranks.empty());
  ASSERT_EQ(v.pg_stalls.size(), 1u);
  EXPECT_EQ(v.pg_stalls[0].stalled_seq, 4012);
}

// NVIDIA-NeMo/Speech#13562 as pasted (tests/golden/hang-real/nemo-13562-...): ranks 1 and 2 time
// out in BROADCAST SeqNum=532339, rank 0 in _ALLGATHER_BASE SeqNum=532341, two collectives
// later. The stall is at 532339: ranks 1 and 2 wait there, rank 0 is past it (ahead), not
// waiting and not behind.
TEST(FirstCause, TheRankAheadInAnotherCollectiveIsNotListedAsWaiting) {
  auto ev = LoadEvidence(
      {TestPath("golden/hang-real/nemo-13562-terminal-wrapped-broadcast-vs-allgather/input")});
  ASSERT_TRUE(ev.ok());
  const Verdict v = Analyze(*ev, {});
  ASSERT_EQ(v.pg_stalls.size(), 1u);
  EXPECT_EQ(v.pg_stalls[0].stalled_seq, 532339);
  EXPECT_EQ(v.pg_stalls[0].waiting, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(v.pg_stalls[0].ahead, std::vector<int64_t>{0});
  EXPECT_TRUE(v.pg_stalls[0].behind.empty());
}

// Issue 33, review of 829fba27: the evidence is ordered by time where its lines carry one, and
// the precedence of finding.cc stands only where they do not. Rank 1's NCCL reports an
// InfiniBand completion error (the line format of NVIDIA/nccl#1405, under a wall-clock prefix as
// nccl-1039's job log writes one) at 2024-05-02 10:00:00; rank 0's watchdog reports "CUDA error:
// an illegal memory access" (the format of InternLM/lmdeploy#3258) in its glog header at "E502
// 10:00:30", 30 s later (glog prints no year: read in the year the dated line gives, 2024). By
// hand: a failure printed 30 s after another cannot be its cause; the first failure is the
// network's, with peer 10.0.0.3. The precedence alone puts a CUDA error before every network
// failure and named CUDA on rank 0: the special term for torchrun's root cause did not cover two
// timed failure lines.
TEST(FirstCause, TheEarlierOfTwoTimedFailuresIsTheFirstCause) {
  const std::string ib =
      "2024-05-02 10:00:00 node2:3468:3905 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
      "completion from peer 10.0.0.3<48598> with error 12, opcode 0, len 0, vendor err 129\n";
  const std::string cuda =
      "[rank0]:[E502 10:00:30.588302933 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID "
      "0(default_pg) Rank 0] Process group watchdog thread terminated with exception: CUDA "
      "error: an illegal memory access was encountered\n";
  const Verdict v = AnalyzeLog(ib + cuda);
  EXPECT_EQ(v.finding.kind, "network") << v.finding.summary;
  EXPECT_EQ(v.finding.peer.substr(0, 8), "10.0.0.3") << v.finding.summary;
  // The CUDA error printed first (09:59:30) stays the first failure.
  std::string earlier = cuda;
  earlier.replace(earlier.find("10:00:30"), 8, "09:59:30");
  EXPECT_EQ(AnalyzeLog(ib + earlier).finding.kind, "cuda_error");
  // Without a time on the network line nothing is ordered: the precedence names the CUDA error.
  EXPECT_EQ(AnalyzeLog(ib.substr(20) + cuda).finding.kind, "cuda_error");
}

// Issue 33, review of 36c551fa: the term that put an out-of-memory line before the CUDA error
// after it (OomBeforeCuda, the class of NVIDIA/TensorRT-LLM#1670) decided the first failure
// without reading any time, and its pick cited a line the time rule could not date, so no
// candidate after it was read. node2's NCCL reports an InfiniBand completion error at
// 2024-05-02 10:00:00 (the line of TheEarlierOfTwoTimedFailuresIsTheFirstCause); node3's NCCL
// then prints "Cuda failure 'out of memory'" at 10:00:30 and "Cuda failure 'invalid resource
// handle'" at 10:00:31 (the pair of FirstRunSixthBatch, under the same wall-clock prefix). By
// hand: the out-of-memory line is not after the CUDA error (10:00:30 <= 10:00:31), so the term
// stands against it, but the network failure was written 30 s before both: it is the first
// failure, with peer 10.0.0.3. Before, the term's pick was "oom" whatever the times said.
TEST(FirstCause, TheTimesDecideAgainstTheOutOfMemoryTerm) {
  const std::string ib =
      "2024-05-02 10:00:00 node2:3468:3905 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
      "completion from peer 10.0.0.3<48598> with error 12, opcode 0, len 0, vendor err 129\n";
  const std::string oom =
      "2024-05-02 10:00:30 node3:5120:5188 [1] enqueue.cc:43 NCCL WARN Cuda failure 'out of "
      "memory'\n";
  const std::string cuda =
      "2024-05-02 10:00:31 node3:5120:5188 [1] enqueue.cc:54 NCCL WARN Cuda failure 'invalid "
      "resource handle'\n";
  const Verdict v = AnalyzeLog(ib + oom + cuda);
  EXPECT_EQ(v.finding.kind, "network") << v.finding.summary;
  EXPECT_EQ(v.finding.peer.substr(0, 8), "10.0.0.3") << v.finding.summary;
  // The network failure 30 s after the pair (10:01:00): the out-of-memory line is the earliest.
  std::string later = ib;
  later.replace(later.find("10:00:00"), 8, "10:01:00");
  EXPECT_EQ(AnalyzeLog(later + oom + cuda).finding.kind, "oom");
  // Without times on the pair nothing dates the term's pick: the precedence names the
  // out-of-memory error, as before.
  EXPECT_EQ(AnalyzeLog(ib + oom.substr(20) + cuda.substr(20)).finding.kind, "oom");
}

}  // namespace
}  // namespace strata::hang::first_cause_test

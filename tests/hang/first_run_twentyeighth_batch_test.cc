// What the twenty-eighth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-07 (fourth)"`) showed strata reading wrong at its first run. Each test quotes the public
// thread's lines (the case named beside the test) and states what a reader derives from them by
// hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"
#include "strata/hang/parsers/watchdog_log.h"

namespace strata::first_run_twentyeighth_batch_test {
namespace {

using hang::FailureKind;
using hang::Verdict;
using hang::inputs::AnalyzeLog;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// modelscope/ms-swift#5409 (ms-swift-5409-pager-wrapped-ranks-2-0-allgather-base-137429-pg1),
// copied out of tmux's copy mode: the log is wrapped at 168 columns and the pane's position
// marker "[451/1919]" is drawn over the end of rank 2's first line, where "SE, NumelI" stood
// (rank 0's line, wrapped at the same width, shows the text under it: "OpType=_ALLGATHER_BASE,
// NumelI" + "n=71552"). By hand: both ranks time out in SeqNum 137429 with NumelIn 71552 and
// NumelOut 572416; rank 2's op name is cut by the marker, not another collective. Both ranks wait
// in the same _ALLGATHER_BASE #137429: a collective timeout with no culprit. The first run said
// "mismatched collectives ... _ALLGATHER_BA on rank 2; _ALLGATHER_BASE on rank 0".
const std::string kPagerWrapped =
    "[rank2]:[E816 00:34:01.133910474 ProcessGroupNCCL.cpp:629] [Rank 2] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=137429, OpType=_ALLGATHER_BA[451/1919]\n"
    "n=71552, NumelOut=572416, Timeout(ms)=600000) ran for 600004 milliseconds before timing "
    "out.\n"
    "[rank2]:[E816 00:34:01.140650897 ProcessGroupNCCL.cpp:2168] [PG ID 1 PG GUID 1 Rank 2]  "
    "failure detected by watchdog at work sequence id: 137429 PG status: last enqueue\n"
    "d work: 137429, last completed work: 137428\n"
    "[rank0]:[E816 00:34:01.151101643 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=137429, OpType=_ALLGATHER_BASE, NumelI\n"
    "n=71552, NumelOut=572416, Timeout(ms)=600000) ran for 600021 milliseconds before timing "
    "out.\n";

TEST(FirstRunTwentyeighthBatch, OpNameUnderAPagerMarkerIsUnknownNotAnotherCollective) {
  const auto events = hang::ParseWatchdogLog(kPagerWrapped, "log.txt");
  std::vector<std::string> ops;
  for (const auto& e : events) {
    if (e.kind == hang::WatchdogEventKind::kTimeout) ops.push_back(e.op_type);
  }
  // Rank 2's name ran into "[451/1919]": cut, so unknown; rank 0's ends at ", ": whole.
  EXPECT_EQ(ops, (std::vector<std::string>{"", "_ALLGATHER_BASE"}));
  const Verdict v = AnalyzeLog(kPagerWrapped);
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_EQ(v.finding.op, "_ALLGATHER_BASE") << v.finding.summary;
  EXPECT_EQ(v.finding.seq, 137429) << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
  // Two whole, different names at one sequence number stay a mismatch.
  std::string different = kPagerWrapped;
  different.replace(different.find("_ALLGATHER_BA[451/1919]"), 23, "ALLREDUCE, NumelI");
  EXPECT_EQ(AnalyzeLog(different).finding.kind, "collective_mismatch");
}

// PASSIONLab/OpenEquivariance#156 (openequivariance-156-faulthandler-timeout-in-file-baton-wait):
// a CI test's faulthandler dump after 2 minutes. By hand: faulthandler prints the frames innermost
// first, so the thread is in torch/utils/file_baton.py's wait, called from cpp_extension's
// _jit_compile: it polls for the build lock of a torch extension, a plain file no process in the
// evidence holds (the thread's reading: a build killed earlier left it). The process is stuck
// outside any collective, and no rank is printed: a stuck process with no rank to name. The first
// run read nothing in the dump ("no verdict", exit 3).
const std::string kBatonDump =
    "Timeout (0:02:00)!\n"
    "File \"/opt/venv/lib/python3.12/site-packages/torch/utils/file_baton.py\", line 50 in wait\n"
    "File \"/opt/venv/lib/python3.12/site-packages/torch/utils/cpp_extension.py\", line 2156 in "
    "_jit_compile\n"
    "File \"/opt/venv/lib/python3.12/site-packages/torch/utils/cpp_extension.py\", line 1681 in "
    "load\n";

TEST(FirstRunTwentyeighthBatch, FaulthandlerDumpInsideFileBatonWaitIsAStuckProcess) {
  const auto lines = hang::ScanFailures(kBatonDump, "faulthandler.txt");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].kind, FailureKind::kLockWait);
  EXPECT_EQ(lines[0].line, 2);
  const Verdict v = AnalyzeLog(kBatonDump);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "lagging_rank") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
  EXPECT_TRUE(Has(v.finding.summary, "lock file")) << v.finding.summary;
  // Only the innermost frame says where the thread is: with file_baton.py's wait below another
  // Python frame, the thread is in that frame, not polling the lock.
  const std::string deeper =
      "Thread 0x00007f3a2b7fe700 (most recent call first):\n"
      "  File \"/usr/lib/python3.10/threading.py\", line 324 in wait\n"
      "  File \"/opt/venv/lib/python3.10/site-packages/torch/utils/file_baton.py\", line 50 in "
      "wait\n";
  EXPECT_TRUE(hang::ScanFailures(deeper, "faulthandler.txt").empty());
  // A Python traceback (most recent call last) has no faulthandler header: not read as a wait.
  const std::string traceback =
      "Traceback (most recent call last):\n"
      "  File \"/opt/venv/lib/python3.12/site-packages/torch/utils/file_baton.py\", line 50, in "
      "wait\n";
  EXPECT_TRUE(hang::ScanFailures(traceback, "log.txt").empty());
}

// pytorch/pytorch#134006
// (pytorch-134006-subgroups-root-cause-rank4-then-pg1-allgather-base-timeouts, batch 2026-12-07
// (second), left open then): the second node's torchrun names rank 4 the root cause, "time :
// 2024-08-20_11:37:36", exit code 1; rank 0's watchdog fires at "[E820 11:47:24...", 600001 ms
// after it entered _ALLGATHER_BASE #2. By hand: rank 4 exited 9 min 48 s before that timeout fired;
// an exit printed before the timeout cannot be its consequence (the watchdog had not yet taken
// anything down), so the first observed failure is the first cause: a crash of rank 4. The first
// run, and every run since, named the collective timeout.
const std::string kRootCause =
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2024-08-20_11:37:36\n"
    "  host      : workergpu008.cm.cluster\n"
    "  rank      : 4 (local_rank: 0)\n"
    "  exitcode  : 1 (pid: 793062)\n"
    "  error_file: <N/A>\n"
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
    "============================================================\n";
const std::string kTimeoutAt1147 =
    "[rank0]:[E820 11:47:24.069865760 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=2, OpType=_ALLGATHER_BASE, NumelIn=1, "
    "NumelOut=2, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.\n";

TEST(FirstRunTwentyeighthBatch, RootCauseThatExitedBeforeTheTimeoutsFiredIsTheFirstCause) {
  const Verdict v = AnalyzeLog(kRootCause + kTimeoutAt1147);
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{4}) << v.finding.summary;
  // The same exit printed after the timeout fired (11:57:36, ten minutes later) may be the
  // timeout's consequence: the collective timeout stays the finding.
  std::string later = kRootCause;
  later.replace(later.find("11:37:36"), 8, "11:57:36");
  EXPECT_EQ(AnalyzeLog(later + kTimeoutAt1147).finding.kind, "collective_timeout");
  // Without a time on either side nothing is ordered: the timeout stays the finding.
  std::string untimed = kRootCause;
  untimed.replace(untimed.find("2024-08-20_11:37:36"), 19, "<N/A>");
  EXPECT_EQ(AnalyzeLog(untimed + kTimeoutAt1147).finding.kind, "collective_timeout");
}

}  // namespace
}  // namespace strata::first_run_twentyeighth_batch_test

// What the thirty-first batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-07 (seventh)"`) showed strata reading wrong at its first run. Each test quotes the
// public thread's lines (the case named beside the test) and states what a reader derives from
// them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::first_run_thirtyfirst_batch_test {
namespace {

using hang::FailureKind;
using hang::Verdict;
using hang::inputs::AnalyzeLog;

// ZhehengJiangLancaster/AMVUR#2 (amvur-2-flattened-root-cause-rank2-sigkill): torchrun's
// ChildFailedError summary copied with its layout flattened: "Root Cause (first observed
// failure) :", "[0]:", the field names "time" and "host" alone on their lines, their values on
// the next two, then "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>" and
// "traceback : signal 9 (SIGKILL) received by PID 36071". By hand: the record's rank field says
// global rank 2 (local rank 2), its exit code -9 is SIGKILL, sent from outside the process (the
// thread: host memory grew until then): rank 2 is the dead rank. The first run read nothing
// (exit 3). Lines of that format, another script, rank and pid.
const std::string kFlattened =
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    "tools/train.py FAILED\n"
    "Failures:\n"
    "<NO OTHER FAILURES>\n"
    "Root Cause (first observed failure) :\n"
    "[0]:\n"
    "time\n"
    "host\n"
    "2023-09-14 01:45:50\n"
    "node-7\n"
    "rank5 (local rank: 1)exitcode: -9 (pid: 4242)error file: <N/A>\n"
    "traceback : signal 9 (SIGKILL) received by PID 4242\n";

TEST(FirstRunThirtyfirstBatch, AFlattenedRootCauseRecordNamesTheKilledRank) {
  const auto lines = hang::ScanFailures(kFlattened, "log.txt");
  const hang::FailureSignal* record = nullptr;
  for (const auto& s : lines) {
    if (s.kind == FailureKind::kChildFailed) record = &s;
  }
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->line, 11);
  EXPECT_EQ(record->global_rank, 5);
  EXPECT_EQ(record->local_rank, 1);
  EXPECT_EQ(record->exit_code, -9);
  EXPECT_TRUE(record->root_cause);
  const Verdict v = AnalyzeLog(kFlattened);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{5}) << v.finding.summary;
  // A line that only mentions a rank and an exit code in prose is no record.
  EXPECT_TRUE(hang::ScanFailures("rank5 finished; exitcode: 0 as expected\n", "log.txt").empty());
}

// opendatalab/DocLayout-YOLO#22 (doclayout-yolo-22-some-nccl-operations-failed-no-timeout-line):
// three old-format watchdog lines and nothing else, "[E ProcessGroupNCCL.cpp:488] Some NCCL
// operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent
// GPU operations might run on corrupted/incomplete data." twice and "[E ProcessGroupNCCL.cpp:494]
// To avoid data inconsistency, we are taking the entire process down.". By hand: torch prints
// these lines when a work item failed or timed out (its own words); they name no operation, no
// rank and neither failure. The corpus reads the first line alone as no verdict
// (open-r1-multimodal-20); the second is the same statement's other half. Read, but no verdict
// (exit 3). The first run said a collective timed out.
const std::string kTakeDownOnly =
    "[E ProcessGroupNCCL.cpp:488] Some NCCL operations have failed or timed out. Due to the "
    "asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
    "corrupted/incomplete data.\n"
    "[E ProcessGroupNCCL.cpp:494] To avoid data inconsistency, we are taking the entire process "
    "down.\n";

TEST(FirstRunThirtyfirstBatch, TheWatchdogsTakeDownLinesAloneAreNoVerdict) {
  const Verdict v = AnalyzeLog(kTakeDownOnly);
  EXPECT_EQ(v.finding.kind, "unknown") << v.finding.summary;
  // With the WorkNCCL line of the timeout beside them, the timeout is read as before.
  const Verdict timed_out = AnalyzeLog(
      "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=12, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800310 milliseconds "
      "before timing out.\n" +
      kTakeDownOnly);
  EXPECT_EQ(timed_out.finding.kind, "collective_timeout") << timed_out.finding.summary;
  EXPECT_EQ(timed_out.finding.op, "ALLREDUCE") << timed_out.finding.summary;
  EXPECT_EQ(timed_out.finding.seq, 12) << timed_out.finding.summary;
}

// lyuwenyu/RT-DETR#599 (rt-detr-599-traceback-communicator-aborted-rank0, held back and missed at
// its run): a traceback from the training loop into torch.distributed.all_reduce that ends on
// "RuntimeError: NCCL communicator was aborted on rank 0.  Original reason for failure was:
// [Rank 0] Watchdog caug", cut by the excerpt. By hand: c10d raises this error in the process whose
// communicator its watchdog aborted, followed by the watchdog's exception; of the watchdog's
// messages only the timeout's begins "Watchdog caught collective operation timeout". Rank 0 waited
// in all_reduce until its watchdog timed the collective out: a collective timeout, no culprit (no
// other rank is shown). Lines of that format, another script and rank.
const std::string kAbortReasonCut =
    "  File \"/opt/train/dist_utils.py\", line 194, in reduce_dict\n"
    "    torch.distributed.all_reduce(values)\n"
    "  File \"/opt/envs/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", "
    "line 1451, in wrapper\n"
    "    return func(*args, **kwargs)\n"
    "  File \"/opt/envs/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", "
    "line 1700, in all_reduce\n"
    "    work = default_pg.allreduce([tensor], opts)\n"
    "RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure was: "
    "[Rank 3] Watchdog caug\n";

TEST(FirstRunThirtyfirstBatch, ACommunicatorAbortedForTheWatchdogsTimeoutIsACollectiveTimeout) {
  const Verdict v = AnalyzeLog(kAbortReasonCut);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
  // The collective is the c10d function the traceback passes through, all_reduce, not the
  // decorator's "wrapper" frame above it.
  EXPECT_EQ(v.finding.op, "all_reduce") << v.finding.summary;
  // An abort whose reason is a NCCL error is no timeout.
  EXPECT_NE(AnalyzeLog("RuntimeError: NCCL communicator was aborted on rank 3.  Original reason "
                       "for failure was: NCCL error: unhandled system error\n")
                .finding.kind,
            "collective_timeout");
}

}  // namespace
}  // namespace strata::first_run_thirtyfirst_batch_test

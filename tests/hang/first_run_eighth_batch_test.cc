// What the eighth batch of real cases (tests/golden/hang-real/, `first_run_batch: "2026-12-05
// (third)"`, the part not held back) showed strata reading wrong at its first run, and the classes
// of three misses of the seventh batch (their first-run records kept), shown on hand-made lines of
// their formats. Each test quotes the public thread's lines (the case named beside the test) or
// says how its lines were made, and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;
using inputs::BarrierWait;
using inputs::StatusLine;
using inputs::TimeoutLine;

// Lightning-AI/pytorch-lightning#4420 (lightning-4420-store-barrier-seven-of-eight-rank4-absent):
// ranks 0, 6, 2, 1, 7, 3 and 5 wait in the store-based barrier of init with world_size=8 and
// worker_count=7, then rank 0 logs again at 7: a whole logging interval passed with nobody
// arriving. Seven distinct ranks logged, as many as the count: the rank of 0..7 that never logged,
// 4, is the one absent. The first run said no verdict.
TEST(FirstRunEighthBatch, StuckStoreBarrierNamesTheAbsentRank) {
  std::string log;
  for (int rank : {0, 6, 2, 1, 7, 3, 5, 0}) log += BarrierWait(rank, 8, 7);
  const Verdict v = AnalyzeLog(log);
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{4});
  // The same barrier when not every arrived rank logged (ranks 0 and 1 of a count of 3): stuck,
  // but the absent rank is not shown.
  const Verdict partial =
      AnalyzeLog(BarrierWait(0, 4, 3) + BarrierWait(1, 4, 3) + BarrierWait(0, 4, 3));
  EXPECT_EQ(partial.finding.kind, "bootstrap") << partial.finding.summary;
  EXPECT_TRUE(partial.finding.ranks.empty());
  // Ranks still arriving (the count moves from 1 to 2), each line once: start-up going on.
  const Verdict arriving = AnalyzeLog(BarrierWait(0, 4, 1) + BarrierWait(1, 4, 2));
  EXPECT_EQ(arriving.finding.kind, "unknown") << arriving.finding.summary;
}

// OpenRLHF/OpenRLHF#335 (openrlhf-335-ray-vllm-ibv-modify-qp-timed-out-update-weight): a vLLM Ray
// actor receiving weights: "ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed with error
// Connection timed out". The queue pair could not be connected to its peer: an InfiniBand
// failure (no peer named). The first run said no verdict.
TEST(FirstRunEighthBatch, QueuePairThatCannotConnectIsANetworkFailure) {
  const Verdict v = AnalyzeLog(
      "(LLMRayActor pid=1112, ip=172.26.5.7) job-hvjmrsm8sqf4r2h5q2tl-worker-0:1112:13532 [0] "
      "ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out\n"
      "(LLMRayActor pid=1112, ip=172.26.5.7) ERROR 06-30 06:10:12 worker_base.py:145] Error "
      "executing method update_weight. This might cause deadlock in distributed execution.\n");
  EXPECT_EQ(v.finding.kind, "network") << v.finding.summary;
  EXPECT_TRUE(v.finding.peer.empty());
}

// The class of NVIDIA/Megatron-LM#1880 (held back in the seventh batch): a paste of torchrun's
// failure record without the "Failures:" / "Root Cause" heading nor its "[0]:" header. Hand-made
// lines of that format (another rank, pid and signal): rank 3 ended by SIGBUS, a crash of its own.
TEST(FirstRunEighthBatch, RecordFieldsWithoutTheirHeadingAreTheFailure) {
  const Verdict v = AnalyzeLog(
      "  rank      : 3 (local_rank: 3)\n"
      "  exitcode  : -7 (pid: 90210)\n"
      "  error_file: <N/A>\n"
      "  traceback : Signal 7 (SIGBUS) received by PID 90210\n"
      "============================================================\n");
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{3});
  // "rank" alone, without torchrun's "(local_rank: N)", is any other text.
  const Verdict other = AnalyzeLog("rank : 3\nexitcode : -7\n");
  EXPECT_EQ(other.finding.kind, "unknown") << other.finding.summary;
}

// The class of OpenRLHF/OpenRLHF#621 (held back in the seventh batch): the raylet reports a worker
// dead (SYSTEM_ERROR), then another worker's collective raises "remote process exited or there
// was a network error". Hand-made lines of those formats (other pids, address, SeqNum): the death
// printed first is what the remote error reports. Printed after it, the death is no cause shown.
TEST(FirstRunEighthBatch, AProcessKilledBeforeARemoteErrorIsItsCause) {
  const std::string death =
      "(raylet) A worker died or was killed while executing a task by an unexpected system error. "
      "Worker PID: 5150 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly "
      "exits with a connection error code 2. End of file.\n";
  const std::string remote =
      "(RayWorkerWrapper pid=6160, ip=10.1.2.3) [rank1]:[E1224 13:23:05.483840160 "
      "ProcessGroupNCCL.cpp:542] [Rank 3] Collective WorkNCCL(SeqNum=7, OpType=ALLREDUCE, "
      "NumelIn=64, NumelOut=64, Timeout(ms)=1800000) raised the following async exception: NCCL "
      "error: remote process exited or there was a network error, NCCL version 2.21.5\n";
  const Verdict v = AnalyzeLog(death + remote);
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  const Verdict after = AnalyzeLog(remote + death);
  EXPECT_EQ(after.finding.kind, "network") << after.finding.summary;
}

// The convention for "one rank completed a collective the other still waits in"
// (docs/hang-accuracy.md; meta-pytorch/torchtune#2093, huggingface/accelerate#3250,
// SWivid/F5-TTS#346). Hand-made lines of torch 2.4's format: rank 0 times out in ALLREDUCE #10
// (last completed 9, enqueued 10), rank 1 in ALLREDUCE #12 (completed 11). Rank 1 completed #10,
// an all-reduce, which completes on no rank before every rank has entered it, and rank 0 did
// enter #10: their #10 were not the same operation (or the transfer to rank 0 stalled). Neither
// is shown behind: a timeout, no rank.
TEST(FirstRunEighthBatch, ARankInsideACollectiveAnotherCompletedIsNotBehind) {
  const Verdict v = AnalyzeLog(TimeoutLine(0, 10, "ALLREDUCE") + StatusLine(0, 10, 9) +
                               TimeoutLine(1, 12, "ALLREDUCE") + StatusLine(1, 12, 11));
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
}

// The class of open-compass/VLMEvalKit#1131 (held back in this batch, its first-run record kept):
// torchrun's "Failures:" records without the "Root Cause" one (the paste is cut at its heading).
// Hand-made records of that format: ranks 2 and 6, each exitcode -6 (SIGABRT) at the same second.
// The workers aborted; which was first is not shown: a crash, no rank.
TEST(FirstRunEighthBatch, RecordsThatEndedAlikeWithoutTheirRootCauseNameNoRank) {
  const auto record = [](int index, int rank, int pid) {
    return "[" + std::to_string(index) +
           "]:\n  time      : 2025-03-01_08:00:00\n  host      : "
           "node7\n  rank      : " +
           std::to_string(rank) + " (local_rank: " + std::to_string(rank) +
           ")\n  exitcode  : -6 (pid: " + std::to_string(pid) +
           ")\n  error_file: <N/A>\n  traceback : Signal 6 (SIGABRT) received by PID " +
           std::to_string(pid) + "\n";
  };
  const std::string block = "Failures:\n" + record(1, 2, 4402) + record(2, 6, 4406);
  const Verdict v = AnalyzeLog(block + "------------------------------------\n");
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
}

}  // namespace
}  // namespace strata::hang

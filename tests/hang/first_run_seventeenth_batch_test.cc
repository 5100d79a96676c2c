// What the seventeenth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-06 (second)"`, the part not held back) showed strata reading wrong at its first run.
// Each test quotes the public thread's lines (the case named beside the test) and states what a
// reader derives from them by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// NovaSky-AI/SkyRL#757 (skyrl-757-elided-allgather-base-timeout-after-too-many-open-files): the
// reporter broke the watchdog sentence by hand at the space before "WorkNCCL(" and elided fields:
// "[Rank 5] Watchdog caught collective operation timeout:" then "WorkNCCL(... OpType=
// _ALLGATHER_BASE ... Timeout(ms)=600000) ran for 600026 milliseconds before timing out." By
// hand: the second line is the rest of the first (torch prints "timeout: WorkNCCL(" on one line);
// read together they name the op, _ALLGATHER_BASE, and the timeout, 600000 ms. No SeqNum is
// printed. The first run said a collective timeout with neither op nor timeout.
TEST(FirstRunSeventeenthBatch, WatchdogSentenceBrokenBeforeWorkNcclKeepsItsFields) {
  const Verdict v = AnalyzeLog(
      "[Rank 5] Watchdog caught collective operation timeout:\n"
      "WorkNCCL(... OpType=_ALLGATHER_BASE ... Timeout(ms)=600000) ran for 600026 milliseconds "
      "before timing out.\n"
      "...\n"
      "Some NCCL operations have failed or timed out... we are taking the entire process down.\n");
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_EQ(v.finding.op, "_ALLGATHER_BASE");
  EXPECT_EQ(v.finding.timeout_ms, std::optional<int64_t>(600000));
  EXPECT_FALSE(v.finding.seq.has_value());
  // Hand-made: the same first line followed by a line of another message is not joined to it.
  const Verdict apart = AnalyzeLog(
      "[Rank 5] Watchdog caught collective operation timeout:\n"
      "Some NCCL operations have failed or timed out.\n");
  EXPECT_TRUE(apart.finding.op.empty()) << apart.finding.summary;
}

// facebookresearch/ParlAI#3084 (parlai-3084-prose-nccl-invalid-argument-srun-tasks-exited): after
// "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/../c10d/NCCLUtils.hpp:82, invalid
// argument, NCCL version 2.4.8", srun reports "srun: error: slurm-job-compute-0-0: tasks 2-7:
// Exited with exit code 1" and the same for tasks 8-13,15 and 14 on the second node. By hand:
// srun prints "Exited with exit code N" for tasks that ended by themselves with status N (a
// signal would read "Killed" or "Aborted"); fourteen processes failed with an error, a crash.
// Slurm's task numbers are its own, not ranks. The first run read nothing (no verdict, exit 3).
TEST(FirstRunSeventeenthBatch, SrunTasksExitedWithACodeAreACrash) {
  const Verdict v = AnalyzeLog(
      "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/../c10d/NCCLUtils.hpp:82, invalid "
      "argument, NCCL version 2.4.8\n"
      "srun: error: slurm-job-compute-0-0: tasks 2-7: Exited with exit code 1\n"
      "srun: error: slurm-job-compute-0-1: tasks 8-13,15: Exited with exit code 1\n"
      "srun: error: slurm-job-compute-0-1: task 14: Exited with exit code 1\n");
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // facebookresearch/submitit#1708's lines: Slurm cancels the step for a requeue and the tasks
  // exit with code 1 after it: the cancel ended them, not a failure of their own.
  const Verdict requeued = AnalyzeLog(
      "slurmstepd: error: *** STEP 608.0 ON SERVER_NAME CANCELLED AT 2022-08-12T02:06:12 DUE TO "
      "JOB REQUEUE ***\n"
      "srun: error: SERVER_NAME: tasks 2-3: Exited with exit code 1\n");
  EXPECT_NE(requeued.finding.kind, "crash") << requeued.finding.summary;
  // Hand-made: exit code 0 is no failure.
  const Verdict clean = AnalyzeLog("srun: error: node1: task 0: Exited with exit code 0\n");
  EXPECT_NE(clean.finding.kind, "crash") << clean.finding.summary;
}

// NVIDIA/nccl#380 (nccl-380-ibv-create-cq-failed-after-ib-channel-setup): rank 0 on spark01
// prints "NCCL INFO Channel 00 : 0[3000] -> 1[3000] [send] via NET/IB/0" and then
// "misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed". By hand: NCCL creates the
// completion queue on the local adapter while connecting a channel (net_ib.cc), before any data
// moves; the adapter refused the resource: a start-up fault of the host, no peer. The first run
// read nothing (no verdict, exit 3).
TEST(FirstRunSeventeenthBatch, VerbsResourceCreationFailureIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "spark01:2683:2826 [0] NCCL INFO Channel 00 : 1[3000] -> 0[3000] [receive] via NET/IB/0\n"
      "spark01:2683:2826 [0] NCCL INFO Channel 00 : 0[3000] -> 1[3000] [send] via NET/IB/0\n"
      "\n"
      "spark01:2683:2826 [0] misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_TRUE(v.finding.peer.empty());
  // OpenRLHF/OpenRLHF#335's line: ibv_modify_qp connects the queue pair to the peer's; failing
  // there stays a network failure.
  const Verdict modify = AnalyzeLog(
      "ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out\n");
  EXPECT_EQ(modify.finding.kind, "network") << modify.finding.summary;
}

}  // namespace
}  // namespace strata::hang

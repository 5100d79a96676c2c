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

// The batch's held-back misses, read once their run with the finished code had been recorded.

// modelscope/ms-swift#6368 (ms-swift-6368-nslookup-master-unresolved-then-torchrun-traceback):
// "nslookup: can't resolve '(null)': Name does not resolve", "nslookup: can't resolve
// 'dlc1dwuhvtro4c27-master-0': Name does not resolve", "waiting for master", then torchrun's
// traceback, cut before its error. By hand: the launch script looks the master's host name up
// and DNS has no address for it; the workers cannot reach the rendezvous host: a start-up fault
// naming that host ("(null)" is an unset variable, no host). Held back, the run with the finished
// code read nothing (no verdict, exit 3).
TEST(FirstRunSeventeenthBatch, MasterNameThatDoesNotResolveIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "nslookup: can't resolve '(null)': Name does not resolve\n"
      "nslookup: can't resolve 'dlc1dwuhvtro4c27-master-0': Name does not resolve\n"
      "waiting for master\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"/opt/ac2/bin/torchrun\", line 8, in <module>\n"
      "    sys.exit(main())\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.peer, "dlc1dwuhvtro4c27-master-0");
  // Hand-made: only the unset variable's lookup names no host and is not read.
  const Verdict unset = AnalyzeLog("nslookup: can't resolve '(null)': Name does not resolve\n");
  EXPECT_NE(unset.finding.kind, "bootstrap") << unset.finding.summary;
  // Hand-made: a lookup retried until the master existed, the run then training to its end
  // (Hugging Face Trainer's lines), was a wait, not the failure.
  const Verdict waited = AnalyzeLog(
      "nslookup: can't resolve 'job-master-0': Name does not resolve\n"
      "waiting for master\n"
      "{'loss': 2.31, 'grad_norm': 1.2, 'learning_rate': 1e-05, 'epoch': 0.01}\n"
      " 20%|##        | 200/1000 [02:00<08:00,  1.67it/s]\n"
      "{'train_runtime': 600.0, 'train_loss': 1.9, 'epoch': 1.0}\n");
  EXPECT_NE(waited.finding.kind, "bootstrap") << waited.finding.summary;
}

// jpata/particleflow#390 (particleflow-390-watchdog-frames-only-checktimeout): only c10's
// backtrace, "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 ...", "frame
// #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long,
// std::ratio<1l, 1000l> > >) + 0x1d2 ...", "frame #2: c10d::ProcessGroupNCCL::watchdogHandler()
// ...", then "Exception raised from ncclCommWatchdog at ...". By hand: the error was built in
// WorkNCCL::checkTimeout, which builds one only for a work past its timeout; the watchdog caught
// a collective timeout, its op, sequence number and timeout not pasted. Held back, the run with
// the finished code read nothing (no verdict, exit 3).
TEST(FirstRunSeventeenthBatch, BacktraceThroughCheckTimeoutIsTheWatchdogsTimeout) {
  const std::string frames =
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1554e8b12f86 in "
      "/mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libc10.so)\n"
      "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::"
      "duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x1554e9e0f8f2 in /mnt/home/ewulff/"
      "miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)\n"
      "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x1554e9e16333 in /mnt/home/"
      "ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)\n"
      "\n"
      "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1521 (most recent call first):\n";
  const Verdict v = AnalyzeLog(frames);
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_TRUE(v.finding.op.empty());
  // With the message in the same file (arrival-ltd/catalyst-rl-tutorial#15's 'what():' line
  // after the frames) the message's fields are read, not lost to the frames.
  const Verdict with_message = AnalyzeLog(
      frames +
      "terminate called after throwing an instance of 'c10::DistBackendError'\n"
      "  what():  [Rank 6] NCCL watchdog thread terminated with exception: [Rank 6] Watchdog "
      "caught collective operation timeout: WorkNCCL(SeqNum=880, OpType=BROADCAST, "
      "NumelIn=131137536, NumelOut=131137536, Timeout(ms)=1800000) ran for 1800902 milliseconds "
      "before timing out.\n");
  EXPECT_EQ(with_message.finding.kind, "collective_timeout") << with_message.finding.summary;
  EXPECT_EQ(with_message.finding.op, "BROADCAST");
  EXPECT_EQ(with_message.finding.seq, std::optional<int64_t>(880));
  // Hand-made: a backtrace raised elsewhere in ProcessGroupNCCL (its CUDA error check) is not a
  // timeout.
  const Verdict other = AnalyzeLog(
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1 in libc10.so)\n"
      "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkAndSetException() + 0x80 (0x2 in "
      "libtorch_cuda.so)\n");
  EXPECT_NE(other.finding.kind, "collective_timeout") << other.finding.summary;
}

}  // namespace
}  // namespace strata::hang

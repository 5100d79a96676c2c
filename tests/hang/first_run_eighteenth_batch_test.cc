// What the eighteenth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-06 (third)"`, the part not held back) showed strata reading wrong at its first run.
// Each test quotes the public thread's lines (the case named beside the test) and states what a
// reader derives from them by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// vllm-project/vllm#8978 (vllm-8978-frames-service-thread-abort-then-timeout-work1-rank3): NCCL's
// "comm 0x55991793c100 rank 3 nranks 4 ... - Abort COMPLETE" and the same for rank 1, then
// "[rank3]:[E1001 16:06:04.889919061 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 3]
// Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: -1." By hand:
// torch 2.3-2.4's watchdog prints "Timeout at NCCL work: N" when work N timed out, and aborts the
// process group's communicators (ncclCommAbort, whose end NCCL logs as "Abort COMPLETE") before
// taking the process down. The aborts are the watchdog's reaction to the timeout of work 1, not a
// job tearing down after its work finished. The first run said a hang at exit.
TEST(FirstRunEighteenthBatch, AbortAfterATimeoutStatusLineIsNoHangAtExit) {
  const Verdict v = AnalyzeLog(
      "cuda0003:2949604:2949648 [3] NCCL INFO [Service thread] Connection closed by localRank 3\n"
      "cuda0003:2949602:2949649 [1] NCCL INFO [Service thread] Connection closed by localRank 1\n"
      "cuda0003:2949604:2949623 [0] NCCL INFO comm 0x55991793c100 rank 3 nranks 4 cudaDev 3 "
      "busId a1000 - Abort COMPLETE\n"
      "cuda0003:2949602:2949629 [0] NCCL INFO comm 0x5649b30cf960 rank 1 nranks 4 cudaDev 1 "
      "busId 61000 - Abort COMPLETE\n"
      "[rank3]:[E1001 16:06:04.889919061 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 3] "
      "Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: -1.\n");
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_EQ(v.finding.seq, std::optional<int64_t>(1));
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: the aborts alone, with no timeout anywhere, stay a hang at exit.
  const Verdict alone = AnalyzeLog(
      "cuda0003:2949604:2949623 [0] NCCL INFO comm 0x55991793c100 rank 3 nranks 4 cudaDev 3 "
      "busId a1000 - Abort COMPLETE\n");
  EXPECT_EQ(alone.finding.kind, "hang_at_exit") << alone.finding.summary;
}

// vllm-project/vllm#1846 (vllm-1846-raylet-worker-died-then-rayworker-rank0-allreduce-seq1): Ray's
// "A worker died or was killed while executing a task by an unexpected system error. ... Worker
// PID: 1080651 Worker exit type: SYSTEM_ERROR ...", then "(RayWorker pid=1080651) [E
// ProcessGroupNCCL.cpp:474] [Rank 0] Watchdog caught collective operation timeout:
// WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for
// 1800305 milliseconds before timing out." By hand: Ray prefixes every line of a worker with
// "(<actor> pid=<pid>)"; the worker Ray reports dead is pid 1080651, the very process whose
// watchdog caught ALLREDUCE #1 timing out. The watchdog ends its process with an abort (SIGABRT),
// which Ray sees as a death without exit (SYSTEM_ERROR): the death follows the timeout, it is not
// a kill from outside. The first run said a dead rank.
TEST(FirstRunEighteenthBatch, RayWorkerDeathOfTheProcessWhoseWatchdogTimedOutIsTheTimeout) {
  const std::string died =
      "2023-11-30 10:19:23,769 WARNING worker.py:2074 -- A worker died or was killed while "
      "executing a task by an unexpected system error. To troubleshoot the problem, check the "
      "logs for the dead worker. RayTask ID: ffffffffffffffffba61971047f999e0f9ceaab101000000 "
      "Worker ID: 0e4b1eeade4874f7080db5807059e066cc128f27de4d1404a6057750 Node ID: "
      "9c6f827858d621904b3d1cfb06057c57480da46c3edab524030f1e58 Worker IP address: "
      "[10.9.70.181](http://10.9.70.181/) Worker port: 34011 Worker PID: 1080651 Worker exit "
      "type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error "
      "code 2. End of file. There are some potential root causes. (1) The process is killed by "
      "SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The "
      "worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.\n";
  const std::string timeout =
      "(RayWorker pid=1080651) [E ProcessGroupNCCL.cpp:474] [Rank 0] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
      "Timeout(ms)=1800000) ran for 1800305 milliseconds before timing out.\n";
  const Verdict v = AnalyzeLog(died + timeout);
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_EQ(v.finding.op, "ALLREDUCE");
  EXPECT_EQ(v.finding.seq, std::optional<int64_t>(1));
  EXPECT_EQ(v.finding.timeout_ms, std::optional<int64_t>(1800000));
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: another worker's timeout (pid 1080652) does not explain the death of 1080651,
  // which stays a process killed from outside.
  std::string other = timeout;
  other.replace(other.find("1080651"), 7, "1080652");
  const Verdict v2 = AnalyzeLog(died + other);
  EXPECT_EQ(v2.finding.kind, "dead_rank") << v2.finding.summary;
}

// pytorch/xla#2137 (pytorch-xla-2137-tpu-pod-waiting-for-mesh-master-peer, held back): the one
// line "2020-05-28 11:50:27 10.164.15.200 [1] 2020-05-28 11:50:27.058553: I    7449
// tensorflow/compiler/xla/xla_client/mesh_service.cc:208] Waiting to connect to client mesh
// master (300 seconds) 10.164.15.199:8477", and nothing after it. By hand: torch_xla's mesh
// client prints this when it starts, then waits up to 300 s for the master's gRPC channel; a log
// that ends on the wait shows a client that never got through to the master at 10.164.15.199:
// the replicas never formed, a start-up fault with that peer. Once the run goes on (training
// lines after it) the same line was only the start of a wait that succeeded. The run with the
// finished code said nothing (no verdict, exit 3).
TEST(FirstRunEighteenthBatch, LogEndingOnTheMeshMasterWaitIsAStartUpFault) {
  const std::string wait =
      "2020-05-28 11:50:27 10.164.15.200 [1] 2020-05-28 11:50:27.058553: I    7449 "
      "tensorflow/compiler/xla/xla_client/mesh_service.cc:208] Waiting to connect to client mesh "
      "master (300 seconds) 10.164.15.199:8477\n";
  const Verdict v = AnalyzeLog(wait);
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.peer, "10.164.15.199:8477");
  EXPECT_TRUE(v.finding.ranks.empty());
  // pytorch/xla#3126's first training line after the wait: the client connected, the run began.
  const Verdict went_on = AnalyzeLog(
      wait +
      "| Training Device=xla:0/0 Step=0 Loss=2.39107 Rate=27.37 GlobalRate=27.37 Time=11:05:33\n");
  EXPECT_NE(went_on.finding.kind, "bootstrap") << went_on.finding.summary;
}

// NVIDIA/nccl-tests#165 (nccl-tests-165-mpirun-invalid-device-ordinal-first-process-rank1, an
// open miss of an earlier batch): "majidnc24MPTXTH: Test CUDA failure common.cu:892 'invalid
// device ordinal'", then Open MPI's "Primary job  terminated normally, but 1 process returned" /
// "a non-zero exit code. Per user-direction, the job has been aborted." and "The first process
// to do so was:" / "Process name: [[25735,1],1]" / "Exit code:    2". By hand: mpirun counts one
// process that returned a non-zero exit code, and names it: rank 1. The one process that printed
// a failure is a process that exits non-zero (nccl-tests exits on a failed CUDACHECK); with a
// single such process, it is rank 1. A CUDA error on rank 1; the run said no rank.
TEST(FirstRunEighteenthBatch, TheOneFailingProcessOpenMpiNamesOwnsTheOneCudaError) {
  const std::string cuda =
      "majidnc24MPTXTH: Test CUDA failure common.cu:892 'invalid device ordinal'\n"
      " .. majidnc24MPTXTH pid 9972: Test failure common.cu:842\n";
  const std::string first =
      "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
      "the job to be terminated. The first process to do so was:\n"
      "\n"
      "  Process name: [[25735,1],1]\n"
      "  Exit code:    2\n";
  const Verdict v = AnalyzeLog(cuda +
                               "Primary job  terminated normally, but 1 process returned\n"
                               "a non-zero exit code. Per user-direction, the job has been "
                               "aborted.\n" +
                               first);
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{1});
  // Hand-made: with two processes counted, the first to exit need not be the one that printed.
  const Verdict two = AnalyzeLog(cuda +
                                 "Primary job  terminated normally, but 2 processes returned\n"
                                 "non-zero exit codes. Per user-direction, the job has been "
                                 "aborted.\n" +
                                 first);
  EXPECT_EQ(two.finding.kind, "cuda_error") << two.finding.summary;
  EXPECT_TRUE(two.finding.ranks.empty());
}

}  // namespace
}  // namespace strata::hang

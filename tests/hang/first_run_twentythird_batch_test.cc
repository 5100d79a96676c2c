// What the twenty-third batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-06 (eighth)"`) showed strata reading wrong at its first run. Each test quotes the
// public thread's lines (the case named beside the test) and states what a reader derives from
// them by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// horovod/horovod#2484 (horovod-2484-elastic-gloo-first-process-exit-137-worker-1-slot-0): the
// elastic Gloo launcher raises "RuntimeError: Horovod detected that one or more processes exited
// with non-zero status, thus causing the job to be terminated. The first process to do so was:"
// then "Process name: elastic-test-worker-1[0]" and "Exit code: 137". By hand: horovodrun runs
// each worker through a shell, whose exit status is 128 + N for a process ended by signal N:
// 137 - 128 = 9, SIGKILL, which a process does not send itself (the OOM killer, the scheduler).
// The name is gloo_run.py's "<host>[<local rank>]", no global rank. A process killed, no rank
// named. The first run read nothing (exit 3).
TEST(FirstRunTwentythirdBatch, HorovodFirstProcessByHostAndLocalRankIsKilledWithoutRank) {
  const std::string report =
      "RuntimeError: Horovod detected that one or more processes exited with non-zero status, "
      "thus causing the job to be terminated. The first process to do so was:\n"
      "Process name: elastic-test-worker-1[0]\n";
  const Verdict v = AnalyzeLog(report + "Exit code: 137\n");
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: exit status 1 is the process's own error exit (below 128, no signal): a crash,
  // still without a rank.
  const Verdict own = AnalyzeLog(report + "Exit code: 1\n");
  EXPECT_EQ(own.finding.kind, "crash") << own.finding.summary;
  EXPECT_TRUE(own.finding.ranks.empty());
  // Open MPI's own record of the same wording keeps naming its rank ([[job,step],rank],
  // horovod/horovod#1421).
  const Verdict mpi = AnalyzeLog(
      "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
      "the job to be terminated. The first process to do so was:\n"
      "  Process name: [[29973,1],0]\n"
      "  Exit code:    1\n");
  EXPECT_EQ(mpi.finding.kind, "crash") << mpi.finding.summary;
  EXPECT_EQ(mpi.finding.ranks, (std::vector<int64_t>{0}));
}

// horovod/horovod#3060 (horovod-3060-gloo-launch-rank2-raises-process-2-exit-1-others-run-on):
// under the launcher's "[r]<stderr>:" tags only rank 2 prints a traceback ("RuntimeError: worker
// absolutely refuses to be rank 2") and the launcher prints "Process 2 exit with status code 1.";
// ranks 3 and 0 exit normally two minutes later. By hand: gloo_run.py prints that line with
// index = slot_info.rank, the Horovod rank (the tag's number too); status 1 is no signal. Rank 2
// crashed. The first run read nothing (exit 3).
TEST(FirstRunTwentythirdBatch, HorovodProcessExitStatusNamesItsRank) {
  const Verdict v = AnalyzeLog(
      "[0]<stdout>:hi! 0\n"
      "[3]<stdout>:hi! 3\n"
      "[1]<stdout>:hi! 1\n"
      "[2]<stdout>:hi! 2\n"
      "[2]<stderr>:Traceback (most recent call last):\n"
      "[2]<stderr>:  File \"/home/rb/code/horovod/meh/test.py\", line 11, in <module>\n"
      "[2]<stderr>:    raise RuntimeError(\"worker absolutely refuses to be rank 2\")\n"
      "[2]<stderr>:RuntimeError: worker absolutely refuses to be rank 2\n"
      "Process 2 exit with status code 1.\n"
      "\n"
      "< two minutes of silence >\n"
      "\n"
      "[3]<stdout>:exiting normally after 2 minutes\n");
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, (std::vector<int64_t>{2}));
  // horovod/horovod#2907's exit lines alone: "Process 0 exit with status code 137." first.
  // 137 = 128 + 9 (SIGKILL from outside): rank 0 was killed; 134 = 128 + 6 (SIGABRT) is the
  // process's own abort, printed after.
  const Verdict killed = AnalyzeLog(
      "Process 0 exit with status code 137.\n"
      "Process 3 exit with status code 134.\n"
      "Process 2 exit with status code 134.\n");
  EXPECT_EQ(killed.finding.kind, "dead_rank") << killed.finding.summary;
  EXPECT_EQ(killed.finding.ranks, (std::vector<int64_t>{0}));
  const Verdict aborted = AnalyzeLog("Process 3 exit with status code 134.\n");
  EXPECT_EQ(aborted.finding.kind, "crash") << aborted.finding.summary;
  EXPECT_EQ(aborted.finding.ranks, (std::vector<int64_t>{3}));
}

// NVIDIA/nccl-tests#185 (nccl-tests-185-ibv-modify-qp-network-unreachable-proxy-connect-init):
// "misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is
// unreachable", error 2 up through net_ib.cc and proxy.cc, the proxy's "Failed to execute
// operation Connect from rank 1", then the error climbing transport.cc -> init.cc:1079 ->
// init.cc:1358 -> group.cc. By hand: ibv_modify_qp moves the queue pair to ready-to-receive
// against the peer's address; failing with ENETUNREACH, the IB connection was never made, and
// init.cc in the unwinding says the communicator was being built: a start-up fault, as a socket
// connect that fails at init is (sgl-project/sglang#3820). The first run said a network failure.
TEST(FirstRunTwentythirdBatch, QueuePairNotBroughtUpAtInitIsAStartUpFault) {
  const std::string qp =
      "dgxh100-3:225140:225355 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed "
      "with error Network is unreachable\n"
      "dgxh100-3:225140:225355 [0] NCCL INFO transport/net_ib.cc:579 -> 2\n"
      "dgxh100-3:225140:225355 [0] NCCL INFO transport/net_ib.cc:786 -> 2\n"
      "dgxh100-3:225140:225355 [0] NCCL INFO transport/net.cc:728 -> 2\n"
      "dgxh100-3:225140:225355 [0] NCCL INFO proxy.cc:1306 -> 2\n"
      "dgxh100-3:225140:225355 [0] NCCL INFO proxy.cc:1377 -> 2\n"
      "\n"
      "dgxh100-3:225140:225355 [0] proxy.cc:1519 NCCL WARN [Proxy Service 1] Failed to execute "
      "operation Connect from rank 1, retcode 2\n";
  const Verdict v = AnalyzeLog(qp +
                               "dgxh100-3:225140:225289 [0] NCCL INFO transport.cc:168 -> 3\n"
                               "dgxh100-3:225140:225289 [0] NCCL INFO init.cc:1079 -> 3\n"
                               "dgxh100-3:225140:225289 [0] NCCL INFO init.cc:1358 -> 3\n"
                               "dgxh100-3:225140:225289 [0] NCCL INFO group.cc:65 -> 3 [Async "
                               "thread]\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Without init.cc in the unwinding (a channel connected lazily mid-run, OpenRLHF/OpenRLHF#335's
  // reading) the same failure stays a network fault.
  EXPECT_EQ(AnalyzeLog(qp).finding.kind, "network");
}

}  // namespace
}  // namespace strata::hang

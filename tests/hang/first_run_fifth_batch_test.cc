// What the fifth batch of real cases collected on 2026-12-04 showed strata reading wrong at its
// first run (tests/golden/hang-real/, `first_run_batch: "2026-12-04 (fifth)"`, the part not held
// back). Each test quotes the public thread's lines (the case under tests/golden/hang-real/ named
// beside the test) and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"
#include "strata/hang/parsers/gloo_log.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// deepspeedai/DeepSpeed#5302 (deepspeed-5302-launcher-return-code-1-after-checkpoint):
// DeepSpeed's launcher reports a worker's end as "[launch.py:321:sigkill_handler] [<a command
// line with '--local_rank=4'>] exits with return code = 1". One worker exited with an error
// (code 1, no signal): a crash. Read as no verdict (exit 3) at the first run. The command is the
// last worker the launcher started, not the failed one (first_run_twentyfifth_batch_test.cc,
// from deepspeed/launcher/launch.py), so neither a local nor a global rank is named.
TEST(FirstRunFifthBatch, DeepSpeedLauncherReturnCodeIsAWorkerThatFailed) {
  const std::string line =
      "[2024-03-20 20:31:29,269] [ERROR] [launch.py:321:sigkill_handler] "
      "['/data/anaconda3/envs/llama/bin/python', '-u', 'src/train_bash.py', '--local_rank=4', "
      "'--stage', 'sft'] exits with return code = 1\n";
  const auto signals = ScanFailures(line, "log.txt");
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].kind, FailureKind::kWorkerFailed);
  EXPECT_EQ(signals[0].exit_code, 1);
  EXPECT_FALSE(signals[0].local_rank.has_value());
  const Verdict v = AnalyzeLog(line);
  EXPECT_EQ(v.finding.kind, "crash");
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_NE(v.finding.summary.find("a worker exited with code 1"), std::string::npos)
      << v.finding.summary;
  // Return code -9 is the signal number negated: SIGKILL, a worker killed from outside.
  const Verdict killed = AnalyzeLog(
      "[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', "
      "'-u', 'main.py', '--local_rank=0'] exits with return code = -9\n");
  EXPECT_EQ(killed.finding.kind, "dead_rank");
}

// horovod/horovod#2907 (horovod-2907-elastic-rank0-killed-others-gloo-ioexception): Horovod's
// runner tags each rank's output "[N]<stderr>:". Rank 0's last line is the shell's "Killed"
// (SIGKILL; its exit status 137 = 128 + 9), then ranks 1 and 2 abort on Gloo's closed sockets.
// The rank killed is rank 0, which the others' socket errors follow. Read as a dead peer at
// 127.0.0.1 with no rank.
TEST(FirstRunFifthBatch, HorovodRankTaggedKilledNamesTheDeadRank) {
  const Verdict v = AnalyzeLog(
      "[0]<stderr>:RuntimeError: check_rank and exit epoch=1 batch=0 start_rank=0 rank=0\n"
      "[0]<stderr>:Killed\n"
      "[1]<stderr>:terminate called after throwing an instance of 'gloo::IoException'\n"
      "[1]<stderr>:  what():  [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:589] Read "
      "error [127.0.0.1]:3977: Connection reset by peer\n"
      "[2]<stderr>:  what():  [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598] "
      "Connection closed by peer [127.0.0.1]:54168\n");
  EXPECT_EQ(v.finding.kind, "dead_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{0});
}

// NVIDIA/nccl#1610 (nccl-1610-two-threads-alltoall-and-allreduce-different-groups): global rank
// 13 times out at ALLTOALL_BASE SeqNum 216 and global rank 15 at ALLREDUCE SeqNum 57; the lines
// after them name "[PG ID 11 PG GUID 119 Rank 1]" and "[PG ID 11 PG GUID 112 Rank 0]". "PG ID"
// counts the groups each process created; the GUID names the group: these are two groups, one
// rank seen in each, so neither rank is behind the other. Read as one group (PG ID 11) in which
// rank 15, at 57 against 216, was behind (lagging_rank [15]).
TEST(FirstRunFifthBatch, SamePgIdWithDifferentGuidsAreDifferentGroups) {
  const Verdict v = AnalyzeLog(
      "[rank13]:[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=216, OpType=ALLTOALL_BASE, "
      "NumelIn=1379328, NumelOut=1572864, Timeout(ms)=600000) ran for 600045 milliseconds before "
      "timing out.\n"
      "[rank13]:[E218 04:54:22.864535778 ProcessGroupNCCL.cpp:1795] [PG ID 11 PG GUID 119 Rank "
      "1] Exception (either an error or timeout) detected by watchdog at work: 216, last "
      "enqueued NCCL work: 220, last completed NCCL work: 215.\n"
      "[rank15]:[E218 04:54:22.883327702 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=57, OpType=ALLREDUCE, NumelIn=32, "
      "NumelOut=32, Timeout(ms)=600000) ran for 600045 milliseconds before timing out.\n"
      "[rank15]:[E218 04:54:22.883358915 ProcessGroupNCCL.cpp:1795] [PG ID 11 PG GUID 112 Rank "
      "0] Exception (either an error or timeout) detected by watchdog at work: 57, last enqueued "
      "NCCL work: 57, last completed NCCL work: 56.\n");
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_EQ(v.finding.timeout_ms, 600000);
}

// NVIDIA/nccl-tests#166 (nccl-tests-166-shm-segment-creation-failed-at-init): while the
// communicator is set up (init.cc), NCCL cannot create or extend its /dev/shm segments: the
// communicator never forms, a start-up fault. Read as no verdict (exit 3).
TEST(FirstRunFifthBatch, SharedMemorySegmentFailureAtInitIsAStartUpFault) {
  for (const std::string line :
       {"ubuntu:9621:9688 [3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory "
        "segment /dev/shm/nccl-KWfVyt (size 5967872)\n",
        "ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend "
        "/dev/shm/nccl-fjwOOB to 5967876 bytes\n"}) {
    const Verdict v = AnalyzeLog(line);
    EXPECT_EQ(v.finding.kind, "bootstrap") << line;
    EXPECT_NE(v.finding.summary.find("/dev/shm"), std::string::npos) << v.finding.summary;
  }
}

// openucx/ucx#5199 (ucx-5199-mpi-transport-retry-count-exceeded-ib): "Transport retry count
// exceeded on mlx5_0:1/IB": the InfiniBand send was resent until the limit without an
// acknowledgement from the peer, a network fault. NCCL's IB transport words status 12 the same
// way ("transport retry counter exceeded"). Read as no verdict (exit 3).
TEST(FirstRunFifthBatch, TransportRetryCountExceededIsANetworkFault) {
  for (const std::string line :
       {"[master:19546:0:19546] ib_mlx5_log.c:139  Transport retry count exceeded on "
        "mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)\n",
        "node1:123:456 [0] NCCL WARN NET/IB : transport retry counter exceeded\n"}) {
    const Verdict v = AnalyzeLog(line);
    EXPECT_EQ(v.finding.kind, "network") << line;
    EXPECT_TRUE(IsProblem(v.finding)) << line;
  }
}

// PrimeIntellect-ai/prime-diloco#68 (prime-diloco-68-gloo-enforce-preamble-length-size-mismatch):
// Gloo aborts with "enforce fail at .../pair.cc:446] op.preamble.length <= op.nbytes. 1046204 vs
// 1040256": the peer sent 1046204 bytes where this rank posted 1040256 for the same exchange,
// so the two ran it with different sizes: a collective mismatch naming neither side. Read as no
// verdict (exit 3).
TEST(FirstRunFifthBatch, GlooPreambleEnforceIsASizeMismatch) {
  const std::string text =
      "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
      "  what():  [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] "
      "op.preamble.length <= op.nbytes. 1046204 vs 1040256\n";
  const auto gloo = ScanGlooLog(text, "log.txt");
  ASSERT_EQ(gloo.size(), 1u);
  EXPECT_EQ(gloo[0].kind, GlooSignalKind::kSizeMismatch);
  const Verdict v = AnalyzeLog(text);
  EXPECT_EQ(v.finding.kind, "collective_mismatch");
  EXPECT_TRUE(v.finding.ranks.empty());
}

}  // namespace
}  // namespace strata::hang

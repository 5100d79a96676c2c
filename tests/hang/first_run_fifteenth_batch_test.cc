// What the fifteenth batch of real cases (tests/golden/hang-real/, `first_run_batch: "2026-12-05
// (tenth)"`, the part not held back) showed strata reading wrong at its first run. Each test
// quotes the public thread's lines (the case named beside the test) and states what a reader
// derives from them by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// horovod/horovod#1950 (horovod-1950-mpi-peer-unexpectedly-disconnected-peer-host): Open MPI's box
// "An MPI communication peer process has unexpectedly disconnected. ... the root cause of this
// problem is the failure of the peer", then "Local host: reco-zl-c4-reco313", "Peer host:
// reco-zl-c4-reco316". By hand: the process on reco-zl-c4-reco316 went away first (crashed or
// exited without MPI_Finalize), its rank not printed: a dead peer on that host, no rank. The
// first run read nothing (no verdict, exit 3).
TEST(FirstRunFifteenthBatch, OpenMpiPeerDisconnectedBoxNamesTheDeadPeersHost) {
  const Verdict v = AnalyzeLog(
      "An MPI communication peer process has unexpectedly disconnected.  This\n"
      "usually indicates a failure in the peer process (e.g., a crash or\n"
      "otherwise exiting without calling MPI_FINALIZE first).\n"
      "\n"
      "Although this local MPI process will likely now behave unpredictably\n"
      "(it may even hang or crash), the root cause of this problem is the\n"
      "failure of the peer -- that is what you need to investigate.  For\n"
      "example, there may be a core file that you can examine.  More\n"
      "generally: such peer hangups are frequently caused by application bugs\n"
      "or other external events.\n"
      "\n"
      "  Local host: reco-zl-c4-reco313\n"
      "  Local PID:  7720\n"
      "  Peer host:  reco-zl-c4-reco316\n"
      "--------------------------------------------------------------------------\n");
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_EQ(v.finding.peer, "reco-zl-c4-reco316");
  // Hand-made: a "Peer host:" line with no box before it is not read as a peer gone.
  const Verdict alone = AnalyzeLog("  Peer host:  reco-zl-c4-reco316\n");
  EXPECT_NE(alone.finding.kind, "dead_rank") << alone.finding.summary;
}

// horovod/horovod#2097 (horovod-2097-timestamped-wrapped-horovod-shut-down-two-ranks): under
// mpirun's "--timestamp-output --tag-output" prefix, "Fri Sep 25 16:52:57 2020[1]<stderr>:  (0)
// Unknown: Horovod has been shut down. This was caused by an exception on one of the ranks or an
// attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished
// execution." Horovod prints it on the ranks left once one failed or left. By hand: a crash, and
// rank 1, which prints it, is not the culprit. The first run read nothing (no verdict, exit 3).
TEST(FirstRunFifteenthBatch, HorovodShutDownIsACrashThatNamesNoRank) {
  const Verdict v = AnalyzeLog(
      "Fri Sep 25 16:52:57 2020[1]<stderr>:User function raise error: 2 root error(s) found.\n"
      "Fri Sep 25 16:52:57 2020[1]<stderr>:  (0) Unknown: Horovod has been shut down. This was "
      "caused by an exception on one of the ranks or an attempt to allreduce, allgather or\n");
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // The same message under Open MPI's plain tag "[1,0]<stderr>:" (horovod/horovod#3412's form)
  // still names no rank: the tag is the reporting rank's.
  const Verdict tagged = AnalyzeLog(
      "[1,0]<stderr>:Horovod has been shut down. This was caused by an exception on one of the "
      "ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks "
      "finished execution.\n");
  EXPECT_EQ(tagged.finding.kind, "crash") << tagged.finding.summary;
  EXPECT_TRUE(tagged.finding.ranks.empty());
  // Open MPI's "mpirun noticed that process rank 3 ... exited on signal 9 (Killed)" alongside
  // says which rank went first: it wins over the shutdown message.
  const Verdict noticed = AnalyzeLog(
      "[1,0]<stderr>:Horovod has been shut down. This was caused by an exception on one of the "
      "ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks "
      "finished execution.\n"
      "mpirun noticed that process rank 3 with PID 0 on node n1 exited on signal 9 (Killed).\n");
  EXPECT_EQ(noticed.finding.kind, "dead_rank") << noticed.finding.summary;
  EXPECT_EQ(noticed.finding.ranks, (std::vector<int64_t>{3}));
}

// NVIDIA/nccl#296 (nccl-296-nccl-warn-mismatched-collective-around-rank39): "init.cc:1247 NCCL
// WARN Mismatched collective detected, please check your collective calls at and around rank
// 39." NCCL 2.4 compares what the ranks launch together; the rank it prints is where it looked
// ("at and around"). By hand: a collective mismatch, no culprit. The first run read nothing.
TEST(FirstRunFifteenthBatch, NcclMismatchedCollectiveWarningIsAMismatch) {
  const Verdict v = AnalyzeLog(
      "`init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective "
      "calls at and around rank 39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to "
      "see the collective logs`\n");
  EXPECT_EQ(v.finding.kind, "collective_mismatch") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_TRUE(v.finding.peer.empty());
}

// pytorch/xla#2604 (pytorch-xla-2604-failed-to-connect-client-mesh-master): "Failed to connect to
// client mesh master: d7c1c93dfe8c:56419", then the traceback through xmp.spawn's
// _setup_replication -> xm.xla_device(). By hand: the ordinal never reached the XLA mesh master
// while replication was set up, a start-up fault with that master (host d7c1c93dfe8c) as the
// peer. pytorch/xla#2341 (pytorch-xla-2341-tpu6-mesh-configuration-connection-reset):
// "mesh_service.cc:331 : Failed to retrieve mesh configuration: Connection reset by peer (14)" at
// the same place: a start-up fault, no peer printed. The first run read neither.
TEST(FirstRunFifteenthBatch, XlaMeshMasterUnreachableAtReplicationSetUpIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "Failed to connect to client mesh master: d7c1c93dfe8c:56419\n"
      "Traceback (most recent call last):\n"
      "  File \"/root/anaconda3/envs/pytorch/lib/python3.6/site-packages/torch_xla/distributed/"
      "xla_multiprocessing.py\", line 323, in _start_fn\n"
      "    _setup_replication()\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_EQ(v.finding.peer.substr(0, v.finding.peer.find(':')), "d7c1c93dfe8c");
  const Verdict config = AnalyzeLog(
      "Exception in device=TPU:6: tensorflow/compiler/xla/xla_client/mesh_service.cc:331 : Failed "
      "to retrieve mesh configuration: Connection reset by peer (14)\n");
  EXPECT_EQ(config.finding.kind, "bootstrap") << config.finding.summary;
  EXPECT_TRUE(config.finding.ranks.empty());
}

// deepspeedai/DeepSpeed#4907 (deepspeed-4907-runner-ssh-check-exit-255-master, held back, missed
// at its run with the batch's code): DeepSpeed's runner.py line 437 runs its ssh check before
// launching, "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no
// 192.168.3.100 hostname' returned non-zero exit status 255." ssh exits 255 on its own errors
// (man ssh: "ssh exits with the exit status of the remote command or with 255 if an error
// occurred"). By hand: no worker started, a start-up fault naming host 192.168.3.100. The run
// read nothing (no verdict, exit 3).
TEST(FirstRunFifteenthBatch, LauncherSshCheckFailingIsAStartUpFaultNamingTheHost) {
  const Verdict v = AnalyzeLog(
      "Traceback (most recent call last):\n"
      "  File "
      "\"/root/anaconda3/envs/DS/lib/python3.9/site-packages/deepspeed/launcher/runner.py\", "
      "line 437, in main\n"
      "    subprocess.check_call(ssh_check_cmd, stderr=subprocess.DEVNULL, "
      "stdout=subprocess.DEVNULL, shell=True)\n"
      "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 "
      "hostname' returned non-zero exit status 255.\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_EQ(v.finding.peer, "192.168.3.100");
  // Hand-made: the remote command itself failing (its own exit status, not 255) is no ssh fault.
  const Verdict remote = AnalyzeLog(
      "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 "
      "hostname' returned non-zero exit status 1.\n");
  EXPECT_NE(remote.finding.kind, "bootstrap") << remote.finding.summary;
}

}  // namespace
}  // namespace strata::hang

// What the sixteenth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-06"`, the part not held back) showed strata reading wrong at its first run. Each test
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

// horovod/horovod#552 (horovod-552-tf-cuda-oom-then-horovod-shut-down): TensorFlow's allocator
// prints "failed to allocate 512.00M (536870912 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY:
// out of memory", and later Horovod says it "has been shut down. This was caused by an exception
// on one of the ranks". By hand: CUDA_ERROR_OUT_OF_MEMORY is the driver API's name for a GPU out
// of memory; that is the exception the shutdown message points back to. An OOM, no rank printed.
// The first run said crash (the shutdown message alone).
TEST(FirstRunSixteenthBatch, CudaDriverOutOfMemoryNameIsAnOom) {
  const Verdict v = AnalyzeLog(
      "E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 512.00M "
      "(536870912 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
      "...\n"
      "\n"
      "AbortedError (see above for traceback): Horovod has been shut down. This was caused by an "
      "exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor "
      "after one of the ranks finished execution. If the shutdown was caused by an exception, "
      "you should see the exception in the log before the first shutdown message.\n");
  EXPECT_EQ(v.finding.kind, "oom") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: another driver error name is no OOM.
  const Verdict other = AnalyzeLog(
      "E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 512.00M "
      "(536870912 bytes) from device: CUDA_ERROR_INVALID_VALUE: invalid argument\n");
  EXPECT_NE(other.finding.kind, "oom") << other.finding.summary;
}

// deepspeedai/DeepSpeed#2931 (deepspeed-2931-ib-completion-error12-peer-proxy-terminate): after
// "Init COMPLETE", the proxy thread warns "NET/IB : Got completion from peer
// 10.226.98.98<48598> with error 12, opcode 0, len 0, vendor err 129" and unwinds, then PyTorch
// terminates with "NCCL error: unhandled system error, NCCL version 2.14.3". By hand: error 12 is
// IBV_WC_RETRY_EXC_ERR on a queue pair set-up had connected, a link fault towards 10.226.98.98;
// NCCL 2.14 returns it as ncclSystemError, so "unhandled system error" is its report ("Last
// error:" follows it), not a start-up fault. The first run said bootstrap with that peer.
TEST(FirstRunSixteenthBatch, UnhandledSystemErrorAfterACompletionErrorIsThatNetworkFailure) {
  const Verdict v = AnalyzeLog(
      "PHLRR4036:24139:24253 [0] NCCL INFO comm 0x5634028d2ec0 rank 0 nranks 16 cudaDev 0 busId "
      "5000 - Init COMPLETE\n"
      "\n"
      "PHLRR4036:24141:24296 [2] ib_plugin.c:978 NCCL WARN NET/IB : Got completion from peer "
      "10.226.98.98<48598> with error 12, opcode 0, len 0, vendor err 129\n"
      "PHLRR4036:24141:24296 [2] NCCL INFO include/net.h:35 -> 2\n"
      "PHLRR4036:24141:24296 [2] NCCL INFO transport/net.cc:1034 -> 2\n"
      "PHLRR4036:24141:24296 [2] NCCL INFO proxy.cc:520 -> 2\n"
      "PHLRR4036:24141:24296 [2] NCCL INFO proxy.cc:684 -> 2 [Proxy Thread]\n"
      "[E ProcessGroupNCCL.cpp:456] Some NCCL operations have failed or timed out. Due to the "
      "asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
      "corrupted/incomplete data.\n"
      "terminate called after throwing an instance of 'std::runtime_error'\n"
      "  what():  NCCL error: unhandled system error, NCCL version 2.14.3\n");
  EXPECT_EQ(v.finding.kind, "network") << v.finding.summary;
  EXPECT_EQ(v.finding.peer.substr(0, v.finding.peer.find('<')), "10.226.98.98");
  // NVIDIA/nccl-tests#15's lines: a connection closed by the peer while the bootstrap sockets
  // connect, then the same "unhandled system error", stays a start-up fault.
  const Verdict init = AnalyzeLog(
      "Connecting to socket xxx.xxx.xxx.x<46012>\n"
      "\n"
      "server1:6601:6625 [0] include/socket.h:385 NCCL WARN Net : Connection closed by remote "
      "peer\n"
      "NCCL failure common.cu:921 'unhandled system error'\n");
  EXPECT_EQ(init.finding.kind, "bootstrap") << init.finding.summary;
}

// deepspeedai/DeepSpeed#618 (deepspeed-618-launcher-two-ranks-nameerror-exit-zero): DeepSpeed's
// launcher prints "dist_world_size=2" and starts two workers; each prints "Traceback (most recent
// call last):", '  File "fail.py", line 1, in <module>', "    garbageeeeee" and "NameError: name
// 'garbageeeeee' is not defined". By hand: both workers exited on a Python error of the program
// at its first line, before any collective; a crash, and no rank prefix says which rank printed
// which traceback. The first run read nothing (no verdict, exit 3).
TEST(FirstRunSixteenthBatch, TracebackEndedByAProgramErrorIsACrash) {
  const std::string two_tracebacks =
      "[2020-12-24 16:25:13,902] [INFO] [launch.py:100:main] dist_world_size=2\n"
      "[2020-12-24 16:25:13,902] [INFO] [launch.py:102:main] Setting CUDA_VISIBLE_DEVICES=0,1\n"
      "Traceback (most recent call last):\n"
      "  File \"fail.py\", line 1, in <module>\n"
      "    garbageeeeee\n"
      "NameError: name 'garbageeeeee' is not defined\n"
      "Traceback (most recent call last):\n"
      "  File \"fail.py\", line 1, in <module>\n"
      "    garbageeeeee\n"
      "NameError: name 'garbageeeeee' is not defined\n";
  const Verdict v = AnalyzeLog(two_tracebacks);
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: the same exception line with no traceback above it (a message that quotes it)
  // is not read.
  const Verdict quoted = AnalyzeLog("NameError: name 'garbageeeeee' is not defined\n");
  EXPECT_NE(quoted.finding.kind, "crash") << quoted.finding.summary;
  // Hand-made: under torchrun's "[rank1]:" prefix the rank that raised it is named.
  const Verdict prefixed = AnalyzeLog(
      "[rank1]: Traceback (most recent call last):\n"
      "[rank1]:   File \"fail.py\", line 1, in <module>\n"
      "[rank1]:     garbageeeeee\n"
      "[rank1]: NameError: name 'garbageeeeee' is not defined\n");
  EXPECT_EQ(prefixed.finding.kind, "crash") << prefixed.finding.summary;
  EXPECT_EQ(prefixed.finding.ranks, (std::vector<int64_t>{1}));
  // A watchdog timeout in the same evidence comes first: the program error is read only when
  // nothing distributed explains the failure (aioz-ai/GCD#6's line, then a hand-made KeyError).
  const Verdict timed_out = AnalyzeLog(
      "[E ProcessGroupNCCL.cpp:737] [Rank 2] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=56693, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1804371 "
      "milliseconds before timing out.\n"
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 91, in <module>\n"
      "    main()\n"
      "KeyError: 'loss'\n");
  EXPECT_EQ(timed_out.finding.kind, "collective_timeout") << timed_out.finding.summary;
}

// The batch's held-back misses, read once their run with the finished code had been recorded.

// deepspeedai/DeepSpeed#4649 (deepspeed-4649-k8s-ssh-hostname-i-exit-255-worker0): one line,
// "subprocess.CalledProcessError: Command '['ssh deepspeed-helloworld-worker-0 hostname -I']'
// returned non-zero exit status 255." By hand: DeepSpeed's runner asks its first host for its
// address over ssh before launching; 255 is ssh's own failure, so the host
// deepspeed-helloworld-worker-0 was not reached and no worker started. A start-up fault naming
// that host. The run with the finished code read nothing (no verdict, exit 3).
TEST(FirstRunSixteenthBatch, SshCommandQuotedAsAListNamesTheHost) {
  const Verdict v = AnalyzeLog(
      "subprocess.CalledProcessError: Command '['ssh deepspeed-helloworld-worker-0 hostname "
      "-I']' returned non-zero exit status 255.\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.peer, "deepspeed-helloworld-worker-0");
  // Hand-made: another command that failed with 255 is no ssh check.
  const Verdict other = AnalyzeLog(
      "subprocess.CalledProcessError: Command '['make', 'install']' returned non-zero exit status "
      "255.\n");
  EXPECT_NE(other.finding.kind, "bootstrap") << other.finding.summary;
}

// hiyouga/EasyR1#324 (easyr1-324-runner-actor-died-owner-node-crashed): "ray.exceptions.
// ActorDiedError: The actor died unexpectedly before finishing this task." then "The actor is
// dead because its owner has died. Owner Id: 01000000ffffffffffffffffffffffffffffffffffffffffffff
// ffff Owner Ip address: 172.21.160.9 Owner worker exit type: SYSTEM_ERROR Worker exit detail:
// Owner's node has crashed." By hand: the process that owned the actor went away with its node;
// a dead process, no rank printed. The run with the finished code read nothing (exit 3).
TEST(FirstRunSixteenthBatch, RayActorWhoseOwnerDiedIsADeadProcess) {
  const Verdict v = AnalyzeLog(
      "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
      "        class_name: Runner\n"
      "        ip: 172.21.160.9\n"
      "The actor is dead because its owner has died. Owner Id: "
      "01000000ffffffffffffffffffffffffffffffffffffffffffffffff Owner Ip address: 172.21.160.9 "
      "Owner worker exit type: SYSTEM_ERROR Worker exit detail: Owner's node has crashed.\n");
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
}

// horovod/horovod#465 (horovod-465-mpi-init-thread-local-abort-three-processes): three times
// "*** An error occurred in MPI_Init_thread", "*** on a NULL communicator", "*** MPI_ERRORS_ARE_
// FATAL (processes in this communicator will now abort,", "[host1:71142] Local abort before
// MPI_INIT completed completed successfully,". By hand: MPI failed to initialise in each process,
// so no rank existed and training never started: a start-up fault, no rank. The run with the
// finished code read nothing (exit 3).
TEST(FirstRunSixteenthBatch, OpenMpiInitFailureIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "*** An error occurred in MPI_Init_thread\n"
      "*** on a NULL communicator\n"
      "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n"
      "***    and potentially your MPI job)\n"
      "[host1:71142] Local abort before MPI_INIT completed completed successfully,\n"
      " but am not able to aggregate error messages, and not able to guarantee that all other "
      "processes\n"
      " were killed!\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: an error in a collective, after MPI started, is not a start-up fault.
  const Verdict later = AnalyzeLog(
      "*** An error occurred in MPI_Allreduce\n"
      "*** reported by process [1234,1]\n");
  EXPECT_NE(later.finding.kind, "bootstrap") << later.finding.summary;
}

// Two open misses of the fifteenth batch's held-back cases, read by general rules.

// pytorch/xla#4115 (pytorch-xla-4115-two-vm-mesh-waitforconnected-check-failed): a traceback
// through xmp's _setup_replication -> xm.xla_device() ends in "RuntimeError:
// tensorflow/compiler/xla/xla_client/mesh_service.cc:329 : Check failed:
// impl_->channel->WaitForConnected( std::chrono::system_clock::now() +
// std::chrono::seconds(connect_w" (cut there in the thread). By hand: the mesh client waits for
// its gRPC channel to the master when it is created; the check failed, so replication was never
// set up. A start-up fault, no rank or host on the line. Its held-back run read nothing.
TEST(FirstRunSixteenthBatch, XlaMeshClientWaitForConnectedIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "  File \"/anaconda3/envs/torch-xla-1.13/lib/python3.7/site-packages/torch_xla/core/"
      "xla_model.py\", line 21, in <lambda>\n"
      "    _DEVICES = xu.LazyProperty(lambda: torch_xla._XLAC._xla_get_devices())\n"
      "RuntimeError: tensorflow/compiler/xla/xla_client/mesh_service.cc:329 : Check failed: "
      "impl_->channel->WaitForConnected( std::chrono::system_clock::now() + "
      "std::chrono::seconds(connect_w\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
}

// ray-project/ray#27716 (ray-27716-raylet-memory-monitor-kills-actor-node-ip): "(raylet)
// [2022-08-29 15:18:33,592 E 30307 30344] (raylet) node_manager.cc:2963: System memory low at
// node with IP 172.17.0.2. Used memory (23.63GB) / total capacity (33.28GB) (0.709971) exceeds
// threshold 0.7, killing latest task with name the_real_oom_actor:Leaker.__init__ ...". By hand:
// the raylet killed a worker because the host ran low on memory: a process killed from outside,
// no rank; 172.17.0.2 is where it ran, not a network peer. Its held-back run read nothing.
TEST(FirstRunSixteenthBatch, RayMemoryMonitorKillIsADeadProcess) {
  const Verdict v = AnalyzeLog(
      "(raylet) [2022-08-29 15:18:33,592 E 30307 30344] (raylet) node_manager.cc:2963: System "
      "memory low at node with IP 172.17.0.2. Used memory (23.63GB) / total capacity (33.28GB) "
      "(0.709971) exceeds threshold 0.7, killing latest task with name "
      "the_real_oom_actor:Leaker.__init__ and actor ID dc0d34f19836a07b46222dbc01000000 to avoid "
      "running out of memory.\n");
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_TRUE(v.finding.peer.empty());
}

}  // namespace
}  // namespace strata::hang

// What the twenty-first batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-06 (sixth)"`) showed strata reading wrong at its first run. Each test quotes the
// public thread's lines (the case named beside the test) and states what a reader derives from
// them by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_fields.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// facebookresearch/metaseq#52 (metaseq-52-store-barrier-1792-of-2048-workers): "RuntimeError:
// Timed out initializing process group in store based barrier on rank: 4330, for key:
// store_based_barrier_key:522 (world_size=2048, worker_count=1792, timeout=0:30:00)". By hand:
// torch prints the process group's timeout as Python prints a datetime.timedelta, H:MM:SS, so
// 0:30:00 is 30 min = 30 * 60 * 1000 = 1800000 ms; 1792 of 2048 processes arrived, a start-up
// fault naming no rank. The first run read the kind but no timeout.
TEST(FirstRunTwentyfirstBatch, StoreBarrierTimeoutIsReadFromItsTimedelta) {
  const Verdict v = AnalyzeLog(
      "    raise RuntimeError(\n"
      "RuntimeError: Timed out initializing process group in store based barrier on rank: 4330, "
      "for key: store_based_barrier_key:522 (world_size=2048, worker_count=1792, "
      "timeout=0:30:00)\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_EQ(v.finding.timeout_ms, 1800000);
  // Hand-made forms of str(timedelta): "1 day, 2:00:00" is (24 + 2) h = 93600000 ms;
  // "0:00:30.500000" is 30 s and 500000 us = 30500 ms; "3 days, 0:00:01" is 259201000 ms.
  using failure_fields::TimedeltaMsAfter;
  EXPECT_EQ(TimedeltaMsAfter("(timeout=1 day, 2:00:00)", "timeout="), 93600000);
  EXPECT_EQ(TimedeltaMsAfter("timeout=0:00:30.500000", "timeout="), 30500);
  EXPECT_EQ(TimedeltaMsAfter("timeout=3 days, 0:00:01", "timeout="), 259201000);
  // Not a timedelta: seconds as a number, or no key at all.
  EXPECT_EQ(TimedeltaMsAfter("timeout=1800", "timeout="), std::nullopt);
  EXPECT_EQ(TimedeltaMsAfter("world_size=2", "timeout="), std::nullopt);
}

// pytorch/pytorch#131781 (pytorch-131781-bootstrap-socket-in-progress-three-gpus): on host g105,
// "g105:26921:27058 [0] NCCL INFO misc/socket.cc:505 -> 2 (Operation now in progress)", then
// socket.cc:570 and 621, "bootstrap.cc:275 -> 2", "init.cc:1493 -> 2" and "group.cc:64 -> 2
// [Async thread]", the same for local GPUs 4 and 2. By hand: NCCL prints "file:line -> code" only
// as an error returns (its NCCLCHECK trace); code 2 is ncclSystemError. A socket connect failed
// inside bootstrap.cc while ncclCommInitRank built the communicator: a start-up fault, no rank
// named (the [N] are local GPUs). The first run found nothing (no warning line).
TEST(FirstRunTwentyfirstBatch, ErrorTraceOutOfBootstrapIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "g105:26921:27058 [0] NCCL INFO misc/socket.cc:505 -> 2 (Operation now in progress)\n"
      "g105:26921:27058 [0] NCCL INFO misc/socket.cc:570 -> 2\n"
      "g105:26921:27058 [0] NCCL INFO misc/socket.cc:621 -> 2\n"
      "g105:26921:27058 [0] NCCL INFO bootstrap.cc:275 -> 2\n"
      "g105:26921:27058 [0] NCCL INFO init.cc:1493 -> 2\n"
      "g105:26921:27058 [0] NCCL INFO group.cc:64 -> 2 [Async thread]\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: the same trace out of init.cc without bootstrap.cc names no start-up step; it
  // stays unread (the corpus reads init.cc traces only beside a failure line).
  const Verdict init_only = AnalyzeLog(
      "g105:26921:27058 [0] NCCL INFO init.cc:1493 -> 2\n"
      "g105:26921:27058 [0] NCCL INFO group.cc:64 -> 2 [Async thread]\n");
  EXPECT_NE(init_only.finding.kind, "bootstrap") << init_only.finding.summary;
}

// megagonlabs/t5-japanese#1 (t5-japanese-1-tpu-lame-worker-task0-heartbeat): step lines, then
// "INFO:tensorflow:ShutdownHook: lame workers found:
// HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)". By hand: TensorFlow's
// ShutdownHook pings every worker task through its HeartbeatManager; a "lame" worker is one that
// stopped answering, here task 0 (the reporter's preemptible TPU was preempted). A dead member,
// task 0, read as rank 0 as the coordination service's "task:37 heartbeat timeout" is. The first
// run recognised no line.
TEST(FirstRunTwentyfirstBatch, TensorflowLameWorkerIsThatTaskGone) {
  const Verdict v = AnalyzeLog(
      "INFO:tensorflow:Outfeed finished for iteration (1862, 53)\n"
      "INFO:tensorflow:ShutdownHook: lame workers found: "
      "HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)\n");
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, (std::vector<int64_t>{0}));
  // Hand-made: two lame tasks in one list; neither is singled out, so no rank is named.
  const Verdict two = AnalyzeLog(
      "INFO:tensorflow:ShutdownHook: lame workers found: "
      "HeartbeatManager(/job:worker/replica:0/task:1/device:CPU:0, "
      "/job:worker/replica:0/task:3/device:CPU:0)\n");
  EXPECT_EQ(two.finding.kind, "dead_rank") << two.finding.summary;
  EXPECT_TRUE(two.finding.ranks.empty());
}

// tensorflow/tpu#590 (tpu-590-preempted-hook-keyerror-health-only): "Exception in thread
// Thread-4:", a traceback through threading.py and tensorflow/python/tpu/preempted_hook.py, then
// "KeyError: 'health'". By hand: Python's threading module prints "Exception in thread NAME:"
// for an exception that ended a thread; the thread (TensorFlow's preemption watcher) died and the
// program ran on, so it is no crash of the process, and nothing else says what failed: read but
// no verdict. The first run read the KeyError as the process's crash.
TEST(FirstRunTwentyfirstBatch, ProgramErrorEndingAThreadIsNoCrash) {
  const std::string traceback =
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3.6/threading.py\", line 916, in _bootstrap_inner\n"
      "    self.run()\n"
      "  File \"/usr/local/lib/python3.6/dist-packages/tensorflow/python/tpu/preempted_hook.py\", "
      "line 89, in run\n"
      "    self._cluster._tpu, response['state'], response['health'])  # pylint: "
      "disable=protected-access\n"
      "KeyError: 'health'\n";
  const Verdict v = AnalyzeLog("Exception in thread Thread-4:\n" + traceback);
  EXPECT_EQ(v.finding.kind, "unknown") << v.finding.summary;
  // The same traceback without the thread's heading is the program's own error: a crash.
  const Verdict program = AnalyzeLog(traceback);
  EXPECT_EQ(program.finding.kind, "crash") << program.finding.summary;
}

// Lightning-AI/pytorch-lightning#3029 (lightning-3029-nccl-invalid-argument-torchelastic-
// process-0): DDP's "_distributed_broadcast_coalesced" frame, then "RuntimeError: NCCL error in:
// /opt/conda/conda-bld/pytorch_1595629403081/work/torch/lib/c10d/../c10d/NCCLUtils.hpp:82,
// invalid argument, NCCL version 2.4.8", then torchelastic's "[default] Worker group failed" and
// "-- Process 0 terminated with the following error:". By hand: ncclInvalidArgument is NCCL
// refusing the call the process made; the process raised and exited: a crash of its own. "Process
// 0" is the agent's local index on a one-GPU node, so no rank. The first run recognised no line.
TEST(FirstRunTwentyfirstBatch, NcclInvalidArgumentIsTheProcesssCrash) {
  const Verdict v = AnalyzeLog(
      "    dist._broadcast_coalesced(self.process_group, tensors, buffer_size)\n"
      "RuntimeError: NCCL error in: "
      "/opt/conda/conda-bld/pytorch_1595629403081/work/torch/lib/c10d/../c10d/NCCLUtils.hpp:82, "
      "invalid argument, NCCL version 2.4.8\n"
      "[default] Worker group failed\n");
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: under torchrun's "[rank3]:" prefix it is rank 3's crash.
  const Verdict ranked = AnalyzeLog(
      "[rank3]: RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:82, "
      "invalid argument, NCCL version 2.4.8\n");
  EXPECT_EQ(ranked.finding.kind, "crash") << ranked.finding.summary;
  EXPECT_EQ(ranked.finding.ranks, (std::vector<int64_t>{3}));
}

// ray-project/ray#18449 (ray-18449-nodes-marked-dead-missed-heartbeats, held back, missed at its
// run and read since): a progress bar, then "2021-09-05 05:42:38,294     WARNING worker.py:1228
// -- The node with node id: 0fc1... and ip: 172.31.57.35 has been marked dead because the
// detector has missed too many heartbeats from it. This can happen when a raylet crashes
// unexpectedly or has lagging heartbeats.", and the same for 172.31.12.38. By hand: Ray's control
// store declares a node dead when its heartbeats stop; the node's processes are gone with it. Two
// nodes are lost, named by address, no rank: dead members, no culprit. The run recognised no line.
TEST(FirstRunTwentyfirstBatch, RayNodeMarkedDeadIsADeadMember) {
  const Verdict v = AnalyzeLog(
      "2021-09-05 05:42:38,294     WARNING worker.py:1228 -- The node with node id: "
      "0fc14938add3345146c57e92449e77a584cace230879f50fd0813cc0 and ip: 172.31.57.35 has been "
      "marked dead because the detector has missed too many heartbeats from it. This can happen "
      "when a raylet crashes unexpectedly or has lagging heartbeats.\n");
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
}

// THUDM/slime#1309 (slime-1309-frames-broadcast-unique-nccl-id-store-get, held back, missed at
// its run and read since): only c10 backtrace frames, "frame #8: c10d::PrefixStore::get(...)",
// "frame #9: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID(ncclUniqueId*, bool, ...)", "frame
// #10: c10d::ProcessGroupNCCL::initNCCLComm(...)", "frame #11: c10d::ProcessGroupNCCL::recv(...)".
// By hand: a c10 error's frames are the stack where it was raised, innermost first; it was raised
// in the store get that fetches the NCCL unique ID while the communicator for a recv was being
// built. The communicator never formed: a start-up fault, no rank named. The run found nothing.
TEST(FirstRunTwentyfirstBatch, BacktraceThroughUniqueIdExchangeIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "frame #8: c10d::PrefixStore::get(std::__cxx11::basic_string<char, "
      "std::char_traits<char>, std::allocator<char> > const&) + 0x30 (0x7f97f10fed50 in "
      "/usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cpu.so)\n"
      "frame #9: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID(ncclUniqueId*, bool, "
      "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, "
      "int) + 0x5c4 (0x7f9794cce5e4 in "
      "/usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so)\n"
      "frame #10: c10d::ProcessGroupNCCL::initNCCLComm(std::__cxx11::basic_string<char, "
      "std::char_traits<char>, std::allocator<char> > const&, c10::Device&, c10d::OpType, int, "
      "bool) + 0x1c2a (0x7f9794cd113a in "
      "/usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so)\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
}

}  // namespace
}  // namespace strata::hang

// The first-failure scanner on lines quoted from public threads (the cases under
// tests/golden/hang-real/ name each source), plus truncated and malformed input.
#include "strata/hang/parsers/failure_log.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::hang::failure_log_test {
namespace {

std::vector<FailureSignal> Scan(const std::string& text) { return ScanFailures(text, "log.txt"); }

TEST(FailureLog, CudaErrorKeepsTheRankOfThePrefixOrOfTheGroupMessage) {
  // bytedance/flux#40: torchrun's prefix names rank 0.
  auto s = Scan(
      "[rank0]:[E907 22:34:22.823452114 ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank 0] "
      "Process group watchdog thread terminated with exception: CUDA error: an illegal memory "
      "access was encountered\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, FailureKind::kCudaError);
  EXPECT_EQ(s[0].global_rank, 0);
  EXPECT_EQ(s[0].detail, "an illegal memory access was encountered");
  // sgl-project/sglang#271: no prefix, "[PG 1 Rank 1]" inside what().
  s = Scan(
      "  what():  [PG 1 Rank 1] Process group watchdog thread terminated with exception: CUDA "
      "error: "
      "device-side assert triggered\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_FALSE(s[0].global_rank.has_value());
  EXPECT_EQ(s[0].pg_rank, 1);
  EXPECT_EQ(s[0].pg_id, "1");
  // "CUDA error: out of memory" is an OOM, read by log_signals, not a CUDA failure here.
  EXPECT_TRUE(Scan("RuntimeError: CUDA error: out of memory\n").empty());
}

TEST(FailureLog, XidAndNcclCudaFailure) {
  // NVIDIA/open-gpu-kernel-modules#1150
  auto s = Scan(
      "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by "
      "previous Xid 149\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].detail, "Xid 45");
  // NVIDIA/nccl#1504: NCCL's own "<host>:<pid>:<tid> [dev]" head gives the host.
  s = Scan(
      "678c7278cb2d:26024:27098 [1] include/alloc.h:125 NCCL WARN Cuda failure 710 'device-side "
      "assert "
      "triggered'\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, FailureKind::kCudaError);
  EXPECT_EQ(s[0].host, "678c7278cb2d");
}

TEST(FailureLog, NetworkLinesNameThePeerWithoutItsPort) {
  // NVIDIA/nccl#1405, #795, #969
  auto s = Scan(
      "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
      "10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
      "a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv "
      "from "
      "10.200.84.247<58355> failed : Broken pipe\n"
      "10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] transport/net_ib.cc:1038 NCCL WARN "
      "NET/IB "
      ": req 0/1 tag 0 peer 10.10.23.6<58683> collective mismatch error, local size 496640 remote "
      "size "
      "65536\n"
      "pt-worker-0:4287:4512 [0] NCCL INFO [Service thread] Connection closed by localRank 0\n");
  ASSERT_EQ(s.size(), 3u);  // a service thread closing its local connection is no failure
  EXPECT_EQ(s[0].peer, "10.216.210.236");
  EXPECT_EQ(s[1].peer, "10.200.84.247");
  EXPECT_EQ(s[1].detail, "Broken pipe");
  EXPECT_EQ(s[2].kind, FailureKind::kNetMismatch);
  EXPECT_EQ(s[2].peer, "10.10.23.6");
}

TEST(FailureLog, BootstrapAndTheSettingToCheck) {
  // NVIDIA/nccl#1837
  auto s = Scan(
      "[trainer3]:twshared1016:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to "
      "eth2\n"
      "[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) "
      "nor "
      "AF_INET6(10)\n");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].kind, FailureKind::kSetting);
  EXPECT_EQ(s[0].detail, "NCCL_SOCKET_IFNAME=eth2");
  EXPECT_EQ(s[1].kind, FailureKind::kBootstrap);
  // NVIDIA/nccl#1612: the unwinding through bootstrap.cc says the socket error was bootstrap's.
  s = Scan("[0] NCCL INFO bootstrap.cc:701 -> 6\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, FailureKind::kBootstrapTrace);
}

TEST(FailureLog, TorchrunSummaryRecords) {
  // huggingface/accelerate#2960, as pasted (no other failures, then the root cause).
  const auto s = Scan(
      "Failures:\n  <NO_OTHER_FAILURES>\n-----\nRoot Cause (first observed failure):\n[0]:\n"
      "  time      : 2024-07-26_10:59:45\n  host      : SH-IDC1-10-140-24-95\n"
      "  rank      : 10 (local_rank: 2)\n  exitcode  : -6 (pid: 214033)\n"
      "  error_file: <N/A>\n  traceback : Signal 6 (SIGABRT) received by PID 214033\n"
      "=======\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, FailureKind::kChildFailed);
  EXPECT_TRUE(s[0].root_cause);
  EXPECT_EQ(s[0].global_rank, 10);
  EXPECT_EQ(s[0].host, "SH-IDC1-10-140-24-95");
  EXPECT_EQ(s[0].exit_code, -6);
  EXPECT_EQ(s[0].signal, "SIGABRT");
  EXPECT_EQ(s[0].time, "2024-07-26_10:59:45");
}

TEST(FailureLog, FlightRecorderAnalyserReport) {
  // pytorch/pytorch#140969
  const auto s = Scan(
      "Not all ranks joining collective: sequence number: 31117\ninternal record id: 31116\n"
      "group info: 0:default_pg\ncollective: nccl:all_reduce\nmissing ranks: {3, 4, 5, 6, 7}\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, FailureKind::kFrNotJoined);
  EXPECT_EQ(s[0].seq, 31117);
  EXPECT_EQ(s[0].op, "all_reduce");
  EXPECT_EQ(s[0].ranks, (std::vector<int64_t>{3, 4, 5, 6, 7}));
}

TEST(FailureLog, TruncatedAndMalformedInputNeverCrashes) {
  EXPECT_TRUE(Scan("").empty());
  EXPECT_TRUE(Scan("\n\n\r\n").empty());
  // A summary cut before its rank line: no record (a record without a rank names nobody).
  EXPECT_TRUE(
      Scan("Root Cause (first observed failure):\n[0]:\n  time      : 2024-07-26_10:59:45\n")
          .empty());
  // A report cut before its missing ranks; a set never closed.
  auto s = Scan("Not all ranks joining collective 5 at entry 4\nmissing ranks: {1, 2");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].ranks.empty());
  // A peer at the very end of the text, a bare key, binary bytes, an unterminated escape.
  s = Scan("Got completion from peer");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].peer, "");
  EXPECT_TRUE(Scan(std::string("\x00\xff\x1b[", 4)).empty());
  const std::string huge(1 << 20, 'x');
  s = Scan("CUDA error: " + huge);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_LE(s[0].text.size(), 300u);
}

// Issue 33's classes, one line each as pasted in the case named (tests/golden/hang-real/).
TEST(FailureLog, StartUpFaultsWorkerExitsTritonErrorsAndMismatchReports) {
  struct Case {
    const char* source;
    std::string line;
    FailureKind kind;
  };
  const Case cases[] = {
      {"gpustack-2125",
       "(RayWorkerWrapper pid=933, ip=50.147.43.24) [rank1]:[E528 08:52:46.164295950 "
       "ProcessGroupGloo.cpp:145] Gloo connectFullMesh failed with "
       "[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
       FailureKind::kBootstrap},
      {"pytorch-85604",
       "[E socket.cpp:435] [c10d] The server socket has failed to listen on any local network "
       "address.",
       FailureKind::kBootstrap},
      {"megatron-deepspeed-338",
       "RuntimeError: Timed out initializing process group in store based barrier on rank: 7, for "
       "key: store_based_barrier_key:32 (world_size=8, worker_count=4, timeout=0:00:30)",
       FailureKind::kBootstrap},
      {"colossalai-3514",
       "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 3 "
       "(pid: 812917) of binary: /data/chenhao/anaconda3/envs/ColossalAI-Chat/bin/python",
       FailureKind::kWorkerFailed},
      {"vllm-17098",
       "ERROR 04-15 00:31:11 worker_base.py:574] RuntimeError: Triton Error [CUDA]: an illegal "
       "memory access was encountered",
       FailureKind::kCudaError},
  };
  for (const Case& c : cases) {
    const auto s = Scan(c.line + "\n");
    ASSERT_EQ(s.size(), 1u) << c.source;
    EXPECT_EQ(s[0].kind, c.kind) << c.source;
  }
  // c10d's store client (huggingface/accelerate#2468, hpcaitech/Open-Sora#667): the host, no port.
  EXPECT_EQ(Scan("trainer-2: torch.distributed.DistNetworkError: The client socket has failed to "
                 "connect to any network address of (192.168.121.122, 1040). The client socket has "
                 "failed to connect to 192.168.121.122:1040 (errno: 113 - No route to host).\n")[0]
                .peer,
            "192.168.121.122");
  const auto store = Scan(
      "[W socket.cpp:697] [c10d] The client socket has failed to connect to "
      "[::ffff:0.104.99.143]:47389 (errno: 110 - Connection timed out).\n");
  ASSERT_EQ(store.size(), 1u);
  EXPECT_EQ(store[0].kind, FailureKind::kBootstrap);
  EXPECT_EQ(store[0].peer, "::ffff:0.104.99.143");
  // alibaba/Pai-Megatron-Patch#583: a killed DataLoader worker is rank 0's crash.
  const auto loader =
      Scan("[rank0]: RuntimeError: DataLoader worker (pid 9382) is killed by signal: Killed. \n");
  ASSERT_EQ(loader.size(), 1u);
  EXPECT_EQ(loader[0].kind, FailureKind::kCrash);
  EXPECT_EQ(loader[0].global_rank, 0);
  // The barrier's counts: 4 of 8 processes arrived.
  EXPECT_EQ(Scan(cases[2].line)[0].detail,
            "only 4 of 8 processes reached the store-based barrier in time");
  const auto worker = Scan(cases[3].line)[0];
  EXPECT_EQ(worker.exit_code, -9);
  EXPECT_EQ(worker.local_rank, 3);
  EXPECT_EQ(worker.signal, "SIGKILL");
  EXPECT_FALSE(worker.global_rank.has_value());  // a local rank is not a global one
  EXPECT_EQ(Scan(cases[4].line)[0].detail, "an illegal memory access was encountered");
  // Waiting in the store barrier is normal start-up while processes arrive (2 of 4); more
  // processes than the world (8 of 4, yolov5-style double launch) is a fault.
  EXPECT_TRUE(Scan("Waiting in store based barrier to initialize process group for rank: 0, key: "
                   "store_based_barrier_key:1 (world_size=4, worker_count=2, timeout=0:30:00)\n")
                  .empty());
}

// TORCH_DISTRIBUTED_DEBUG=DETAIL's report, ms-swift#9443: both sides at SequenceNumber 3104,
// ALLREDUCE, ranks 1 and 0 (the second side's fields follow "but Rank 0").
TEST(FailureLog, DetailMismatchReportReadsBothSides) {
  const auto s = Scan(
      "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running "
      "collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, "
      "TensorShape=[195812480], TensorDtypes=BFloat16), but Rank 0 is running collective: "
      "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[51123456], "
      "TensorDtypes=BFloat16).Collectives differ in the following aspects:   Tensor Tensor "
      "shapes: 195812480vs 51123456\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, FailureKind::kDetailMismatch);
  EXPECT_EQ(s[0].ranks, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(s[0].seq, 3104);
  EXPECT_EQ(s[0].other_seq, 3104);
  EXPECT_EQ(s[0].op, "ALLREDUCE");
  EXPECT_EQ(s[0].other_op, "ALLREDUCE");
  EXPECT_EQ(s[0].detail, "Tensor Tensor shapes: 195812480vs 51123456");
  // A second side without its comma (bghira/SimpleTuner#2712: "SequenceNumber=0OpType=REDUCE").
  const auto t = Scan(
      "[RANK 1] 2026-05-19 10:10:29,701 [ERROR] GPU circuit breaker OPEN: cuda_error - Detected "
      "mismatch between collectives on ranks. Rank 1 is running "
      "collective: CollectiveFingerPrint(SequenceNumber=101, OpType=ALLGATHER), but Rank 7 is "
      "running collective: CollectiveFingerPrint(SequenceNumber=0OpType=REDUCE).\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].ranks, (std::vector<int64_t>{1, 7}));
  EXPECT_EQ(t[0].other_seq, 0);
  EXPECT_EQ(t[0].other_op, "REDUCE");
}

// Inside torchrun's failure record the traceback value is read as a line of its own.
TEST(FailureLog, AMismatchInsideTheLaunchersFailureRecordIsRead) {
  const auto s = Scan(
      "Failures:\n"
      "[1]:\n"
      "  time      : 2024-01-01_00:00:00\n"
      "  host      : node1\n"
      "  rank      : 3 (local_rank: 3)\n"
      "  exitcode  : 1 (pid: 99)\n"
      "  traceback : RuntimeError: Detected mismatch between collectives on ranks. Rank 3 is "
      "running collective: CollectiveFingerPrint(SequenceNumber=21, OpType=BROADCAST), but Rank "
      "0 is running collective: CollectiveFingerPrint(SequenceNumber=21, OpType=ALLREDUCE).\n");
  bool found = false;
  for (const FailureSignal& f : s) {
    if (f.kind != FailureKind::kDetailMismatch) continue;
    found = true;
    EXPECT_EQ(f.global_rank, 3);
    EXPECT_EQ(f.op, "BROADCAST");
    EXPECT_EQ(f.other_op, "ALLREDUCE");
  }
  EXPECT_TRUE(found);
}

// Horovod's stall inspector, both formats: horovod#2564 ("Missing ranks:" then "1: [...]", the
// list cut mid-name by the paste) and horovod#534 ("name [missing ranks: 0]").
TEST(FailureLog, HorovodStallInspectorNamesTheMissingRanks) {
  auto s = Scan(
      "[2020-12-30 16:35:15.181832: W /tmp/pip-req-build-12flcl_u/horovod/common/"
      "stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or "
      "broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 "
      "seconds.\n"
      "Missing ranks:\n"
      "1: [DistributedGradientTape_Allreduce/cond_163/then/_1304/HorovodAllreduce_AddN_103_0, "
      "DistributedGradientTape_Allreduce/cond_164/then/_1312/HorovodAllreduce_gradient_tap\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, FailureKind::kHorovodStall);
  EXPECT_EQ(s[0].ranks, std::vector<int64_t>{1});
  s = Scan("HorovodBroadcast_conv_layer1_Conv_weights_0 [missing ranks: 0, 3]\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].ranks, (std::vector<int64_t>{0, 3}));
  // Without the inspector's header, "3: [" is any text (a Python dict, a list), not a rank.
  EXPECT_TRUE(Scan("Missing ranks:\n3: [1, 2]\n").empty());
}

}  // namespace
}  // namespace strata::hang::failure_log_test

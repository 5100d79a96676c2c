// The first-failure scanner on lines quoted from public threads (the cases under
// tests/golden/hang-real/ name each source), plus truncated and malformed input.
#include "strata/hang/parsers/failure_log.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::hang {
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

}  // namespace
}  // namespace strata::hang

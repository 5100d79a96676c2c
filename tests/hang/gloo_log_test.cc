// Gloo's failure lines, verbatim from the logs torch 2.11 wrote when the failures were provoked
// on purpose (tests/golden/hang-real/strata-h200-gloo*/input/, each case.yaml says how). The
// expected values are read off the lines by eye.
#include "strata/hang/parsers/gloo_log.h"

#include <gtest/gtest.h>

namespace strata::hang {
namespace {

// strata-h200-gloo4-broadcast-vs-allreduce/input/rank0.log and rank3.log, line 1.
constexpr const char* kRecvTimeout =
    "rank 0: third collective raised: RuntimeError('[/pytorch/third_party/gloo/gloo/transport/tcp/"
    "unbound_buffer.cc:78] Timed out waiting 8000ms for recv operation to complete')";
constexpr const char* kSendTimeout =
    "rank 3: third collective raised: RuntimeError('[/pytorch/third_party/gloo/gloo/transport/tcp/"
    "unbound_buffer.cc:129] Timed out waiting 8000ms for send operation to complete')";
// strata-h200-gloo4-dead-rank/input/rank0.log, line 1.
constexpr const char* kClosed =
    "rank 0: third collective raised: RuntimeError('[/pytorch/third_party/gloo/gloo/transport/tcp/"
    "pair.cc:547] Connection closed by peer [127.0.0.1]:13480')";
// strata-h200-gloo4-size-mismatch/input/rank1.log line 2 and rank0.log lines 1-2.
constexpr const char* kReset =
    "rank 1: third collective raised: RuntimeError('[/pytorch/third_party/gloo/gloo/transport/tcp/"
    "pair.cc:538] Read error [127.0.0.1]:10961: Connection reset by peer')";
constexpr const char* kEnforce =
    "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
    "  what():  [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] "
    "op.preamble.length <= op.nbytes. 1024 vs 512. Received data size doesn't match expected size. "
    "Is there a distributed collective mismatch in your code?\n";

TEST(GlooLog, RecvAndSendTimeoutsGiveTheTimeoutAndTheOperation) {
  const auto recv = ScanGlooLog(kRecvTimeout, "rank0.log");
  ASSERT_EQ(recv.size(), 1u);
  EXPECT_EQ(recv[0].kind, GlooSignalKind::kTimeout);
  EXPECT_EQ(recv[0].timeout_ms, 8000);  // "waiting 8000ms"
  EXPECT_EQ(recv[0].operation, "recv");
  EXPECT_EQ(recv[0].detail, "Timed out waiting 8000ms for recv operation to complete");
  EXPECT_EQ(recv[0].line, 1);
  EXPECT_EQ(recv[0].global_rank, std::nullopt);  // "rank 0:" is the script's, not torchrun's prefix
  const auto send = ScanGlooLog(kSendTimeout, "rank3.log");
  ASSERT_EQ(send.size(), 1u);
  EXPECT_EQ(send[0].operation, "send");
}

TEST(GlooLog, TorchrunsRankPrefixNamesTheRank) {
  // The same message as torchrun prints it, behind "[rank3]: ".
  const auto s = ScanGlooLog(
      "[rank3]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
      "Timed out waiting 1800000ms for recv operation to complete\n",
      "log");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].global_rank, 3);
  EXPECT_EQ(s[0].timeout_ms, 1800000);  // 30 min, torch's default
}

TEST(GlooLog, ClosedAndResetConnectionsAreAPeerThatLeft) {
  const auto closed = ScanGlooLog(kClosed, "rank0.log");
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].kind, GlooSignalKind::kPeerLeft);
  EXPECT_EQ(closed[0].peer, "127.0.0.1:13480");
  EXPECT_EQ(closed[0].detail, "Connection closed by peer [127.0.0.1]:13480");
  const auto reset = ScanGlooLog(kReset, "rank1.log");
  ASSERT_EQ(reset.size(), 1u);
  EXPECT_EQ(reset[0].kind, GlooSignalKind::kPeerLeft);
  EXPECT_EQ(reset[0].peer, "127.0.0.1:10961");
  EXPECT_EQ(reset[0].detail, "Read error [127.0.0.1]:10961: Connection reset by peer");
}

TEST(GlooLog, EnforceOnReceivedSizeIsASizeMismatch) {
  const auto s = ScanGlooLog(kEnforce, "rank0.log");
  ASSERT_EQ(s.size(), 1u);  // the "terminate called" line names no failure of its own
  EXPECT_EQ(s[0].kind, GlooSignalKind::kSizeMismatch);
  EXPECT_EQ(s[0].line, 2);
  EXPECT_EQ(s[0].detail.rfind("op.preamble.length <= op.nbytes. 1024 vs 512.", 0), 0u)
      << s[0].detail;
}

TEST(GlooLog, OtherLinesAndNcclsOwnWordingAreNotGloos) {
  // NCCL's socket message (tests/golden/hang-real/nccl-1612-*), and the harness's own lines.
  EXPECT_TRUE(
      ScanGlooLog(
          "[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer "
          "10.10.1.3<36138>\n"
          "rank 3: exiting before the third collective\n"
          "rank 1: stuck before the second all_reduce\n",
          "log")
          .empty());
}

TEST(GlooLog, TruncatedOrMalformedLinesAreSkippedOrKeptWithoutTheMissingPart) {
  // Cut before the operation, a number that is not one, a negative wait: not Gloo's sentence.
  EXPECT_TRUE(
      ScanGlooLog(
          "RuntimeError('[gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 8000ms for re",
          "cut.log")
          .empty());
  EXPECT_TRUE(
      ScanGlooLog("Timed out waiting ms for recv operation to complete", "bad.log").empty());
  EXPECT_TRUE(
      ScanGlooLog("Timed out waiting -5ms for recv operation to complete", "bad.log").empty());
  // Cut inside the address: the peer left, the address is unknown.
  const auto cut =
      ScanGlooLog("[gloo/transport/tcp/pair.cc:547] Connection closed by peer [127.0.0", "cut.log");
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].kind, GlooSignalKind::kPeerLeft);
  EXPECT_EQ(cut[0].peer, "");
  EXPECT_TRUE(ScanGlooLog("", "empty.log").empty());
}

}  // namespace
}  // namespace strata::hang

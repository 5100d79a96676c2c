// What the twenty-ninth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-07 (fifth)"`) showed strata reading wrong at its first run. Each test quotes the public
// thread's lines (the case named beside the test) and states what a reader derives from them by
// hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::first_run_twentyninth_batch_test {
namespace {

using hang::FailureKind;
using hang::Verdict;
using hang::inputs::AnalyzeLog;

// NVIDIA/nccl#1618 (nccl-pr-1618-socketpollconnect-no-pollout-ranks-604-607): two ranks' log
// files grepped for NCCL's warning. By hand: socketPollConnect polls a non-blocking connect for
// POLLOUT; "returned 1, no POLLOUT events" is an event without it (POLLERR or POLLHUP): the
// connect failed, and NCCL returns ncclSystemError without the address (the PR: a hang in NCCL's
// bootstrap, the destination dropping SYNs). NCCL connects sockets only while a communicator is
// set up: a start-up fault, and no peer or culprit is printed (ranks 604 and 607 are the ones
// whose connects failed). The first run read nothing ("no verdict", exit 3).
const std::string kNoPollout =
    "rank_604.s12gn3064.4031852.log:[0604/1024][2025-02-16 22:31:34,422] [misc/socket.cc:586] "
    "[s12gn3064:pid=3942408] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events\n"
    "rank_607.s12gn3064.4031852.log:[0607/1024][2025-02-16 22:31:34,418] [misc/socket.cc:586] "
    "[s12gn3064:pid=3942411] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events\n";

TEST(FirstRunTwentyninthBatch, SocketPollConnectWithoutPolloutIsAStartupFault) {
  const auto lines = hang::ScanFailures(kNoPollout, "log.txt");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].kind, FailureKind::kBootstrap);
  EXPECT_EQ(lines[1].kind, FailureKind::kBootstrap);
  const Verdict v = AnalyzeLog(kNoPollout);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
  EXPECT_TRUE(v.finding.peer.empty()) << v.finding.summary;
  // A connect that names its address and a route error stays the network fault it was
  // (sglang-3820's line alone): only the unnamed poll failure is read here.
  const std::string route =
      "node5:240:240 [6] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to "
      "10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)\n";
  EXPECT_EQ(AnalyzeLog(route).finding.kind, "network");
}

// PKU-YuanGroup/UniWorld#46 (uniworld-46-progress-glued-socket-errors-rank6-watchdog-cut): the
// progress bar stops at step 1, NCCL's socket return chains, "comm ... rank 6 nranks 8 ... - Abort
// COMPLETE", then rank 6's watchdog: "Some NCCL operations have failed or timed out", "we are
// taking the entire process down" and "Process group watchdog thread terminated with exception:
// [Rank 6] Watchdog caught co" (cut). By hand: the communicator was aborted by the watchdog after
// a collective failed or timed out, training had not ended (1 of 500000 steps): not a hang while
// shutting down. The first run said "hang_at_exit: communicator teardown after the work finished".
const std::string kAbort =
    "n124-137-109:312249:326968 [2] NCCL INFO comm 0x12464df00 rank 6 nranks 8 cudaDev 2 busId "
    "b000 - Abort COMPLETE\n";
const std::string kWatchdog =
    "[rank6]:[E624 04:14:29.224103812 ProcessGroupNCCL.cpp:684] [Rank 6] Some NCCL operations "
    "have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU "
    "operations might run on corrupted/incomplete data.\n"
    "[rank6]:[E624 04:14:29.224139849 ProcessGroupNCCL.cpp:698] [Rank 6] To avoid data "
    "inconsistency, we are taking the entire process down.\n"
    "[rank6]:[E624 04:14:29.225547137 ProcessGroupNCCL.cpp:1896] [PG ID 1 PG GUID 1 Rank 6] "
    "Process group watchdog thread terminated with exception: [Rank 6] Watchdog caught co\n";

TEST(FirstRunTwentyninthBatch, AbortBesideTheWatchdogTakingTheProcessDownIsNotAHangAtExit) {
  const Verdict v = AnalyzeLog(kAbort + kWatchdog);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
  // The abort alone, with no watchdog line, stays a teardown that did not finish.
  EXPECT_EQ(AnalyzeLog(kAbort).finding.kind, "hang_at_exit");
}

// pytorch/ignite#3466 (ignite-3466-horovod-rank1-comm-init-unhandled-cuda-error, held back, missed
// at its first run): the last lines of a Horovod CI run, each tagged by Horovod's runner with the
// rank whose output it is, "[1]<stderr>:". By hand: rank 1 raises "RuntimeError: ncclCommInitRank
// failed: unhandled cuda error": a CUDA error on rank 1. The first run said cuda_error with no
// rank.
const std::string kHorovodRank1 =
    "[1]<stderr>:    mpi_lib.horovod_torch_wait_and_clear(handle)\n"
    "[1]<stderr>:RuntimeError: ncclCommInitRank failed: unhandled cuda error (run with "
    "NCCL_DEBUG=INFO for details)\n"
    "[1]<stderr>:\n";

TEST(FirstRunTwentyninthBatch, HorovodRunnerTagNamesTheRankOfAFailureLine) {
  const auto lines = hang::ScanFailures(kHorovodRank1, "log.txt");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].kind, FailureKind::kCudaError);
  EXPECT_EQ(lines[0].global_rank, std::optional<int64_t>(1));
  const Verdict v = AnalyzeLog(kHorovodRank1);
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{1}) << v.finding.summary;
  // Without the tag the line names no rank.
  const std::string untagged =
      "RuntimeError: ncclCommInitRank failed: unhandled cuda error (run with NCCL_DEBUG=INFO for "
      "details)\n";
  EXPECT_TRUE(AnalyzeLog(untagged).finding.ranks.empty());
}

}  // namespace
}  // namespace strata::first_run_twentyninth_batch_test

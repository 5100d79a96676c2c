// What the twenty-fourth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-06 (ninth)"`) showed strata reading wrong at its first run. Each test quotes the
// public thread's lines (the case named beside the test) and states what a reader derives from
// them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// horovod/horovod#210 (horovod-210-old-nccl-recv-reset-by-peer-bootstrap-two-ranks): two
// processes of one host print, each,
//   "ml-gpu-ser015:2123:2230 [3] include/socket.h:194 WARN Call to recv failed : Connection
//    reset by peer"
// and the error's way out: "INFO transport/net_ib.cu:555 -> 2", "INFO include/net.h:38 -> 2
// [Net]", "INFO bootstrap.cu:169 -> 2", "INFO init.cu:422 -> 2", "INFO init.cu:542 -> 2".
// By hand: NCCL prints "file:line -> code" only on an error's way out (its NCCLCHECK trace).
// Older NCCL 2.x releases were built from CUDA sources, so their bootstrap is bootstrap.cu, not
// bootstrap.cc (NVIDIA/nccl@1450d42675be325cd3b7a684d4b231eedceb22fb src/bootstrap.cu:15-16,
// "// Always use sockets for bootstrap" / "ncclNet_t* ncclBootstrapNet = &ncclNetSocket;": the
// bootstrap's reads go through the socket net, the net.h frames above). A read reset by the
// other side inside bootstrap.cu, climbing out through init.cu, is the communicator's set-up
// failing: a bootstrap fault, no peer address and no rank printed. The first run read the reset
// alone (a network failure mid-run).
TEST(FirstRunTwentyfourthBatch, OldNcclBootstrapCuTraceIsStartUp) {
  const std::string reset =
      "ml-gpu-ser015:2123:2230 [3] include/socket.h:194 WARN Call to recv failed : Connection "
      "reset by peer\n"
      "ml-gpu-ser015:2123:2230 [3] INFO transport/net_ib.cu:555 -> 2\n"
      "ml-gpu-ser015:2123:2230 [3] INFO transport/net_ib.cu:628 -> 2\n"
      "ml-gpu-ser015:2123:2230 [3] INFO include/net.h:30 -> 2 [Net]\n"
      "ml-gpu-ser015:2123:2230 [3] INFO include/net.h:38 -> 2 [Net]\n";
  const Verdict v = AnalyzeLog(reset +
                               "ml-gpu-ser015:2123:2230 [3] INFO bootstrap.cu:169 -> 2\n"
                               "ml-gpu-ser015:2123:2230 [3] INFO init.cu:422 -> 2\n"
                               "ml-gpu-ser015:2123:2230 [3] INFO init.cu:542 -> 2\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_TRUE(v.finding.peer.empty());
  // Hand-made: the same reset with no trace through bootstrap or init (a connection made and
  // then reset mid-run, NVIDIA/nccl#914's reading) stays a network failure.
  const Verdict mid_run = AnalyzeLog(reset);
  EXPECT_EQ(mid_run.finding.kind, "network") << mid_run.finding.summary;
}

}  // namespace
}  // namespace strata::hang

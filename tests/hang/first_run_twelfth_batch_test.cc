// What the twelfth batch of real cases (tests/golden/hang-real/, `first_run_batch: "2026-12-05
// (seventh)"`, the part not held back) showed strata reading wrong at its first run. Each test
// quotes the public thread's lines (the case named beside the test) or says how its lines were
// made, and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// pytorch/pytorch#17703 (the reporter's markdown kept: italics, **bold**) and NVIDIA/nccl#193
// (the same NCCL 2.3 line, plain): "include/socket.h 398 NCCL WARN Call to write failed :
// Connection reset by peer." NCCL 2.3's socket wrapper names the system call that failed
// ("Call to " #op " failed"), not the peer. By hand: a connection broken by the other side, a
// network failure, with no address in the line; the word after "Call to" is "write" or "recv".
// The first run named "**write**" (and "write" for nccl-193) as the peer.
TEST(FirstRunTwelfthBatch, OldNcclSocketCallNamesTheSystemCallNotThePeer) {
  const Verdict italic = AnalyzeLog(
      "_worker0-0d9gnb:15:91 [3] include/socket.h 398 NCCL WARN Call to **write** failed : "
      "Connection reset  by peer.\n"
      "worker0-0d9gnb:15:91 [3] transport.cu:153 NCCL WARN transport.cu:153 ->2 [Proxy thread "
      "error]_\n");
  EXPECT_EQ(italic.finding.kind, "network") << italic.finding.summary;
  EXPECT_EQ(italic.finding.peer, "") << italic.finding.summary;
  const Verdict plain = AnalyzeLog(
      "host:15:91 [3] include/socket.h 398 NCCL WARN Call to recv failed : Connection reset by "
      "peer.\n");
  EXPECT_EQ(plain.finding.kind, "network") << plain.finding.summary;
  EXPECT_EQ(plain.finding.peer, "") << plain.finding.summary;
  // Later NCCL names the address after "from" or "to" (NVIDIA/nccl#795's line): kept, without
  // its port.
  const Verdict addressed = AnalyzeLog(
      "a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv "
      "from 10.200.84.247<58355> failed : Broken pipe\n");
  EXPECT_EQ(addressed.finding.kind, "network") << addressed.finding.summary;
  EXPECT_EQ(addressed.finding.peer, "10.200.84.247") << addressed.finding.summary;
}

// pytorch/pytorch#76198: "RuntimeError: Rank 1 successfully reached monitoredBarrier, but
// received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty
// rank." ProcessGroupGloo::monitoredBarrier has every rank but 0 send to rank 0 and wait for its
// answer; only rank 0 enforces the timeout and names the ranks that did not arrive, and the
// message says "rank 0" whatever happened. By hand: rank 1 arrived; rank 0, the coordinator,
// did not answer (it reported a rank that never came, or failed itself); rank 0's log is where
// the culprit is named. No verdict (exit 3), but the place to look is said. The first run
// recognised nothing in the text.
TEST(FirstRunTwelfthBatch, MonitoredBarrierWithoutRankZerosAnswerPointsAtRankZerosLog) {
  const Verdict v = AnalyzeLog(
      "    dist._broadcast_coalesced(\n"
      "RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while "
      "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n"
      " Original exception:\n");
  EXPECT_EQ(v.finding.kind, "unknown") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_NE(v.finding.summary.find("rank 0's log"), std::string::npos) << v.finding.summary;
  EXPECT_NE(v.finding.summary.find("rank 1"), std::string::npos) << v.finding.summary;
  // With rank 0's own report beside it ("Ranks 2 failed to pass monitoredBarrier", made from
  // torch's wording), rank 0's report names the rank behind, as before.
  const Verdict both = AnalyzeLog(
      "RuntimeError: [Rank 0]: Ranks 2 failed to pass monitoredBarrier in 1800000 ms\n"
      "RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while "
      "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n");
  EXPECT_EQ(both.finding.kind, "lagging_rank") << both.finding.summary;
  EXPECT_EQ(both.finding.ranks, std::vector<int64_t>{2});
}

// An open class of the eleventh batch's misses, read by a general rule: torch_xla's XRT mesh
// service reports a failed rendezvous of the ordinals, "mesh_service.cc:247 : Failed to meet
// rendezvous 'init': Socket closed (14)" (pytorch/xla#1995, four ordinals, the program's
// xm.rendezvous('init') at start) and "mesh_service.cc:364 : Failed to meet rendezvous
// 'torch_xla.core.xla_model.save': Connection reset by peer (14)" (pytorch/xla#4831). A
// rendezvous is a barrier of every ordinal through the mesh master, like a store-based barrier:
// at start-up (nothing shows the run had begun) it is a start-up fault; torch_xla's own tags
// ('torch_xla.core.xla_model.save', the rendezvous inside xm.save) are taken mid-run, where a
// failed rendezvous is a collective that timed out, its missing ordinal not named. The first run
// read no torch_xla line (no verdict, exit 3).
TEST(FirstRunTwelfthBatch, TorchXlaMeshRendezvousFailureIsStartUpOrMidRunBarrier) {
  const Verdict init = AnalyzeLog(
      "Exception in device=TPU:3: tensorflow/compiler/xla/xla_client/mesh_service.cc:247 : Failed "
      "to meet rendezvous 'init': Socket closed (14)\n"
      "Exception in device=TPU:4: tensorflow/compiler/xla/xla_client/mesh_service.cc:247 : Failed "
      "to meet rendezvous 'init': Socket closed (14)\n");
  EXPECT_EQ(init.finding.kind, "bootstrap") << init.finding.summary;
  EXPECT_TRUE(init.finding.ranks.empty());
  EXPECT_EQ(init.finding.summary.find("MASTER_ADDR"), std::string::npos) << init.finding.summary;
  const Verdict save = AnalyzeLog(
      "2023-03-29 13:52:59 172.16.96.171 [1] RuntimeError: "
      "tensorflow/compiler/xla/xla_client/mesh_service.cc:364 : Failed to meet rendezvous "
      "'torch_xla.core.xla_model.save': Connection reset by peer (14)\n");
  EXPECT_EQ(save.finding.kind, "collective_timeout") << save.finding.summary;
  EXPECT_TRUE(save.finding.ranks.empty());
  EXPECT_NE(save.finding.summary.find("torch_xla.core.xla_model.save"), std::string::npos)
      << save.finding.summary;
  // A program's own tag after training progress (made: a torch_xla-style step line before the
  // same failure with the tag 'epoch_end') is mid-run as well.
  const Verdict later = AnalyzeLog(
      "| Training Device=xla:0/1 Epoch=1 Step=40 Loss=0.87 Rate=51.2 GlobalRate=50.8 "
      "Time=13:40:02\n"
      "Exception in device=TPU:1: tensorflow/compiler/xla/xla_client/mesh_service.cc:247 : Failed "
      "to meet rendezvous 'epoch_end': Socket closed (14)\n");
  EXPECT_NE(later.finding.kind, "bootstrap") << later.finding.summary;
  // The words in prose are no report of the mesh service.
  const Verdict prose = AnalyzeLog("we failed to meet rendezvous with the team\n");
  EXPECT_NE(prose.finding.kind, "bootstrap") << prose.finding.summary;
}

}  // namespace
}  // namespace strata::hang

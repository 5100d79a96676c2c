// What the nineteenth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-06 (fourth)"`) showed strata reading wrong at its first run. The ten cases looked at
// were all read right; the tests below come from held-back cases missed once the held-back part
// was run. Each quotes the public thread's lines (the case named beside the test) and states what a
// reader derives from them by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// pytorch/xla#2342 (pytorch-xla-2342-mesh-configuration-ordinal-13-peer): xla_dist's prefix
// "2020-07-12 03:12:53 10.164.0.3 [2]", then torch_xla's "mesh_service.cc:208] Waiting to
// connect to client mesh master (300 seconds) 10.164.0.6:8477", "computation_client.cc:197]
// Fetching mesh configuration for worker c_tpu_worker:2 from mesh service at 10.164.0.6" (the
// terminal wrapped ":8477" onto the next line) and "tf_logging.cc:11] Failed to retrieve mesh
// configuration: ordinal (13)". By hand: the mesh client on 10.164.0.3 asks the mesh master at
// 10.164.0.6:8477 for the mesh configuration while xmp sets up replication, and the request fails
// (gRPC status 13); the same message as mesh_service.cc's (pytorch/xla#2341), only logged through
// TensorFlow's logging helper. The replicas never formed: a start-up fault whose peer is the
// master the wait lines name. The first run recognised no line and gave no verdict.
TEST(FirstRunNineteenthBatch, MeshConfigurationFailureLoggedByTfLoggingNamesTheMaster) {
  const std::string log =
      "2020-07-12 03:12:53 10.164.0.3 [2] 2020-07-12 03:12:53.541657: I    3489 "
      "tensorflow/compiler/xla/xla_client/mesh_service.cc:208] Waiting to connect to client mesh "
      "master (300 seconds) 10.164.0.6:8477\n"
      "2020-07-12 03:12:53 10.164.0.3 [2] 2020-07-12 03:12:53.542314: I    3489 "
      "tensorflow/compiler/xla/xla_client/computation_client.cc:197] Fetching mesh configuration "
      "for worker c_tpu_worker:2 from mesh service at 10.164.0.6\n"
      ":8477\n"
      "2020-07-12 03:12:53 10.164.0.3 [2] 2020-07-12 03:12:53.542777: E    3489 "
      "tensorflow/compiler/xla/xla_client/tf_logging.cc:11] Failed to retrieve mesh "
      "configuration: ordinal (13)\n";
  const Verdict v = AnalyzeLog(log);
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.peer.substr(0, v.finding.peer.find(':')), "10.164.0.6");
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: the failure line alone, with no wait line before it, is still the start-up fault,
  // with no master named.
  const Verdict alone = AnalyzeLog(
      "2020-07-12 03:12:53.542777: E    3489 tensorflow/compiler/xla/xla_client/tf_logging.cc:11] "
      "Failed to retrieve mesh configuration: ordinal (13)\n");
  EXPECT_EQ(alone.finding.kind, "bootstrap") << alone.finding.summary;
  EXPECT_TRUE(alone.finding.peer.empty()) << alone.finding.peer;
}

// google/automl#563 (automl-563-horovod-stalled-rank0-broadcast-rank1-allreduce): "[1,0]<stderr>:
// [2020-07-04 19:23:57.817885: W horovod/common/stall_inspector.cc:105] One or more tensors were
// submitted ...", "Stalled ranks:", then "0: [HorovodBroadcast_box_net_box_0_bias_0, ...]" and
// "1: [DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_AddN_100_0, ...]". By
// hand: each line lists the tensors that rank never submitted while another rank did. Rank 0
// never submitted the broadcasts, so rank 1 did: rank 1 waits in the initial broadcast. Rank 1
// never submitted the gradient allreduces, so rank 0 did: rank 0 waits in the training step's
// allreduce. Two ranks in different collectives, each waiting for the other: a mismatch, neither
// rank behind the other. The first run named ranks 0-1 lagging.
TEST(FirstRunNineteenthBatch, StalledRanksMissingDifferentCollectivesAreAMismatch) {
  const std::string header =
      "[1,0]<stderr>:[2020-07-04 19:23:57.817885: W horovod/common/stall_inspector.cc:105] One "
      "or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks "
      "and are waiting for remainder of ranks for more than 60 seconds. This may indicate that "
      "different ranks are trying to submit different tensors or that only subset of ranks is "
      "submitting tensors, which will cause deadlock. \n"
      "[1,0]<stderr>:Stalled ranks:\n";
  const Verdict v = AnalyzeLog(
      header +
      "[1,0]<stderr>:0: [HorovodBroadcast_box_net_box_0_bias_0, "
      "HorovodBroadcast_box_net_box_0_bias_Momentum_0, HorovodBroadcast_box_net_box_0_bn_3_beta_0 "
      "...]\n"
      "[1,0]<stderr>:1: [DistributedMomentumOptimizer_Allreduce/"
      "HorovodAllreduce_gradients_AddN_100_0, "
      "DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_AddN_101_0 ...]\n");
  EXPECT_EQ(v.finding.kind, "collective_mismatch") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: both ranks missing the same allreduces are both behind the others (ranks 2 and
  // up submitted them): lagging ranks 0 and 1, as before.
  const Verdict behind = AnalyzeLog(header +
                                    "[1,0]<stderr>:0: [DistributedMomentumOptimizer_Allreduce/"
                                    "HorovodAllreduce_gradients_AddN_100_0 ...]\n"
                                    "[1,0]<stderr>:1: [DistributedMomentumOptimizer_Allreduce/"
                                    "HorovodAllreduce_gradients_AddN_100_0 ...]\n");
  EXPECT_EQ(behind.finding.kind, "lagging_rank") << behind.finding.summary;
  EXPECT_EQ(behind.finding.ranks, (std::vector<int64_t>{0, 1}));
}

// jax-ml/jax#22740 (jax-22740-xla-rendezvous-initialize-clique-stuck): host0's "2024-07-29
// 17:14:59.920189: E external/xla/xla/service/rendezvous.cc:38] This thread has been waiting for
// `initialize clique for rank 6; clique=devices=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15];
// stream=0; run_id=724296073` for 10 seconds and may be stuck. Expected 8 threads to join the
// rendezvous, but not all of them arrived on time." By hand: XLA sets up one NCCL clique
// (communicator) over the 16 devices of the two processes before the first collective, and each
// local device's thread waits in this rendezvous until all have arrived; the log ends with the
// set-up still waiting. The communicator never formed: a start-up fault, no device named behind
// it. The first run recognised no line and gave no verdict.
TEST(FirstRunNineteenthBatch, LogEndingOnXlaCliqueInitialisationWaitIsBootstrap) {
  const std::string wait =
      "2024-07-29 17:14:59.920189: E external/xla/xla/service/rendezvous.cc:38] This thread has "
      "been waiting for `initialize clique for rank 6; "
      "clique=devices=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]; stream=0; run_id=724296073` for "
      "10 seconds and may be stuck. Expected 8 threads to join the rendezvous, but not all of "
      "them arrived on time.\n";
  const Verdict v = AnalyzeLog(wait);
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: the program printing on after the warning got through the rendezvous: no
  // verdict from the wait.
  const Verdict after = AnalyzeLog(wait + "16\n8\n");
  EXPECT_NE(after.finding.kind, "bootstrap") << after.finding.summary;
}

}  // namespace
}  // namespace strata::hang

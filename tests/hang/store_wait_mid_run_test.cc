// A wait on the c10d store that times out. At start-up (init_process_group's rendezvous, the
// store-based barrier) it is a process that never arrived: a start-up fault. After training has
// run (step and loss lines printed, a checkpoint saved, or a traceback under a barrier or the
// training loop) the store is being used as a collective (vLLM's StatelessProcessGroup, TRL's
// weight sync, a store barrier), and its timeout is a member missing from a mid-run barrier.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// modelscope/ms-swift#4906 (ms-swift-4906-store-wait-timeout-vllm-broadcast-barrier), the frames
// of rank 0's traceback: it is inside vllm's StatelessProcessGroup.barrier, called from the
// trainer's weight push (update_named_param), when the store get times out after 300000 ms.
const std::string kBarrierTraceback =
    "[rank0]:   File \"/opt/swift/trainers/rlhf_trainer/vllm_client.py\", line 200, in "
    "update_named_param\n"
    "[rank0]:     self.pynccl_comm.group.barrier()\n"
    "[rank0]:   File \"/usr/lib/python3.11/site-packages/vllm/distributed/utils.py\", line 216, in "
    "barrier\n"
    "[rank0]:     self.broadcast_obj(None, src=i)\n"
    "[rank0]:   File \"/usr/lib/python3.11/site-packages/vllm/distributed/utils.py\", line 197, in "
    "broadcast_obj\n"
    "[rank0]:     recv_obj = pickle.loads(self.store.get(key))\n"
    "[rank0]: torch.distributed.DistStoreError: wait timeout after 300000ms, keys: "
    "/broadcast_from/0/75465\n";

TEST(StoreWaitMidRun, TimeoutUnderABarrierIsAMissingMemberNotStartUp) {
  const Verdict v = AnalyzeLog(kBarrierTraceback);
  // The wait is a collective over the store that timed out: no rank is named by the evidence
  // (the key's "0" is the source rank inside vLLM's own group, not a training rank).
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // "wait timeout after 300000ms": the store's own timeout.
  EXPECT_EQ(v.finding.timeout_ms, 300000);
  EXPECT_NE(v.finding.summary.find("mid-run"), std::string::npos) << v.finding.summary;
  EXPECT_NE(v.finding.summary.find("/broadcast_from/0/75465"), std::string::npos)
      << v.finding.summary;
}

TEST(StoreWaitMidRun, TrainingProgressBeforeTheTimeoutMakesItMidRun) {
  // No traceback: the same store error after loss lines of a Trainer and a checkpoint save.
  const Verdict v = AnalyzeLog(
      "{'loss': 0.2411, 'grad_norm': 0.306, 'learning_rate': 9.8e-06, 'epoch': 0.4}\n"
      "Saving model checkpoint to output/checkpoint-90\n"
      "torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /barrier/7\n");
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_EQ(v.finding.timeout_ms, 1800000);
}

TEST(StoreWaitMidRun, TimeoutInsideInitProcessGroupStaysAStartUpFault) {
  // pytorch/pytorch#111805's line, under init_process_group's rendezvous: set-up, even when a
  // loss line of an earlier run is above it in the same file.
  const Verdict v = AnalyzeLog(
      "{'loss': 0.2411, 'epoch': 0.4}\n"
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", line "
      "1141, in init_process_group\n"
      "    store, rank, world_size = next(rendezvous_iterator)\n"
      "  File \"/usr/lib/python3.10/site-packages/torch/distributed/rendezvous.py\", line 246, in "
      "_env_rendezvous_handler\n"
      "    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout)\n"
      "torch.distributed.DistStoreError: Timed out after 6 seconds waiting for workers. 1/2 "
      "workers joined.\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  // A bare store error with nothing around it is read as before: start-up.
  const Verdict bare = AnalyzeLog(
      "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /broadcast_from/0/1\n");
  EXPECT_EQ(bare.finding.kind, "bootstrap") << bare.finding.summary;
}

// When the barrier itself names who did not arrive, that rank is the culprit: torch's
// monitored_barrier, "RuntimeError: [Rank 0]: Ranks 4, 5, 6, 7 failed to pass monitoredBarrier in
// 2000000 ms" (NVIDIA/nccl#849's title). Rank 0 reports; ranks 4 to 7 never reached it.
TEST(StoreWaitMidRun, MonitoredBarrierNamesTheRanksThatNeverArrived) {
  const Verdict v = AnalyzeLog(
      "RuntimeError: [Rank 0]: Ranks 4, 5, 6, 7 failed to pass monitoredBarrier in 2000000 ms\n");
  EXPECT_EQ(v.finding.kind, "lagging_rank") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(v.finding.timeout_ms, 2000000);
  // One rank, the form without wait_all_ranks.
  const Verdict one =
      AnalyzeLog("RuntimeError: Rank 1 failed to pass monitoredBarrier in 1800000 ms\n");
  EXPECT_EQ(one.finding.ranks, std::vector<int64_t>{1});
}

TEST(StoreWaitMidRun, ScannerMarksTheSignal) {
  const auto signals = ScanFailures(kBarrierTraceback, "log.txt");
  ASSERT_FALSE(signals.empty());
  const FailureSignal& s = signals.back();
  EXPECT_EQ(s.kind, FailureKind::kStoreCollectiveTimeout);
  EXPECT_EQ(s.timeout_ms, 300000);
  EXPECT_EQ(s.global_rank, 0);
}

}  // namespace
}  // namespace strata::hang

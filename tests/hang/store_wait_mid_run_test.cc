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

// A config or argparse dump is no training progress: "warmup_step=100" is a setting, not a step
// counter. The store wait after it is init's rendezvous key (/default_pg/0//cuda//0): start-up.
TEST(StoreWaitMidRun, AStepSettingInAnArgumentDumpIsNoProgress) {
  const Verdict v = AnalyzeLog(
      "Namespace(lr=0.0001, warmup_step=100, save_every=1000)\n"
      "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: "
      "/default_pg/0//cuda//0\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.summary.find("mid-run"), std::string::npos) << v.finding.summary;
  // A step counter as a training loop prints it still is progress.
  const Verdict counted = AnalyzeLog(
      "step 120/1000 | lr 0.0001\n"
      "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /barrier/7\n");
  EXPECT_EQ(counted.finding.kind, "collective_timeout") << counted.finding.summary;
}

// The frames of a traceback that has ended (its exception line printed) say nothing about a store
// error printed later without a traceback of its own: the all_reduce frame below belongs to the
// NCCL abort, and "waiting for clients" is a store being created (fix (c) as well).
TEST(StoreWaitMidRun, FramesOfAnEndedTracebackAreNotInherited) {
  const std::string traceback =
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", line "
      "2050, in all_reduce\n"
      "    work = group.allreduce([tensor], opts)\n"
      "RuntimeError: NCCL communicator was aborted\n";
  for (const std::string& store_line :
       {std::string("torch.distributed.DistStoreError: wait timeout after 300000ms, keys: "
                    "/default_pg/0//cuda//0\n"),
        std::string("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for "
                    "clients. 3/4 clients joined.\n")}) {
    const auto signals = ScanFailures(traceback + store_line, "log.txt");
    ASSERT_FALSE(signals.empty());
    const FailureSignal& s = signals.back();
    EXPECT_TRUE(s.store_wait) << s.text;
    EXPECT_EQ(s.kind, FailureKind::kBootstrap) << s.text;
    const Verdict v = AnalyzeLog(traceback + store_line);
    EXPECT_EQ(v.finding.summary.find("mid-run"), std::string::npos) << v.finding.summary;
  }
  // The exception line that ends the traceback still reads its frames.
  const auto own = ScanFailures(
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", line "
      "4150, in barrier\n"
      "    work = group.barrier(opts=opts)\n"
      "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /barrier/7\n",
      "log.txt");
  ASSERT_FALSE(own.empty());
  EXPECT_EQ(own.back().kind, FailureKind::kStoreCollectiveTimeout);
}

// "waiting for clients" / "waiting for workers" is the TCPStore server waiting for ranks to join
// while the store is created: start-up by definition, even after progress lines of an earlier
// attempt (torchrun restarting the workers).
TEST(StoreWaitMidRun, WaitingForClientsIsAStoreCreatedAtStartUp) {
  const Verdict v = AnalyzeLog(
      "{'loss': 0.2411, 'grad_norm': 0.306, 'learning_rate': 9.8e-06, 'epoch': 0.4}\n"
      "{'loss': 0.2307, 'grad_norm': 0.297, 'learning_rate': 9.6e-06, 'epoch': 0.5}\n"
      "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 "
      "clients joined.\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.summary.find("mid-run"), std::string::npos) << v.finding.summary;
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
  // ProcessGroupGloo::monitoredBarrier numbers the ranks within the barrier's group (1 to the
  // group's size - 1): they are global ranks only when the barrier is on the default group, and
  // the finding says so instead of asserting global ranks.
  EXPECT_NE(v.finding.summary.find("ranks 4-7 of the barrier's group (global ranks when the "
                                   "barrier is on the default group)"),
            std::string::npos)
      << v.finding.summary;
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

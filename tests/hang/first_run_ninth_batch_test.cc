// What the ninth batch of real cases (tests/golden/hang-real/, `first_run_batch: "2026-12-05
// (fourth)"`, the part not held back) showed strata reading wrong at its first run. Each test
// quotes the public thread's lines (the case named beside the test) or says how its lines were
// made, and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// NVIDIA/NVSentinel#155 (nvsentinel-155-dmesg-gpu-fallen-off-the-bus-no-xid): a newer driver
// wraps "GPU ... has fallen off the bus" over three kernel-log lines; the last, "NVRM: fallen off
// the bus and is not responding to commands.", alone names the fault: a GPU lost, a device
// failure. No rank appears in a kernel log. The first run said no verdict.
TEST(FirstRunNinthBatch, GpuFallenOffTheBusWrappedOverLinesIsADeviceFailure) {
  const Verdict v = AnalyzeLog(
      "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
      "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
      "               NVRM: fallen off the bus and is not responding to commands.\n"
      "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n");
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
}

// horovod/horovod#489 (horovod-489-libcuda-abort-then-caught-signal-11-two-pids): Open MPI's
// handler reports "[nmyjs-202-75:40360] Signal: Aborted (6)" and UCX's "[nmyjs-202-75:40360:0]
// Caught signal 11 (Segmentation fault: ...)": the processes ended by their own fatal signals, a
// crash; the bracket holds host and pid, no rank. The first run said no verdict.
TEST(FirstRunNinthBatch, OpenMpiSignalReportIsACrash) {
  const Verdict v = AnalyzeLog(
      "[nmyjs-202-75:40360] *** Process received signal ***\n"
      "[nmyjs-202-75:40360] Signal: Aborted (6)\n"
      "[nmyjs-202-75:40360] Signal code:  (-6)\n"
      "[nmyjs-202-75:40360:0] Caught signal 11 (Segmentation fault: address not mapped to object "
      "at address 0x565391a57a40)\n");
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made, mpirun's output tag on the same report (another host, pid and signal): "[1,5]" is
  // the rank whose stderr it is, so rank 5 crashed.
  const Verdict tagged = AnalyzeLog(
      "[1,5]<stderr>:[node2:4242] *** Process received signal ***\n"
      "[1,5]<stderr>:[node2:4242] Signal: Bus error (7)\n");
  EXPECT_EQ(tagged.finding.kind, "crash") << tagged.finding.summary;
  EXPECT_EQ(tagged.finding.ranks, std::vector<int64_t>{5});
  // "Signal code:" alone, or a "Signal:" without its number, reports no signal; a signal sent
  // from outside (SIGTERM 15, SIGINT 2) is no crash of the process's own.
  EXPECT_EQ(AnalyzeLog("[h:1] Signal code:  (-6)\n[h:1] Signal: see above\n").finding.kind,
            "unknown");
  EXPECT_EQ(AnalyzeLog("[h:1] Signal: Terminated (15)\n").finding.kind, "unknown");
  EXPECT_EQ(AnalyzeLog("[server] Caught signal 2 (Interrupt)\n[x] Caught signal 11, exiting\n")
                .finding.kind,
            "unknown");
}

// ray-project/ray#18586 (ray-18586-actor-manager-dead-creation-task-exception): "received
// notification on actor, state: DEAD, ..., has creation_task_exception=1": the actor's
// constructor raised, the actor never started: its process failed on its own error, a crash. The
// first run said no verdict.
TEST(FirstRunNinthBatch, RayActorDeadOfItsConstructorIsACrash) {
  const Verdict v = AnalyzeLog(
      "[2021-09-14 10:11:20,566 I 2122527 2122927] actor_manager.cc:139: received notification on "
      "actor, state: DEAD, actor_id: b725bbfcae78f2913c44e16a01000000, ip address: xx.xx.xx.xx, "
      "port: 35795, num_restarts: 0, has creation_task_exception=1\n");
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  // A dead actor whose creation succeeded is not this rule's.
  EXPECT_EQ(AnalyzeLog("actor_manager.cc:139: received notification on actor, state: DEAD, "
                       "num_restarts: 0, has creation_task_exception=0\n")
                .finding.kind,
            "unknown");
}

// EleutherAI/architecture-objective#26 (architecture-objective-26-jax-coordination-heartbeat-
// task37): the coordination service sets "/job:jax_worker/replica:0/task:37" to ERROR, "heartbeat
// timeout. This indicates that the remote task has failed, got preempted, or crashed". A JAX task
// is a process; its index is the process index: process 37 is gone. The first run said no verdict.
TEST(FirstRunNinthBatch, CoordinationServiceHeartbeatTimeoutNamesTheTaskGone) {
  const Verdict v = AnalyzeLog(
      "I1115 16:00:39.451247 140641718562816 trainer.py:501] Training: step 198\n"
      "2022-11-15 16:03:15.140058: E external/org_tensorflow/tensorflow/core/distributed_runtime/"
      "coordination/coordination_service.cc:954] /job:jax_worker/replica:0/task:37 has been set to "
      "ERROR in coordination service: UNAVAILABLE: Task /job:jax_worker/replica:0/task:37 "
      "heartbeat timeout. This indicates that the remote task has failed, got preempted, or "
      "crashed unexpectedly. [type.googleapis.com/tensorflow.CoordinationServiceError='']\n");
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{37});
}

std::string Member(int rank, int world) {
  return "initializing ddp: GLOBAL_RANK: " + std::to_string(rank) +
         ", MEMBER: " + std::to_string(rank + 1) + "/" + std::to_string(world) + "\n";
}

// Lightning-AI/pytorch-lightning#4389 and #10098 (lightning-4389-..., lightning-10098-...): each
// of ranks 0..3 announced twice with MEMBER n/8, ranks 4..7 never: two processes took each place
// (both nodes believed they were node 0), the group cannot form: a start-up fault, no rank at
// fault. The first run said no verdict.
TEST(FirstRunNinthBatch, AGlobalRankAnnouncedTwiceWithRanksMissingIsAStartUpFault) {
  std::string log;
  for (int rank : {1, 1, 2, 2, 3, 3, 0, 0}) log += Member(rank, 8);
  const Verdict v = AnalyzeLog(log);
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: every rank of a world of 4 announced, then all again (a restart): no fault shown.
  std::string restart;
  for (int round = 0; round < 2; ++round) {
    for (int rank = 0; rank < 4; ++rank) restart += Member(rank, 4);
  }
  EXPECT_EQ(AnalyzeLog(restart).finding.kind, "unknown");
  // Each rank once, some still to come: start-up going on.
  EXPECT_EQ(AnalyzeLog(Member(0, 4) + Member(1, 4)).finding.kind, "unknown");
}

}  // namespace
}  // namespace strata::hang

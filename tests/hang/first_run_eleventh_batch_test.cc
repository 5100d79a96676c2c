// What the eleventh batch of real cases (tests/golden/hang-real/, `first_run_batch: "2026-12-05
// (sixth)"`, the part not held back) showed strata reading wrong at its first run: Ascend NPUs
// (HCCL), AMD GPUs (ROCm) and Kubernetes evictions, formats no earlier batch had. Each test
// quotes the public thread's lines (the case named beside the test) or says how its lines were
// made, and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// deepspeedai/DeepSpeed#6725 and ROCm/legacy-rocm-build#4021: the ROCm runtime reports a device
// fault as "Memory access fault by GPU node-4 (Agent handle: ...) on address (nil). Reason:
// Unknown." (CUDA's illegal memory access) or "HW Exception by GPU node-9 (Agent handle: ...)
// reason :GPU Hang" before "Aborted (core dumped)". By hand: the GPU faulted, the first cause; the
// runtime's node number is no rank, so none is named. The first run said no verdict on both.
TEST(FirstRunEleventhBatch, RocmDeviceFaultsAreGpuErrors) {
  const Verdict access = AnalyzeLog(
      "Memory access fault by GPU node-4 (Agent handle: 0x56387095fa40) on address (nil). Reason: "
      "Unknown.\n");
  EXPECT_EQ(access.finding.kind, "cuda_error") << access.finding.summary;
  EXPECT_TRUE(access.finding.ranks.empty());
  const Verdict hung = AnalyzeLog(
      "HW Exception by GPU node-9 (Agent handle: 0x631351bb5a20) reason :GPU Hang\n"
      "HW Exception by GPU node-9 (Agent handle: 0x64ff272d8ab0) reason :GPU Hang\n"
      "Aborted (core dumped)\n");
  EXPECT_EQ(hung.finding.kind, "cuda_error") << hung.finding.summary;
  EXPECT_TRUE(hung.finding.ranks.empty());
  // The words alone, in a sentence about them, are not the runtime's report.
  const Verdict prose = AnalyzeLog("we never saw a memory access fault on this GPU\n");
  EXPECT_NE(prose.finding.kind, "cuda_error") << prose.finding.summary;
}

// kubeflow/trainer#301 ("Message:        The node was low on resource: memory." in kubectl
// describe pod) and kubeflow/kubeflow#1261 (the event "The node was low on resource: memory."
// before "Killing container with id docker://notebook:Need to kill Pod"). By hand: the kubelet
// evicted the pod and killed its process from outside, as Slurm's out-of-memory kill does: a dead
// rank, no rank number (a pod's name is none). "Reason: OOMKilled" is a container killed over its
// own limit, the same. The first run said no verdict on both.
TEST(FirstRunEleventhBatch, KubernetesEvictionKillsTheProcess) {
  const Verdict describe = AnalyzeLog(
      "Status:         Failed\n"
      "Reason:         Evicted\n"
      "Message:        The node was low on resource: memory.\n");
  EXPECT_EQ(describe.finding.kind, "dead_rank") << describe.finding.summary;
  EXPECT_TRUE(describe.finding.ranks.empty());
  EXPECT_NE(describe.finding.summary.find("Kubernetes"), std::string::npos)
      << describe.finding.summary;
  const Verdict event = AnalyzeLog(
      "`The node was low on resource: memory.`\n"
      "`Killing container with id docker://notebook:Need to kill Pod`\n");
  EXPECT_EQ(event.finding.kind, "dead_rank") << event.finding.summary;
  // kubectl describe's "Last State: Terminated / Reason: OOMKilled" (made from kubectl's field
  // names): killed over the container's limit.
  const Verdict oom = AnalyzeLog(
      "    Last State:     Terminated\n"
      "      Reason:       OOMKilled\n"
      "      Exit Code:    137\n");
  EXPECT_EQ(oom.finding.kind, "dead_rank") << oom.finding.summary;
  // "OOMKilled" in prose, not kubectl's Reason field, says nothing about this job.
  const Verdict prose = AnalyzeLog("the docs explain what OOMKilled means for a pod\n");
  EXPECT_NE(prose.finding.kind, "dead_rank") << prose.finding.summary;
}

// vllm-project/vllm-ascend#486: rank 1's HcclAllreduce fails with EI0006 "Getting socket times
// out. Reason: Remote Rank did not send the data in time"; hiyouga/LlamaFactory#975: EI0002 "The
// wait execution of the Notify register times out" with the task's tag "AllReduce_...". By hand:
// the printing rank waited in an all-reduce for a peer that never sent, HCCL's counterpart of the
// NCCL watchdog's timeout; the peer has no rank (4294967295 is -1 unsigned). A collective timeout
// in ALLREDUCE, no culprit. The first run said no verdict on both.
TEST(FirstRunEleventhBatch, HcclTimeoutsAreCollectiveTimeouts) {
  const Verdict socket = AnalyzeLog(
      "[rank1]:   File \"/data/miniconda3/envs/env-3.10.14/lib/python3.10/site-packages/torch/"
      "distributed/distributed_c10d.py\", line 2501, in all_reduce\n"
      "[rank1]:     work = group.allreduce([tensor], opts)\n"
      "[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS "
      "function error: HcclAllreduce, error code is 6\n"
      "[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. "
      "Reason: Remote Rank did not send the data in time. Please check the reason for the rank "
      "being stuck\n");
  EXPECT_EQ(socket.finding.kind, "collective_timeout") << socket.finding.summary;
  EXPECT_TRUE(socket.finding.ranks.empty());
  EXPECT_EQ(socket.finding.op, "all_reduce");  // from the c10d frame: the line has no tag
  const Verdict notify = AnalyzeLog(
      "EI0002: The wait execution of the Notify register times out. Reason: The Notify register "
      "has not received the Notify record from remote rank [4294967295].base information: "
      "[streamID:[1], taskID[39], taskType[Notify Wait], "
      "tag[AllReduce_192.168.0.116%enp69s0_60000_0_1694500287022627].]\n");
  EXPECT_EQ(notify.finding.kind, "collective_timeout") << notify.finding.summary;
  EXPECT_EQ(notify.finding.op, "ALLREDUCE");
  EXPECT_TRUE(notify.finding.ranks.empty());
}

// hiyouga/LlamaFactory#3839: the first barrier fails with "HCCL error in: torch_npu/csrc/
// distributed/ProcessGroupHCCL.cpp:64" and EJ0001 "Failed to initialize the HCCP process. Reason:
// Maybe the last training process is running." By hand: the NPU's communication process never
// started, so the group never formed: a start-up fault, no rank at fault. The first run said no
// verdict.
TEST(FirstRunEleventhBatch, HccpThatCannotStartIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64\n"
      "[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api "
      "failed.\n"
      "EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe "
      "the last training process is running.\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
}

// pytorch/pytorch#162199 (held back; missed at its run, read since): "Exception ignored in atexit
// callback: <function shutdown_compile_workers ...>" and, under it, subprocess.py's "raise
// TimeoutExpired(self.args, timeout)" after "self.process.wait(300)". By hand: the script's work
// was done; exiting, the interpreter waited in an exit handler for inductor's compile workers
// until the 300 s wait gave up: a hang at exit, no rank. The first run said no verdict.
TEST(FirstRunEleventhBatch, AtexitCallbackThatTimesOutIsAHangAtExit) {
  const std::string header =
      "Exception ignored in atexit callback: <function shutdown_compile_workers at "
      "0x7f888065ca40>\n"
      "Traceback (most recent call last):\n"
      "  File \"/data/users/hirsheybar/new2/pytorch/torch/_inductor/compile_worker/"
      "subproc_pool.py\", line 269, in shutdown\n"
      "    self.process.wait(300)\n";
  const Verdict v = AnalyzeLog(header +
                               "  File \"/home/hirsheybar/.conda/envs/pytorch/lib/python3.12/"
                               "subprocess.py\", line 2038, in _wait\n"
                               "    raise TimeoutExpired(self.args, timeout)\n");
  EXPECT_EQ(v.finding.kind, "hang_at_exit") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Another exception in an exit handler (made: the same header, a ValueError) is no hang.
  const Verdict other = AnalyzeLog(header + "ValueError: I/O operation on closed file.\n");
  EXPECT_NE(other.finding.kind, "hang_at_exit") << other.finding.summary;
  // A timeout raised with no exit handler above it is not read as one.
  const Verdict alone = AnalyzeLog("    raise TimeoutExpired(self.args, timeout)\n");
  EXPECT_NE(alone.finding.kind, "hang_at_exit") << alone.finding.summary;
}

}  // namespace
}  // namespace strata::hang

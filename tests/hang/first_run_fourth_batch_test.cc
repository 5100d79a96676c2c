// What the fourth batch of real cases collected on 2026-12-04 showed strata reading wrong at its
// first run (tests/golden/hang-real/, `first_run_batch: "2026-12-04 (fourth)"`, the part not
// held back). Each test quotes the public thread's lines (the case under tests/golden/hang-real/
// named beside the test) and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// facebookresearch/av_hubert#19 (av-hubert-19-error-handler-json-rendezvous-timeout-wrapped) and
// kubeflow/trainer#1638 (kubeflow-trainer-1638-error-handler-json-rendezvous-closed): torchrun's
// error handler writes its record as JSON, "message": "RendezvousTimeoutError: " or
// "RendezvousClosedError: ". Both come from the elastic agent's rendezvous, before any worker
// runs: the group never formed, a start-up fault naming no rank. Both were read as no verdict
// (exit 3).
TEST(FirstRunFourthBatch, ElasticRendezvousErrorsInTheErrorHandlersJsonAreStartUpFaults) {
  for (const std::string error : {"RendezvousTimeoutError", "RendezvousClosedError"}) {
    const Verdict v = AnalyzeLog(
        "ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{\n"
        "  \"message\": {\n"
        "    \"message\": \"" +
        error +
        ": \",\n"
        "    \"extraInfo\": {\n");
    EXPECT_EQ(v.finding.kind, "bootstrap") << error;
    EXPECT_TRUE(v.finding.ranks.empty()) << error;
    EXPECT_TRUE(IsProblem(v.finding)) << error;
  }
}

// pytorch/pytorch#91943 (pytorch-91943-elastic-scale-down-rendezvous-closed): after a node left,
// the agent's next_rendezvous raises "torch.distributed.elastic.rendezvous.api.
// RendezvousClosedError" (a plain traceback, no JSON): the group could not be re-formed. Read as
// no verdict (exit 3).
TEST(FirstRunFourthBatch, RendezvousClosedTracebackIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "  File \"/usr/local/lib/python3.6/dist-packages/torch/distributed/elastic/rendezvous/"
      "dynamic_rendezvous.py\", line 634, in run\n"
      "    raise RendezvousClosedError()\n"
      "torch.distributed.elastic.rendezvous.api.RendezvousClosedError\n");
  EXPECT_EQ(v.finding.kind, "bootstrap");
  EXPECT_NE(v.finding.summary.find("rendezvous was closed"), std::string::npos)
      << v.finding.summary;
}

// pytorch/pytorch#69197 (pytorch-69197-create-tcp-store-connect-timed-out): the c10d rendezvous
// backend's TCPStore client of older torch raises "RuntimeError: connect() timed out. Original
// timeout was 60000 ms.": the store could not be reached at start-up. Read as no verdict
// (exit 3).
TEST(FirstRunFourthBatch, OldTcpStoreConnectTimeoutIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "  File \"/home/ubuntu/miniconda3/envs/py39/lib/python3.9/site-packages/torch/distributed/"
      "elastic/rendezvous/c10d_rendezvous_backend.py\", line 155, in _create_tcp_store\n"
      "    store = TCPStore(\n"
      "RuntimeError: connect() timed out. Original timeout was 60000 ms.\n");
  EXPECT_EQ(v.finding.kind, "bootstrap");
  EXPECT_TRUE(IsProblem(v.finding));
}

// pytorch/pytorch#107021 (pytorch-107021-client-socket-60s-rendezvous-connection-error): "[c10d]
// The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234". The host
// it could not reach is 192.0.0.1 (the text before the port's colon); it was read as a bootstrap
// fault naming no peer. The tuple form "(036c56dce41b, 41331)" names host 036c56dce41b.
TEST(FirstRunFourthBatch, ClientSocketTimeoutNamesTheHostItTriedToReach) {
  const auto signals = ScanFailures(
      "[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to "
      "connect to 192.0.0.1:1234\n"
      "torch.distributed.DistNetworkError: The client socket has timed out after 300000ms while "
      "trying to connect to (036c56dce41b, 41331).\n",
      "log.txt");
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[0].kind, FailureKind::kBootstrap);
  EXPECT_EQ(signals[0].peer, "192.0.0.1");
  EXPECT_EQ(signals[1].peer, "036c56dce41b");
}

// NVIDIA/semantic-segmentation#33 (semantic-segmentation-33-cuda-runtime-error-39-ecc): torch's
// THC-era format "RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at
// .../THCCachingHostAllocator.cpp:265" is a CUDA error (39 is cudaErrorECCUncorrectable in that
// CUDA's numbering). It was read as no verdict (exit 3). The same format's "cuda runtime error
// (2) : out of memory" is an OOM, like "CUDA out of memory".
TEST(FirstRunFourthBatch, ThcEraCudaRuntimeErrorIsACudaErrorAndItsOutOfMemoryAnOom) {
  const Verdict ecc = AnalyzeLog(
      "RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at "
      "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265\n"
      "terminate called without an active exception\n");
  EXPECT_EQ(ecc.finding.kind, "cuda_error");
  EXPECT_NE(ecc.finding.summary.find("uncorrectable ECC error"), std::string::npos)
      << ecc.finding.summary;
  const Verdict oom = AnalyzeLog(
      "RuntimeError: cuda runtime error (2) : out of memory at "
      "/pytorch/aten/src/THC/generic/THCStorage.cu:58\n");
  EXPECT_EQ(oom.finding.kind, "oom");
}

// verl-project/verl#4921 (verl-4921-raylet-worker-died-system-error-one-line): Ray's raylet "A
// worker died or was killed while executing a task by an unexpected system error. ... Worker PID:
// 87687 Worker exit type: SYSTEM_ERROR ...". SYSTEM_ERROR is Ray's exit type for a process that
// did not exit by itself (killed, or crashed in native code): a dead process, its rank not
// printed. It was read as no verdict (exit 3).
TEST(FirstRunFourthBatch, RayWorkerDeadWithSystemErrorIsADeadProcess) {
  const Verdict v = AnalyzeLog(
      "(raylet) A worker died or was killed while executing a task by an unexpected system "
      "error. To troubleshoot the problem, check the logs for the dead worker. Worker PID: 87687 "
      "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a "
      "connection error code 2. End of file.\n");
  EXPECT_EQ(v.finding.kind, "dead_rank");
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_NE(v.finding.summary.find("pid 87687"), std::string::npos) << v.finding.summary;
  // An exception raised in the actor's own code is not a death from outside.
  const Verdict user = AnalyzeLog(
      "The actor is dead because its worker process has died. Worker exit type: USER_ERROR\n");
  EXPECT_NE(user.finding.kind, "dead_rank");
}

// horovod/horovod#1364 (horovod-1364-gloo-init-closed-by-peer-timestamped-tags): under mpirun's
// timestamped tags (its pip build directory shortened to "..." here), rank 0 dies of "terminate
// called after throwing an instance of 'gloo::IoException'" ("Connection closed by peer
// [10.128.15.205]:53666"), then "Fatal Python error: Aborted", and faulthandler shows it in
// horovod/common/basics.py "in init": hvd.init was still connecting the processes. A start-up
// fault; the abort is the Gloo exception's consequence, not a crash of its own. It was read as a
// crash (exit 1).
TEST(FirstRunFourthBatch, GlooPeerDroppedDuringHorovodInitIsAStartUpFault) {
  const std::string tag = "Thu Aug 29 16:41:02 2019[0]<stderr>:";
  const Verdict v = AnalyzeLog(
      tag + "terminate called after throwing an instance of 'gloo::IoException'\n" + tag +
      "  what():  [.../third_party/gloo/gloo/transport/tcp/pair.cc:572] "
      "Connection closed by peer [10.128.15.205]:53666\n" +
      tag + "Fatal Python error: Aborted\n" + tag + "\n" + tag +
      "Thread 0x00007f1c534b9700 (most recent call first):\n" + tag +
      "  File \"/usr/local/lib/python3.6/dist-packages/horovod/common/basics.py\", line 60 in "
      "init\n");
  EXPECT_EQ(v.finding.kind, "bootstrap");
  EXPECT_EQ(v.finding.peer, "10.128.15.205:53666");
  EXPECT_NE(v.finding.summary.find("hvd.init"), std::string::npos) << v.finding.summary;
  // The same Gloo failure with no set-up frame is a peer that went away mid-job (pfedsd-3's
  // reading), and an abort with no Gloo failure before it stays a crash.
  const Verdict mid_job = AnalyzeLog(
      "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by "
      "peer [172.28.0.12]:43185\n");
  EXPECT_EQ(mid_job.finding.kind, "dead_rank");
  const Verdict abort_alone = AnalyzeLog("Fatal Python error: Aborted\n");
  EXPECT_EQ(abort_alone.finding.kind, "crash");
}

// Issue 33, re-checked on this batch: every start-up fault was headed "NCCL bootstrap failed ...;
// check NCCL_SOCKET_IFNAME first", also torchrun's rendezvous (av-hubert-19 above), the c10d
// store's port (pytorch/pytorch#85604, pytorch-85604-eaddrinuse-store-port-in-use) and Gloo's
// connectFullMesh (gpustack/gpustack#2125): none of them is NCCL's, and the line itself names
// what to check (MASTER_PORT, GLOO_SOCKET_IFNAME). NCCL's own set-up line (MambaTree#14's
// "Bootstrap : no socket interface found") keeps the NCCL heading and NCCL_SOCKET_IFNAME.
TEST(FirstRunFourthBatch, StartUpFaultsOutsideNcclAreNotCalledNcclBootstrap) {
  const Verdict port = AnalyzeLog(
      "[W socket.cpp:401] [c10d] The server socket has failed to listen on [::]:47531 (errno: 98 "
      "- Address already in use).\n");
  EXPECT_EQ(port.finding.kind, "bootstrap");
  EXPECT_EQ(port.finding.setting, "MASTER_ADDR/MASTER_PORT");
  EXPECT_TRUE(port.finding.summary.starts_with("start-up failed")) << port.finding.summary;
  EXPECT_EQ(port.finding.summary.find("NCCL"), std::string::npos) << port.finding.summary;
  const Verdict gloo = AnalyzeLog(
      "[rank1]:[E528 08:52:46.164295950 ProcessGroupGloo.cpp:145] Gloo connectFullMesh failed "
      "with [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n");
  EXPECT_EQ(gloo.finding.setting, "GLOO_SOCKET_IFNAME");
  EXPECT_EQ(gloo.finding.summary.find("NCCL"), std::string::npos) << gloo.finding.summary;
  const Verdict nccl = AnalyzeLog("Bootstrap : no socket interface found\n");
  EXPECT_EQ(nccl.finding.kind, "bootstrap");
  EXPECT_EQ(nccl.finding.setting, "NCCL_SOCKET_IFNAME");
  EXPECT_TRUE(nccl.finding.summary.starts_with("NCCL bootstrap failed")) << nccl.finding.summary;
}

}  // namespace
}  // namespace strata::hang

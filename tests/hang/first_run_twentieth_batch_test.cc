// What the twentieth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-06 (fifth)"`) showed strata reading wrong at its first run. Each test quotes the
// public thread's lines (the case named beside the test) and states what a reader derives from
// them by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// rwth-i6/returnn#1482 (returnn-1482-gloo-step-lines-then-cuda-oom-terminate): RETURNN's step
// lines ("ep 1 train, step 98, ... mem_usage:cuda:2 8.8GB, 0.834 sec/step"), then "terminate
// called after throwing an instance of 'c10::Error'" and "  what():  CUDA error: out of memory".
// By hand: c10's CUDA check raised because an allocation found no device memory left, and the
// process aborted on it: an out-of-memory failure. The line names no rank (the step lines name
// CUDA devices), so no culprit. The first run read the what() line as nothing at all (the CUDA
// error rule leaves out-of-memory to the OOM scan, which only knew "CUDA out of memory").
TEST(FirstRunTwentiethBatch, CudaErrorOutOfMemoryIsAnOom) {
  const Verdict v = AnalyzeLog(
      "ep 1 train, step 98, acc 0.003, loss 8.459, loss_att 8.575, loss_ctc 8.190, total 8.459, "
      "mem_usage:cuda:2 8.8GB, 0.834 sec/step\n"
      "terminate called after throwing an instance of 'c10::Error'\n"
      "  what():  CUDA error: out of memory\n"
      "CUDA kernel errors might be asynchronously reported at some other API call, so the "
      "stacktrace below might be incorrect.\n");
  EXPECT_EQ(v.finding.kind, "oom") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: the same error under torchrun's "[rank2]:" prefix is rank 2's out of memory.
  const Verdict ranked = AnalyzeLog("[rank2]: RuntimeError: CUDA error: out of memory\n");
  EXPECT_EQ(ranked.finding.kind, "oom") << ranked.finding.summary;
  EXPECT_EQ(ranked.finding.ranks, (std::vector<int64_t>{2}));
}

// ROCm/hip#3876 (hip-3876-hip-graph-capture-watchdog-pg5-rank0): "[rank0]:[E1030
// 15:32:32.970893361 ProcessGroupNCCL.cpp:2055] [PG ID 5 PG GUID 51 Rank 0] Process group watchdog
// thread terminated with exception: HIP error: operation not permitted when stream is capturing",
// then "Search for `hipErrorStreamCaptureUnsupported' ..." and "HIP kernel errors might be
// asynchronously reported ...". By hand: on ROCm, PyTorch's c10 HIP check reports the runtime's
// errors as "HIP error: <text>", as it reports CUDA's as "CUDA error: <text>"; rank 0's watchdog
// thread hit one (an operation refused during a HIP graph capture). A device-runtime error on
// rank 0, as "CUDA error: unspecified launch failure" there is (deepseek-moe-47). The first run
// recognised no line.
TEST(FirstRunTwentiethBatch, HipErrorIsTheRanksDeviceError) {
  const Verdict v = AnalyzeLog(
      "[rank0]:[E1030 15:32:32.970893361 ProcessGroupNCCL.cpp:2055] [PG ID 5 PG GUID 51 Rank 0] "
      "Process group watchdog thread terminated with exception: HIP error: operation not "
      "permitted when stream is capturing\n"
      "Search for `hipErrorStreamCaptureUnsupported' in "
      "https://docs.nvidia.com/cuda/cuda-runtime-api/group__HIPRT__TYPES.html for more "
      "information.\n"
      "HIP kernel errors might be asynchronously reported at some other API call, so the "
      "stacktrace below might be incorrect.\n");
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, (std::vector<int64_t>{0}));
  // Hand-made: HIP's out-of-memory is an out-of-memory failure, as CUDA's is.
  const Verdict oom = AnalyzeLog("[rank1]: RuntimeError: HIP error: out of memory\n");
  EXPECT_EQ(oom.finding.kind, "oom") << oom.finding.summary;
  EXPECT_EQ(oom.finding.ranks, (std::vector<int64_t>{1}));
}

// jax-ml/jax#6157 (jax-6157-tpu-driver-grpc-deadline-exceeded-wrapped): "- [ RuntimeError:
// Deadline exceeded: Failed to connect to remote server at address: grpc://10.59.106.169:8470.
// Error fr" / "om gRPC: Deadline Exceeded. Details: ] ...". By hand: JAX's TPU driver backend
// dials the TPU host's gRPC server at 10.59.106.169:8470 when it starts, and the connection did
// not come up before the deadline; nothing ran. A start-up fault whose network peer is
// 10.59.106.169 (the maintainer: every host of a pod slice must be connected at once for the
// slice to initialise). The first run recognised no line.
TEST(FirstRunTwentiethBatch, GrpcRemoteServerUnreachableAtStartIsBootstrapWithPeer) {
  const Verdict v = AnalyzeLog(
      "- [ RuntimeError: Deadline exceeded: Failed to connect to remote server at address: "
      "grpc://10.59.106.169:8470. Error fr\n"
      "om gRPC: Deadline Exceeded. Details: ] If applicable, include full error "
      "messages/tracebacks.\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.peer.substr(0, v.finding.peer.find(':')), "10.59.106.169");
  EXPECT_TRUE(v.finding.ranks.empty());
}

// facebookresearch/torch_ucc#53 (torch-ucc-53-comm-check-rank0-collective-not-posted): "
// what():  [Rank 1][ProcessGroupUCC-1][COMM_CHECK]", "Aborting comms #12 (op=ALLTOALL_BASE) due to
// the problematic ranks: [ 0 ]", "Ranks [0] are 'Collective wasn't posted'", "Comms status of
// other ranks:", "Ranks [0] are last known progressing comms #11 (op=ALLTOALL_BASE)", "Ranks [1 2
// 3 4 5 6 7 8 9 10 11 12 13 14 15] are last known progressing comms #12 (op=ALLTOALL_BASE)". By
// hand: ProcessGroupUCC's comm check gathered every rank's collective counter; fifteen ranks
// are in all-to-all #12 and rank 0 never posted it (its last is #11). Rank 0 is one collective
// behind: lagging rank 0 at ALLTOALL_BASE #12. The first run recognised no line.
TEST(FirstRunTwentiethBatch, UccCommCheckRanksThatNeverPostedAreBehind) {
  const std::string head =
      "terminate called after throwing an instance of 'c10::Error'\n"
      " what():  [Rank 1][ProcessGroupUCC-1][COMM_CHECK]\n"
      "\tAborting comms #12 (op=ALLTOALL_BASE) due to the problematic ranks: [ 0 ]\n";
  const Verdict v = AnalyzeLog(
      head +
      "\t\tRanks [0] are 'Collective wasn't posted'\n"
      "\tComms status of other ranks: \n"
      "\t\tRanks [0] are last known progressing comms #11 (op=ALLTOALL_BASE)\n"
      "\t\tRanks [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] are last known progressing comms #12 "
      "(op=ALLTOALL_BASE)\n");
  EXPECT_EQ(v.finding.kind, "lagging_rank") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, (std::vector<int64_t>{0}));
  EXPECT_EQ(v.finding.op, "ALLTOALL_BASE");
  EXPECT_EQ(v.finding.seq, 12);
  // Hand-made: two ranks that never posted #12 are both behind.
  const Verdict two = AnalyzeLog(
      "[Rank 1][ProcessGroupUCC-1][COMM_CHECK]\n"
      "Aborting comms #12 (op=ALLREDUCE) due to the problematic ranks: [ 0 3 ]\n"
      "Ranks [0 3] are 'Collective wasn't posted'\n");
  EXPECT_EQ(two.finding.kind, "lagging_rank") << two.finding.summary;
  EXPECT_EQ(two.finding.ranks, (std::vector<int64_t>{0, 3}));
  // Hand-made: a problematic rank in another state than "not posted" is not shown behind by
  // this rule (the check's other states say nothing about order): no lagging verdict from it.
  const Verdict other = AnalyzeLog(head + "\t\tRanks [0] are 'some other state'\n");
  EXPECT_NE(other.finding.kind, "lagging_rank") << other.finding.summary;
}

// sgl-project/sglang#1479 (sglang-1479-tp4-exception-in-cuda-graph-capture): eight "[23:17:01
// TPn] Capture cuda graph begin." lines, then "[23:17:08 TP4] Exception in run_tp_server:",
// "Traceback (most recent call last):", "  File \".../cuda_graph_runner.py\", line 147, in
// __init__" and "    self.capture()", where the paste ends. By hand: SGLang's "[time TPn]" prefix
// is the tensor-parallel rank of the worker process that logs; TP4 raised an exception while the
// eight ranks captured CUDA graphs, and an SGLang worker that raises ends the server. Its error
// line is cut, but which rank failed is not: a crash on rank 4. The first run recognised no
// line that says what failed.
TEST(FirstRunTwentiethBatch, SglangWorkerExceptionWithCutTracebackIsThatRanksCrash) {
  const std::string capture =
      "[23:17:01 TP3] Capture cuda graph begin. This can take up to several minutes.\n"
      "[23:17:01 TP4] Capture cuda graph begin. This can take up to several minutes.\n"
      "[23:17:08 TP4] Exception in run_tp_server:\n"
      "Traceback (most recent call last):\n"
      "  File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py\", "
      "line 147, in __init__\n"
      "    self.capture()\n";
  const Verdict v = AnalyzeLog(capture);
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, (std::vector<int64_t>{4}));
  // Hand-made: when the traceback goes on to an error strata reads (Gloo could not connect its
  // mesh while the process group was created), that error is the verdict, as in
  // sgl-project/sglang#5602 and the start-up faults of the corpus.
  const Verdict explained = AnalyzeLog(
      "[2025-01-30 18:11:28 TP2] Scheduler hit an exception: Traceback (most recent call last):\n"
      "RuntimeError: Gloo connectFullMesh failed with "
      "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n");
  EXPECT_EQ(explained.finding.kind, "bootstrap") << explained.finding.summary;
  // Hand-made after sgl-project/sglang#5602: Gloo's monitored-barrier error, logged by the same
  // rank just before the header, is the exception's own error; it names no failed rank (rank 0
  // is the barrier's coordinator), so no crash of TP3 is read from the header.
  const Verdict before = AnalyzeLog(
      "[rank3]:[E421 04:13:43.426633564 ProcessGroupGloo.cpp:143] Rank 3 successfully reached "
      "monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please "
      "check rank 0 logs for faulty rank.\n"
      "[2025-04-21 04:13:43 TP3] Scheduler hit an exception: Traceback (most recent call "
      "last):\n");
  EXPECT_NE(before.finding.kind, "crash") << before.finding.summary;
  // Hand-made: a prefix that counts TP ranks within a data-parallel replica ("DP1 TP1") names no
  // global rank: a crash, no rank.
  const Verdict replica = AnalyzeLog(
      "[2025-04-12 09:01:07 DP1 TP1] Scheduler hit an exception: Traceback (most recent call "
      "last):\n");
  EXPECT_EQ(replica.finding.kind, "crash") << replica.finding.summary;
  EXPECT_TRUE(replica.finding.ranks.empty());
}

// The held-back cases, run once the code above was done, missed three more; the rules below were
// written after that run (their cases carry held_back_first_run).

// deepspeedai/DeepSpeed#3827 (deepspeed-3827-pdsh-host-alltoall-base-cuda-calloc-failed): pdsh's
// "192.168.1.51: " prefix, ZeRO-3's group.alltoall_base, then "RuntimeError ... NCCL error in:
// ...ProcessGroupNCCL.cpp:1269, internal error, NCCL version 2.14.3", "ncclInternalError: Internal
// check failed.", "Last error:" and "Failed to CUDA calloc async 1920 bytes". By hand: NCCL's
// internal error is its allocator's: a 1920-byte device buffer could not be allocated, so the GPU
// had no memory left; an out-of-memory failure on that host, no rank printed.
TEST(FirstRunTwentiethBatch, NcclCudaCallocFailureIsAnOom) {
  const Verdict v = AnalyzeLog(
      "192.168.1.51: RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1670525541990/"
      "work/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, internal error, NCCL version "
      "2.14.3\n"
      "192.168.1.51: ncclInternalError: Internal check failed.\n"
      "192.168.1.51: Last error:\n"
      "192.168.1.51: Failed to CUDA calloc async 1920 bytes\n");
  EXPECT_EQ(v.finding.kind, "oom") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
}

// jax-ml/jax#19971 (jax-19971-tpu-backend-init-60s-warning-v4-32): "python jax_test.py", then
// ".../jax/_src/xla_bridge.py:146: UserWarning: TPU backend initialization is taking more than
// 60.0 seconds. Did you run your code on all TPU hosts? See ..." and "  warnings.warn(", where
// the log ends. By hand: on a v4-32 (four hosts) the TPU backend comes up only when every host
// runs the program; this host waited over a minute and nothing followed: the job never started,
// a start-up fault with no host named.
TEST(FirstRunTwentiethBatch, LogEndingOnTpuBackendInitialisationWarningIsBootstrap) {
  const std::string warning =
      "python jax_test.py \n\n"
      "/home/alberta/.local/lib/python3.10/site-packages/jax/_src/xla_bridge.py:146: "
      "UserWarning: TPU backend initialization is taking more than 60.0 seconds. Did you run your "
      "code on all TPU hosts? See https://jax.readthedocs.io/en/latest/multi_process.html for "
      "more information.\n"
      "  warnings.warn(\n";
  const Verdict v = AnalyzeLog(warning);
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: the program printing on after the warning got through the initialisation (as in
  // jax-ml/jax#12456, where later lines say what failed): no start-up verdict from the wait.
  const Verdict after = AnalyzeLog(warning + "global device count: 16\n");
  EXPECT_NE(after.finding.kind, "bootstrap") << after.finding.summary;
}

// pytorch/pytorch#151666 (pytorch-151666-fr-trace-culprit-rank1-state-mismatch): the Flight
// Recorder analyser's "Collective sequence number: 1487 has errors", "group info: 0:default_pg",
// "collective: nccl:all_reduce", "input sizes: [[40]]", "world size: 2", "expected ranks: {0, 1}",
// "collective state: scheduled" and "error msg: Culprit rank 1; Error type:
// COLLECTIVE_STATE_MISMATCH, Expected state: 'scheduled' does not match found state:
// 'completed'". By hand: the analyser compared the two ranks' records of all_reduce #1487 and
// they disagree; it names rank 1 the culprit. A mismatch at ALLREDUCE #1487, rank 1, as the tool
// says.
TEST(FirstRunTwentiethBatch, FlightRecorderAnalyserCulpritOfAMismatch) {
  const std::string block =
      "Collective sequence number: 1487 has errors\n"
      "internal record id: 1486\n"
      "group info: 0:default_pg\n"
      "collective: nccl:all_reduce\n"
      "input sizes: [[40]]\n"
      "output sizes: [[40]]\n"
      "world size: 2\n"
      "expected ranks: {0, 1}\n"
      "collective state: scheduled\n";
  const Verdict v = AnalyzeLog(
      block +
      "error msg: Culprit rank 1; Error type: COLLECTIVE_STATE_MISMATCH, Expected state: "
      "'scheduled' does not match found state: 'completed'\n");
  EXPECT_EQ(v.finding.kind, "collective_mismatch") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, (std::vector<int64_t>{1}));
  EXPECT_EQ(v.finding.seq, 1487);
  // Hand-made: an error type that is no mismatch gives no mismatch verdict from this rule.
  const Verdict other =
      AnalyzeLog(block + "error msg: Culprit rank 1; Error type: SOMETHING_ELSE\n");
  EXPECT_NE(other.finding.kind, "collective_mismatch") << other.finding.summary;
}

// A known miss of an earlier batch, read by a general rule: pytorch/pytorch#167288
// (pytorch-167288-elastic-restart-socket-poll-connect-refused-retrying), four lines
// "bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO socketPollConnect: connect to
// 10.29.224.148<52333> returned Connection refused, retrying (18/34) after sleep for 1800 msec"
// up to "(21/34)", where the log ends. By hand: a refused connect means nothing listens at
// 10.29.224.148:52333, so NCCL's connection to it never formed and it still retries when the
// log ends: a start-up (connection set-up) fault naming that peer, no global rank printed.
TEST(FirstRunTwentiethBatch, LogEndingOnRefusedConnectRetriesIsBootstrapWithPeer) {
  std::string retries;
  for (int n = 18; n <= 21; ++n) {
    retries +=
        "bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO socketPollConnect: "
        "connect to 10.29.224.148<52333> returned Connection refused, retrying (" +
        std::to_string(n) + "/34) after sleep for " + std::to_string(n * 100) + " msec\n";
  }
  const Verdict v = AnalyzeLog(retries);
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.peer.substr(0, v.finding.peer.find('<')), "10.29.224.148");
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: a retry the log goes on after (the connect succeeded, NCCL set up its
  // communicator) is routine, no failure.
  const Verdict after = AnalyzeLog(
      retries +
      "bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO comm 0x55d0 rank 4 nranks 16 "
      "cudaDev 4 busId 9d000 commId 0x1f - Init COMPLETE\n");
  EXPECT_NE(after.finding.kind, "bootstrap") << after.finding.summary;
}

}  // namespace
}  // namespace strata::hang

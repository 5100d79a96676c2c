// What the twenty-sixth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-07 (second)"`) showed strata reading wrong at its first run, and the two items the
// twenty-fifth batch left (a word-wrapped line quoted without its space, torch.distributed.launch's
// CalledProcessError). Each test quotes the public thread's lines (the case named beside the test)
// and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/pyspy.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// pytorch/pytorch#38702 (pytorch-38702-file-init-nccl-connect-refused-unknown-peer): NCCL 2.4.8
// retries a refused connect and then warns. By hand, from src/include/socket.h @ v2.4.8-1
// (NVIDIA/nccl 7c72dee660e4d055b81721dd6b03e4e1c0a983cf, connectAddress): ECONNREFUSED is retried
// with INFO "Call to connect returned %s, retrying", then WARN "Connect to %s failed : %s" and
// ncclSystemError. Refused means nothing listened at that address while the communicator's
// sockets were connected (the reporter: the address is none of the job's 4 nodes): a start-up
// fault naming 10.38.10.112. The first run said "network" and named no peer.
TEST(FirstRunTwentysixthBatch, RefusedConnectIsAStartUpFaultNamingTheAddress) {
  const Verdict v = AnalyzeLog(
      "NCCL WARN Connect to 10.38.10.112<21724> failed : Connection refused\n"
      "tj1-asr-train-v100-13:941227:943077 [0] NCCL INFO Call to connect returned Connection "
      "refused, retrying\n"
      "tj1-asr-train-v100-13:941227:943077 [0] NCCL INFO Call to connect returned Connection "
      "refused, retrying\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.peer.substr(0, v.finding.peer.find('<')), "10.38.10.112");
  EXPECT_TRUE(v.finding.ranks.empty());
  // A connect reset by its peer after it was made stays a network failure (NVIDIA/nccl#914's
  // kind of line, unchanged by the rule above).
  const Verdict reset = AnalyzeLog(
      "node1:1:2 [0] misc/socket.cc:521 NCCL WARN Net : Connection closed by remote peer "
      "10.104.148.191<37877>\n");
  EXPECT_EQ(reset.finding.kind, "network") << reset.finding.summary;
}

// vllm-project/vllm#798 (vllm-798-ray-llmengine-proxy-call-to-rank7-failed-connect): by hand,
// from src/proxy.cc @ v2.14.3-1 (NVIDIA/nccl c4e2aa6c792b4e94d0343c72ce20e71285238827,
// ncclProxyCall): the request is sent over the socket to a local rank's proxy and, when the
// exchange fails, WARN "Proxy Call to rank %d failed (%s)" with the request's type; "Connect" is
// the transport's connection to a peer. The connection was not made while the communicator was
// set up: a network failure (the corpus reads nccl-914's same line so), rank 7 being the proxy's
// local rank, no culprit. The first run found nothing ("no verdict", exit 3).
TEST(FirstRunTwentysixthBatch, ProxyCallConnectFailureIsANetworkFailure) {
  const Verdict v = AnalyzeLog(
      "(LLMEngine pid=2347640, ip=10.58.226.15) ncclInternalError: Internal check failed.\n"
      "(LLMEngine pid=2347640, ip=10.58.226.15) Last error:\n"
      "(LLMEngine pid=2347640, ip=10.58.226.15) Proxy Call to rank 7 failed (Connect)\n");
  EXPECT_EQ(v.finding.kind, "network") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_TRUE(Has(v.finding.summary, "Proxy Call to rank 7 failed (Connect)")) << v.finding.summary;
}

// pytorch/gloo#148 (gloo-148-file-init-wait-timeout-rank0-world2): by hand, c10d's FileStore of
// torch 1.x raises `std::runtime_error("Wait timeout")` when the keys it waits for never appear
// (torch/lib/c10d/FileStore.cpp @ pytorch/pytorch 10afd1af9b118343ba596d79b385b1b146ab3c8f,
// FileStore::wait), and the traceback passes through init_process_group into the
// ProcessGroupGloo constructor: rank 0 of a world of 2 waited for the other process's address,
// which never came. A start-up fault. The first run found nothing ("no verdict", exit 3).
TEST(FirstRunTwentysixthBatch, BareStoreWaitTimeoutUnderInitIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "Traceback (most recent call last):\n"
      "File \"/home/simon/Desktop/dist_rl/dist_rl.py\", line 13, in\n"
      "dist.init_process_group(rank=0,backend=\"gloo\",init_method='file:///home/simon/Desktop/"
      "shared_folder/gloo_shared_file',world_size=2)\n"
      "File \"/home/simon/anaconda3/lib/python3.6/site-packages/torch/distributed/"
      "distributed_c10d.py\", line 283, in init_process_group\n"
      "_default_pg = ProcessGroupGloo(store, rank, world_size)\n"
      "RuntimeError: Wait timeout\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  // The words alone inside another sentence are no store's error.
  const Verdict prose = AnalyzeLog("RuntimeError: Wait timeout exceeded in my own queue helper\n");
  EXPECT_NE(prose.finding.kind, "bootstrap") << prose.finding.summary;
}

// deepspeedai/DeepSpeed#3032 (deepspeed-3032-pyspy-one-rank-mainthread-idle-zero2-backward): a
// py-spy paste cut short. By hand: a dump cut mid-line shows the threads above the cut only;
// the part cut off may hold the failure, so no health can be read from it (and one process's
// stack says nothing of the other ranks): no verdict, exit 3, where strata said "healthy" (exit
// 0) for a cut dump with no failure shown. Without a RANK the process is named by its pid, not
// as a rank. (The case's own file ends its cut line with a newline, which py-spy's parser
// refuses as a malformed frame, the behaviour PySpyErrors.MalformedInputNamesFileLineAndExpectation
// pins: that case stays a miss, real_corpus_misses.yaml.)
TEST(FirstRunTwentysixthBatch, CutPySpyDumpShowsNoHealthAndNamesItsPid) {
  const std::string dump =
      "Thread 4939 (idle): \"MainThread\"\n"
      "    backward (torch/autograd/__init__.py:199)\n"
      "    backward (deepspeed/runtime/zero/stage_1_and_2.py:2013)\n"
      "    main ()\n"
      "Thread 5185 (idle): \"Thread-2\"\n"
      "    select (selectors.py:416)\n"
      "    _";
  const auto parsed = ParsePySpy(dump, "log.txt");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE((*parsed)[0].truncated);

  EvidenceSet set;
  AddEvidenceFile(set, dump, "log.txt");
  const Verdict v = Analyze(set, {});
  EXPECT_EQ(v.finding.kind, "unknown") << v.finding.summary;
  bool cut_note = false;
  for (const std::string& note : v.notes) {
    EXPECT_FALSE(Has(note, "of rank 4939")) << note;
    cut_note = cut_note || Has(note, "the py-spy dump of process 4939 was cut short");
  }
  EXPECT_TRUE(cut_note);
}

// ligang-cs/PseCo#15 (pseco-15-store-barrier-worker-count-16-world-4-then-exitcode-1): "Timed
// out initializing process group in store based barrier on rank: 0, ... (world_size=4,
// worker_count=16, timeout=0:30:00)". By hand: worker_count counts the check-ins on the barrier's
// key, 16 for a world of 4: more processes than the world checked in, so the count never equals
// the world size. The first run's verdict was right but said "only 16 of 4 processes reached the
// store-based barrier in time".
TEST(FirstRunTwentysixthBatch, StoreBarrierWithMoreCheckInsThanTheWorldSaysSo) {
  const Verdict v = AnalyzeLog(
      "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for "
      "key: store_based_barrier_key:1 (world_size=4, worker_count=16, timeout=0:30:00)\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_FALSE(Has(v.finding.summary, "only 16 of 4")) << v.finding.summary;
  EXPECT_TRUE(Has(v.finding.summary, "16 processes checked in")) << v.finding.summary;
  EXPECT_TRUE(Has(v.finding.summary, "a world of 4")) << v.finding.summary;
  // Fewer check-ins than the world is the missing process the old text described.
  const Verdict fewer = AnalyzeLog(
      "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for "
      "key: store_based_barrier_key:1 (world_size=4, worker_count=2, timeout=0:30:00)\n");
  EXPECT_TRUE(Has(fewer.finding.summary, "only 2 of 4 processes")) << fewer.finding.summary;
}

// bghira/SimpleTuner#2712
// (simpletuner-2712-circuit-breaker-detail-allgather-seq101-vs-reduce-seq0): "Rank 1 is running
// collective: CollectiveFingerPrint(SequenceNumber=101, OpType=ALLGATHER,
// ...), but Rank 7 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=REDUCE)".
// By hand: the two ranks are at #101 and #0, no one sequence number. The first run's verdict was
// right but its summary said "run different collectives at SequenceNumber 0".
TEST(FirstRunTwentysixthBatch, DetailMismatchAtTwoSequenceNumbersNamesEachRanks) {
  const Verdict v = AnalyzeLog(
      "[RANK 1] 2026-05-19 10:10:29,701 [ERROR] GPU circuit breaker OPEN: cuda_error - Detected "
      "mismatch between collectives on ranks. Rank 1 is running collective: "
      "CollectiveFingerPrint(SequenceNumber=101, OpType=ALLGATHER, TensorShape=[1], "
      "TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, "
      "layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), "
      "memory_format=(nullopt))), but Rank 7 is running collective: "
      "CollectiveFingerPrint(SequenceNumber=0OpType=REDUCE).Collectives differ in the following "
      "aspects:   Sequence number: 101vs 0  Op type: ALLGATHERvs REDUCE\n");
  EXPECT_EQ(v.finding.kind, "collective_mismatch") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_FALSE(Has(v.finding.summary, "at SequenceNumber 0")) << v.finding.summary;
  EXPECT_TRUE(Has(v.finding.summary, "rank 1 runs #101, rank 7 runs #0")) << v.finding.summary;
}

// deepspeedai/DeepSpeed#3916 (deepspeed-3916-wrapped-server-socket-bind-29600-address-in-use),
// left by the twenty-fifth batch: the paste is word-wrapped (lines of 74, 80, 79 and 29
// characters, broken at spaces), its third line ending "(errno:" and the fourth opening "98 -
// Address already in use).". By hand: c10d prints "(errno: 98 - Address already in use)" (the
// thread's own unwrapped lines); a line shorter than the paste's widest was not cut at a
// terminal's width, and the cut after ':' before '9' is between two words, so the space was
// dropped there. The quoted evidence read "(errno:98 - Address already in use)".
TEST(FirstRunTwentysixthBatch, WordWrappedLineIsQuotedWithTheSpaceItLost) {
  const Verdict v = AnalyzeLog(
      "RuntimeError: The server socket has failed to listen on any local network\n"
      "address. The server socket has failed to bind to [::]:29600 (errno: 98 - Address\n"
      "already in use). The server socket has failed to bind to 0.0.0.0:29600 (errno:\n"
      "98 - Address already in use).\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  ASSERT_FALSE(v.finding.evidence.empty());
  EXPECT_TRUE(Has(v.finding.evidence.front(), "(errno: 98 - Address already in use)"))
      << v.finding.evidence.front();
  // A terminal's cut inside a word at the paste's full width is still joined without a space
  // (clessig/atmorep#55's "CUDA erro" + "r: unspecified launch failure").
  const Verdict cut = AnalyzeLog(
      "[E ProcessGroupNCCL.cpp:916] [Rank 0] NCCL watchdog thread terminated with exception: CUDA "
      "erro\n"
      "r: unspecified launch failure\n");
  EXPECT_EQ(cut.finding.kind, "cuda_error") << cut.finding.summary;
}

// The twenty-fifth batch's second item: torch.distributed.launch's "subprocess.CalledProcessError:
// Command '[..., '--local_rank=3', ...]' returned non-zero exit status 1.". By hand, from the torch
// 1.x launcher (torch/distributed/launch.py as copied in
// tgerimantas/pytorch@9be25b8160ab7eb3c0ff7bbc0c71852541695fb8 and
// vdabravolski/pytorch@cadd81aeabbf8b744ee04670e6f4a85680900e6f; the upstream history was not
// fetched): the spawn loop `for local_rank in range(0, args.nproc_per_node)` rebinds `cmd` for
// each worker, then `for process in processes: process.wait(); if process.returncode != 0:
// raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)`. The return code
// is the first failed worker's in local-rank order; the command is the last one built, the
// highest local rank, whichever worker failed. So the line names no failed worker.
TEST(FirstRunTwentysixthBatch, LaunchCalledProcessErrorNamesNoFailedWorker) {
  const Verdict v = AnalyzeLog(
      "subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', "
      "'--local_rank=3', '--config', 'a.yaml']' returned non-zero exit status 1.\n");
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_FALSE(Has(v.finding.summary, "local rank 3")) << v.finding.summary;
  EXPECT_TRUE(Has(v.finding.summary, "exited with code 1")) << v.finding.summary;
}

}  // namespace
}  // namespace strata::hang

// What the twenty-second batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-06 (seventh)"`) showed strata reading wrong at its first run. Each test quotes the
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

// deepseek-ai/DeepEP#553 (deepep-553-internode-dispatch-timeout-dispatch-cpu-traceback): a
// traceback through buffer.dispatch and internode_dispatch ending "RuntimeError: DeepEP error:
// timeout (dispatch CPU)". By hand: DeepEP's host code (csrc/legacy/buffer.hpp) throws that
// error when the dispatch kernel's receive counts, which other ranks' data fill in, are still
// unset after its CPU timeout: the expert-parallel all-to-all waited past its timeout. A
// collective timeout naming no rank. The first run recognised no line (read, no verdict).
TEST(FirstRunTwentysecondBatch, DeepEpDispatchTimeoutIsACollectiveTimeout) {
  const Verdict v = AnalyzeLog(
      "Traceback (most recent call last):\n"
      "  File \"/home/dpsk_a2a/DeepEP/tests/test_internode.py\", line 138, in test_main\n"
      "    recv_x, recv_topk_idx, recv_topk_weights, recv_num_tokens_per_expert_list, handle, "
      "event = buffer.dispatch(\n"
      "  File \"/usr/local/lib/python3.12/dist-packages/deep_ep-1.2.1+309785a-py3.12-linux-x86_64."
      "egg/deep_ep/buffer.py\", line 490, in internode_dispatch\n"
      "    recv_src_meta, send_rdma_head, send_nvl_head, event = self.runtime.internode_dispatch(\n"
      "RuntimeError: DeepEP error: timeout (dispatch CPU)\n");
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made from the printf formats of DeepEP's kernels (csrc/kernels/legacy/internode.cu and
  // utils.cuh): a device-side timeout line is the same wait, seen from the kernel.
  for (const std::string line :
       {"DeepEP dispatch NVL receiver timeout, channel: 3, RDMA: 1, nvl: 4, src NVL: 5, head: 0, "
        "tail: 0\n",
        "DeepEP timeout check failed: rank = 2, thread = 0, value = 1)\n",
        "Warning: DeepEP timeout for combine receive, rank 3, local_expert_idx 1, src_rank 5\n"}) {
    EXPECT_EQ(AnalyzeLog(line).finding.kind, "collective_timeout") << line;
  }
  // Prose that names DeepEP and a timeout (the issue's own title) is no DeepEP line.
  EXPECT_EQ(AnalyzeLog("DeepEP timeout when using NVSHMEM v3.5.19\n").finding.kind, "unknown");
}

// A DeepEP kernel prints its timeout and then traps (trap() after the printf in
// csrc/kernels/legacy/internode.cu), so a CUDA error after the timeout line of the same log is
// its consequence and the timeout is the first cause. A CUDA error printed before any DeepEP
// timeout stays the first cause. Hand-made order test on the formats above and torch's
// "CUDA error: unspecified launch failure" line (deepseek-moe-47's wording).
TEST(FirstRunTwentysecondBatch, CudaErrorAfterDeepEpTrapIsItsConsequence) {
  const std::string timeout =
      "DeepEP dispatch NVL receiver timeout, channel: 3, RDMA: 1, nvl: 4, src NVL: 5, head: 0, "
      "tail: 0\n";
  const std::string cuda = "RuntimeError: CUDA error: unspecified launch failure\n";
  EXPECT_EQ(AnalyzeLog(timeout + cuda).finding.kind, "collective_timeout");
  EXPECT_EQ(AnalyzeLog(cuda + timeout).finding.kind, "cuda_error");
}

// NVIDIA/nccl#1704 (nccl-1704-mpirun-tag-p2p-legacy-register-cuda-failure-commreclaim): under
// mpirun's --tag-output, "[1,0]<stdout>:" and "[1,1]<stdout>:" each print "transport/p2p.cc:1129
// NCCL WARN Cuda failure 1 'invalid argument'" in the same second. By hand: the two ranks are
// every rank the log shows, and both fail the same CUDA call while registering buffers: a fault
// of what they share (driver, devices, the NCCL_LEGACY_CUDA_REGISTER setting), as the corpus
// reads the same failure on every GPU of a node (NVIDIA/nccl#957, vllm-project/vllm#6732). No
// rank is singled out. The first run named ranks 0 and 1.
TEST(FirstRunTwentysecondBatch, SameCudaFailureOnEveryRankShownNamesNone) {
  const std::string both =
      "[1,0]<stdout>:[2025-05-09 12:49:28] aiplatform-wlf2-ge78-72:163608:163650 [0] "
      "transport/p2p.cc:1129 NCCL WARN Cuda failure 1 'invalid argument'\n"
      "[1,0]<stdout>:aiplatform-wlf2-ge78-72:163608:163650 [0] NCCL INFO init.cc:262 -> 1\n"
      "[1,1]<stdout>:[2025-05-09 12:49:28] aiplatform-wlf2-ge78-72:163609:163649 [1] "
      "transport/p2p.cc:1129 NCCL WARN Cuda failure 1 'invalid argument'\n"
      "[1,1]<stdout>:aiplatform-wlf2-ge78-72:163609:163649 [1] NCCL INFO init.cc:262 -> 1\n";
  const Verdict v = AnalyzeLog(both);
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: a third rank that printed a line of its own without the failure (NVIDIA/nccl#348's
  // rank 0 printing the test's header) shows the failure is not everywhere: ranks 0 and 1 stay
  // named.
  const Verdict named = AnalyzeLog("[1,2]<stdout>:# Using devices\n" + both);
  EXPECT_EQ(named.finding.kind, "cuda_error");
  EXPECT_EQ(named.finding.ranks, (std::vector<int64_t>{0, 1}));
  // Hand-made: different failures on the two ranks are not one shared fault either.
  const Verdict different = AnalyzeLog(
      "[1,0]<stdout>:h:1:2 [0] transport/p2p.cc:1129 NCCL WARN Cuda failure 1 'invalid argument'\n"
      "[1,1]<stdout>:h:3:4 [1] transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is "
      "not supported between these two devices'\n");
  EXPECT_EQ(different.finding.ranks, (std::vector<int64_t>{0, 1})) << different.finding.summary;
}

}  // namespace
}  // namespace strata::hang

// HSDP under FSDP2: the replica all-reduce of each unit's gradient shard runs behind the rest of
// the backward, as the reduce-scatters do.
#include <gtest/gtest.h>

#include <string>

#include "sim/step_test_support.h"

namespace strata {
namespace {

// torchtitan's Llama-3.1-70B on 8 x 8 H100 (TP8 SP, FSDP2 over 8, full recompute), with
// data_parallel_replicate_degree 2: shard groups of 4, and each unit's fp32 gradient shard
// (70.55e9 / TP 8 / shard 4 x 4 B = 8.82 GB a step over the 80 layers) is all-reduced over the
// 2 replicas. torch's FSDP2 issues that all-reduce in foreach_reduce right after the unit's
// reduce-scatter, on the same side stream, while the backward of the layers below runs; only
// the last unit's, 1/80 of the total, waits for nothing to hide behind. So the exposed DP
// gradient time is at most the total / 80 plus the reduce-scatters' own exposure. Before, the
// all-reduce was one exposed collective after the backward: 0.195 s exposed of 0.753 s.
TEST(HsdpReplica, TheReplicaAllReduceHidesBehindTheBackward) {
  const std::string job =
      "model: llama-3.1-70b\n"
      "cluster: h100-8x8-ib400\n"
      "parallel: {tp: 8, pp: 1, dp: 8, sequence_parallel: true}\n"
      "batch: {micro_batch: 8, global_batch: 64}\n"
      "sequence: {max_tokens: 8192, packing: true}\n"
      "recompute: {granularity: full}\n"
      "precision: {params: bf16, grads: fp32}\n"
      "optimizer: {name: adamw, distributed: true, master_weights: fp32, moments: fp32}\n"
      "sharding: {mode: fsdp2, replicate: 2}\n"
      "framework: {name: torchtitan}\n";
  const auto r = testing::EvaluateJobText(job);
  ASSERT_TRUE(r.has_value());
  const StepPartTime& grad = (*r)[StepPart::kDpGrad];
  EXPECT_GT(grad.total.s(), 0.5);
  EXPECT_LT(grad.exposed.s(), grad.total.s() / 40) << grad.exposed.s();
}

}  // namespace
}  // namespace strata

// The ledger's forward-only mode: a forward under torch.no_grad (verl's log-prob, reference and
// critic-values passes) keeps no activations for a backward and no micro batch in flight, so
// its peak is the weights' states plus the larger of one layer's tensors and the head's
// (logits and the log-prob kernel's buffers). Expected values derived by hand below.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/activations.h"

namespace strata::no_grad_forward_test {
namespace {

// Llama-3.1-8B (h 4,096, 32 heads of 128, 8 KV heads, intermediate 14,336, vocab 128,256),
// TP1 PP1, one micro batch of 8,192 tokens, no recompute, megatron-core's native loss, bf16.
std::vector<std::string> SmallDense() {
  return {"model=llama-3.1-8b",         "parallel.ep=1",
          "sequence.max_tokens=8192",   "sequence.mean_tokens=8192",
          "recompute.granularity=none", "loss.cross_entropy=native",
          "batch.micro_batch=1"};
}

// One layer's tensors per token (docs/formulas.md "Activations", 2 B each):
//   norms: input + output in front of attention and of the MLP = 4 h = 16,384
//   attention: q 4,096 + k 1,024 + v 1,024 + output 4,096 = 10,240
//   MLP: gate+up output 2 x 14,336 + activation output 14,336 = 43,008
//   2 B x (16,384 + 10,240 + 43,008) = 139,264 B + flash attention's fp32 LSE 4 x 32 = 128 B
//   = 139,392 B/token x 8,192 tokens = 1,141,899,264 B; a dense layer has no forward transients.
// Logits: 8,192 x 128,256 = 1,050,673,152 elements; megatron-core's vocab-parallel kernel holds
//   the bf16 logits 2 B + the fp32 copy 4 B = 6 B each = 6,304,038,912 B; verl's entropy clones
//   the bf16 logits first, 2 B each = 2,101,346,304 B more.
constexpr double kLayerBytes = 139392.0 * 8192.0;
constexpr double kElements = 8192.0 * 128256.0;

TEST(NoGradForward, OneLayerOrTheLogitsNotEveryLayersActivations) {
  const MemoryConstants c = testing::Constants();
  const Job job = testing::ReferenceJob(SmallDense());
  ASSERT_EQ(ChooseLoss(job, c).kernel, LossKernel::kMegatron);
  const ActivationMemory act = ComputeActivations(job, c, 0);
  EXPECT_DOUBLE_EQ(act.no_grad_layer.count(), kLayerBytes);
  EXPECT_DOUBLE_EQ(act.no_grad_logits.count(), 6 * kElements);
  EXPECT_DOUBLE_EQ(act.entropy_copy.count(), 2 * kElements);
  // The training forward keeps all 32 layers' 1,141,899,264 B = 36,540,776,448 B.
  EXPECT_DOUBLE_EQ(act.stored.count(), 32 * kLayerBytes);

  // The ledger: after init (weights, gradients, master weights, CUDA context, NCCL) + the larger
  // of the layer (1.14 GB) and the head, x (1 + 0.05) fragmentation for fixed shapes
  // (data/memory_overheads.yaml allocator_fragmentation; 8,192-token rows, no packing):
  //   log-probs:    + 6,304,038,912 x 1.05 = 6,619,240,857.6 B
  //   with entropy: + (6,304,038,912 + 2,101,346,304) x 1.05 = 8,825,654,476.8 B
  //   values:       + 1,141,899,264 x 1.05 = 1,198,994,227.2 B (no logits)
  // Before: every pass was priced at the training forward's peak, after init + (36.5 GB +
  // 6.3 GB) x 1.05 = 44.98 GB of activations.
  const MemoryLedger ledger = ComputeLedger(job, c);
  const Bytes init = ledger.PhaseOf(Phase::kAfterInit).bytes;
  EXPECT_NEAR(Bytes(ledger.no_grad.log_probs - init).count(), 6 * kElements * 1.05, 1);
  EXPECT_NEAR(Bytes(ledger.no_grad.with_entropy - init).count(), 8 * kElements * 1.05, 1);
  EXPECT_NEAR(Bytes(ledger.no_grad.values - init).count(), kLayerBytes * 1.05, 1);
  EXPECT_NEAR(Bytes(ledger.PhaseOf(Phase::kForwardPeak).bytes - init).count(),
              (32 * kLayerBytes + 6 * kElements) * 1.05, 1);
}

// Selective recompute does not shrink a no_grad forward: nothing is recomputed without a
// backward, so the layer's live set is the whole layer's (the same 139,392 B/token).
TEST(NoGradForward, RecomputeDoesNotShrinkTheLayerRunning) {
  const MemoryConstants c = testing::Constants();
  std::vector<std::string> sets = SmallDense();
  sets.push_back("recompute.granularity=selective");
  const ActivationMemory act = ComputeActivations(testing::ReferenceJob(sets), c, 0);
  EXPECT_DOUBLE_EQ(act.no_grad_layer.count(), kLayerBytes);
}

// Pipeline stages: with PP 2 the last stage holds the logits, the first the most micro batches
// in flight for the training step; the no_grad peak is taken over every stage, so the head's
// 6 B per logit shows whichever stage the training peak picks.
TEST(NoGradForward, TakesTheLargestStage) {
  const MemoryConstants c = testing::Constants();
  std::vector<std::string> sets = SmallDense();
  sets.push_back("parallel.pp=2");
  sets.push_back("batch.global_batch=80");
  const Job job = testing::ReferenceJob(sets);
  const MemoryLedger ledger = ComputeLedger(job, c);
  EXPECT_DOUBLE_EQ(ledger.no_grad.logits.count(), 6 * kElements);
}

}  // namespace
}  // namespace strata::no_grad_forward_test

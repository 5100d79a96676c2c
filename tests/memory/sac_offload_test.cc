// torchtitan's selective activation checkpointing (per-op and every N-th layer) and
// megatron-core's activation offload in the activation ledger, against values derived by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/activations.h"
#include "strata/model/op_sac.h"
#include "support/golden.h"

namespace strata {
namespace {

// Row H200-03's job with Liger's kernels (framework.liger_kernel): its layers keep the fused
// count these derivations use, not HF's eager modules' extra tensors (hf_eager_layer_test.cc).
Job H200Job(std::vector<std::string> sets) {
  sets.insert(sets.begin(), "framework.liger_kernel=true");
  auto spec = LoadJobSpec(testing::TestPath("memory/validation/h200-03.yaml"), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

Job Ms06Job(const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec(testing::TestPath("memory/validation/ms-06.yaml"), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

const std::vector<std::string> kOp = {"recompute.granularity=selective",
                                      "recompute.selective_ac_option=op"};

// torchtitan's Llama block counts its aten.mm calls wq 1, wk 2, wv 3, wo 4, w1 5, w3 6, w2 7 and
// saves the odd ones (_apply_op_sac: "except every second mm").
TEST(OpSac, EveryOtherMatmulOfALlamaBlockIsSaved) {
  const Job job = H200Job(kOp);
  const OpSacBlock block = OpSacPlan(job.model, job.model.layers[0]);
  std::vector<std::string> saved, recomputed;
  for (const OpSacMatmul& m : block.matmuls) (m.saved ? saved : recomputed).push_back(m.name);
  EXPECT_EQ(saved, (std::vector<std::string>{"attention.wq", "attention.wv", "feed_forward.w1",
                                             "feed_forward.w2"}));
  EXPECT_EQ(recomputed,
            (std::vector<std::string>{"attention.wk", "attention.wo", "feed_forward.w3"}));
}

// Llama-3.1-8B (h 4096, 32 q / 8 kv heads of 128, f 14,336), TP 1, bf16, per token:
//   kept: block input 4096 + wq 4096 + wv 1024 + SDPA output 4096 + w1 14,336 + w2 4096
//         = 31,744 values x 2 B = 63,488 B, + the SDPA log-sum-exp 32 heads x 4 B = 128
//         -> 63,616 B.
//   no recompute (megatron-core's decomposition): norms 4 x 4096 = 16,384; q, k, v, attention
//         out 10,240; MLP 3 x 14,336 = 43,008 -> 69,632 x 2 B + 128 = 139,392 B.
// 2048 tokens, 32 layers: 32 x 63,616 x 2048 = 4,169,138,176 B stored; backward regenerates
// (139,392 - 63,616) x 2048 = 155,189,248 B of one block.
TEST(OpSac, LlamaBlockByHand) {
  const MemoryConstants c = testing::Constants();
  const Job job = H200Job(kOp);
  EXPECT_DOUBLE_EQ(OpSacSavedPerToken(job, job.model.layers[0]), 63616.0);
  // torchtitan's option re-runs no megatron-core module: the full decomposition is unchanged.
  EXPECT_DOUBLE_EQ(LayerActivationsPerToken(job, c, job.model.layers[0]).saved, 139392.0);
  const ActivationMemory act = ComputeActivations(job, c, 0);
  EXPECT_DOUBLE_EQ(act.stored.value(), 4'169'138'176.0);
  const MemoryLedger ledger = ComputeLedger(job, c);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(
                       ledger, "activations: 32 x full_attention+dense, op-level SAC layers, saved")
                       .value(),
                   4'169'138'176.0);
  bool found = false;
  for (const LedgerItem& item : act.items) {
    if (item.name != "activations: backward working set of one layer") continue;
    found = true;
    EXPECT_NE(item.formula.find("recomputed"), std::string::npos) << item.formula;
  }
  EXPECT_TRUE(found);
}

// Qwen3-14B (h 5120, 40 q / 8 kv heads of 128, f 17,408) at TP 4 with sequence parallelism:
//   over SP 4: block input 5120 + the reduce-scatter outputs after wo and w2 (saved whatever
//     the mm's parity) 2 x 5120 = 15,360 / 4 = 3840
//   over TP 4: wq 5120 + wv 1024 + SDPA output 5120 + w1 17,408 = 28,672 / 4 = 7168
//   whole: w2's output before its reduce-scatter, partial sums on every token: 5120
//   (3840 + 7168 + 5120) x 2 B = 32,256, + LSE 40 x 4 B / 4 = 40 -> 32,296 B.
TEST(OpSac, TensorParallelBlockByHand) {
  const Job job = Ms06Job(kOp);
  EXPECT_DOUBLE_EQ(OpSacSavedPerToken(job, job.model.layers[0]), 32296.0);
}

// selective_ac_option 2 on Llama-3.1-8B: blocks 2, 4, ..., 32 in full AC (16), the other 16 keep
// everything: 16 x 139,392 x 2048 = 4,567,597,056 B; 16 inputs x 2048 x 4096 x 2 B =
// 268,435,456 B.
TEST(LayerSac, EverySecondBlockByHand) {
  const MemoryConstants c = testing::Constants();
  const Job job = H200Job({"recompute.granularity=selective", "recompute.selective_ac_option=2"});
  const MemoryLedger ledger = ComputeLedger(job, c);
  EXPECT_DOUBLE_EQ(
      testing::ItemBytes(ledger, "activations: 16 x full_attention+dense layers, saved").value(),
      4'567'597'056.0);
  EXPECT_DOUBLE_EQ(testing::ItemBytes(ledger, "activations: checkpointed layer inputs").value(),
                   268'435'456.0);
  // Every block (option 1) is torchtitan's full AC: the same inputs as megatron's uniform 1.
  const Job every = H200Job({"recompute.granularity=selective", "recompute.selective_ac_option=1"});
  const Job full = H200Job({"recompute.granularity=full"});
  EXPECT_DOUBLE_EQ(ComputeActivations(every, c, 0).stored.value(),
                   ComputeActivations(full, c, 0).stored.value());
}

// --cpu-offloading-num-layers 8 on Llama-3.1-8B without recompute (139,392 B per token per
// layer, 2048 tokens): host 8 x 139,392 x 2048 = 2,283,798,528 B; the GPU keeps the other 24
// layers, 6,851,395,584 B, and one offloaded layer in flight, 285,474,816 B.
TEST(ActivationOffload, FirstLayersGoToTheHost) {
  const MemoryConstants c = testing::Constants();
  const Job job = H200Job({"activation_offload.num_layers=8"});
  const MemoryLedger ledger = ComputeLedger(job, c);
  ASSERT_EQ(ledger.host_items.size(), 1u);
  EXPECT_EQ(ledger.host_items[0].name, "activations: offloaded to host memory");
  EXPECT_DOUBLE_EQ(ledger.host_items[0].bytes.value(), 2'283'798'528.0);
  EXPECT_DOUBLE_EQ(
      testing::ItemBytes(ledger, "activations: 24 x full_attention+dense layers, saved").value(),
      6'851'395'584.0);
  EXPECT_DOUBLE_EQ(
      testing::ItemBytes(ledger, "activations: offload copy in flight (one layer)").value(),
      285'474'816.0);
  // The GPU's stored activations fall by 7 layers' worth (8 offloaded, 1 in flight).
  const Job none = H200Job({});
  EXPECT_DOUBLE_EQ(
      ComputeActivations(none, c, 0).stored.value() - ComputeActivations(job, c, 0).stored.value(),
      7 * 285'474'816.0);
}

}  // namespace
}  // namespace strata

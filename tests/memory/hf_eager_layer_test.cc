// HF transformers' eager decoder layer in the activation ledger (data/memory_overheads.yaml,
// hf_eager_layer), per layer and per token, by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/activations.h"
#include "support/golden.h"

namespace strata::hf_eager_layer_test {
namespace {

// Row H200-02's job: Llama-3.1-8B (hidden 4,096; 32 query heads and 8 KV heads of 128;
// intermediate 14,336) trained in full through hf-trainer, bf16 (a = 2 B), no recompute, TP 1.
LayerActivationBytes Layer(const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec(testing::TestPath("memory/validation/h200-02.yaml"), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return LayerActivationsPerToken(*job, testing::Constants(), job->model.layers[0]);
}

// The fused layer's count (megatron-core's kernels, or Liger's in HF code), per token:
//   two norms, input + output: 4 x 4,096 = 16,384 values
//   attention: q 4,096 + k 1,024 + v 1,024 + output 4,096 = 10,240 values
//   MLP: gate and up 2 x 14,336 + activation output 14,336 = 43,008 values
//   69,632 values x 2 B = 139,264 B, + flash attention's fp32 log-sum-exp 4 B x 32 heads = 128 B
//   -> 139,392 B.
constexpr double kFused = 139392.0;

// HF's eager modules (modeling_qwen2.py, the same in modeling_llama.py), beyond that count:
//   each RMSNorm keeps its fp32 upcast input (4 B x 4,096) instead of the bf16 input
//   (2 B x 4,096): +8,192 B, and the bf16 normalized value its trainable weight's gradient needs
//   (weight * x.to(bf16)): +8,192 B; two norms: 32,768 B
//   the MLP keeps act_fn(gate) besides gate (SiLU's input), up and the product (down_proj's
//   input): +14,336 x 2 B = 28,672 B
//   -> 61,440 B; 200,832 B in all.
TEST(HfEagerLayer, FullTrainingKeepsTheNormsFp32InputAndAFourthMlpTensor) {
  const LayerActivationBytes hf = Layer({});
  EXPECT_DOUBLE_EQ(hf.hf_eager, 61440.0);
  EXPECT_DOUBLE_EQ(hf.saved, kFused + 61440.0);
}

// Liger's kernels replace the norm and the activation (framework.liger_kernel): the fused count.
// So does a job that trains through megatron-core.
TEST(HfEagerLayer, LigerAndMegatronKeepTheFusedCount) {
  EXPECT_DOUBLE_EQ(Layer({"framework.liger_kernel=true"}).saved, kFused);
  EXPECT_DOUBLE_EQ(Layer({"framework.liger_kernel=true"}).hf_eager, 0.0);
  EXPECT_DOUBLE_EQ(Layer({"framework.name=megatron-core"}).saved, kFused);
}

// Under LoRA the norms' weights are frozen: autograd keeps an operand of a multiply only for the
// other's gradient (tools/autograd/gen_variable_type.py, guard_for), so the normalized value is
// not kept: 2 x 8,192 + 28,672 = 45,056 B (the adapter's own tensors are the same with or
// without Liger, so they cancel in the difference).
TEST(HfEagerLayer, FrozenNormsKeepNoNormalizedValue) {
  const std::vector<std::string> lora = {"adapter.kind=lora", "adapter.rank=8",
                                         "adapter.targets=[all-linear]"};
  std::vector<std::string> liger = lora;
  liger.push_back("framework.liger_kernel=true");
  EXPECT_DOUBLE_EQ(Layer(lora).hf_eager, 45056.0);
  EXPECT_DOUBLE_EQ(Layer(lora).saved - Layer(liger).saved, 45056.0);
}

// Under gradient checkpointing (full recompute) the stored activations are the layer inputs
// only; the recomputed layer's backward holds its whole saved set, HF's terms included:
//   (200,832 - 139,392) B x 4,096 tokens = 251,658,240 B more in the recompute, and half of it
//   more in live gradients (backward_gradient_fraction 0.5): 377,487,360 B.
// --explain says where the bytes come from.
TEST(HfEagerLayer, TheRecomputedLayerHoldsThemAndExplainSaysSo) {
  auto working = [](const std::vector<std::string>& sets) {
    auto spec = LoadJobSpec(testing::TestPath("memory/validation/h200-02.yaml"), sets);
    EXPECT_TRUE(spec.ok()) << spec.error().Format();
    auto job = ResolveJob(*spec);
    EXPECT_TRUE(job.ok()) << job.error().Format();
    return ComputeLedger(*job, testing::Constants());
  };
  const MemoryLedger hf = working({"recompute.granularity=full"});
  const MemoryLedger liger = working({"recompute.granularity=full", "framework.liger_kernel=true"});
  const std::string item = "activations: backward working set of one layer";
  EXPECT_DOUBLE_EQ(testing::ItemBytes(hf, item).count() - testing::ItemBytes(liger, item).count(),
                   377487360.0);
  bool explained = false;
  for (const LedgerItem& i : hf.items) {
    if (i.name == item) {
      explained = i.note.find("HF transformers' eager modules") != std::string::npos &&
                  i.note.find("61,440 B/token") != std::string::npos;
    }
  }
  EXPECT_TRUE(explained);
}

}  // namespace
}  // namespace strata::hf_eager_layer_test

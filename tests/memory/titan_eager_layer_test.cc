// torchtitan's eager decoder layer (torch.compile off) in the activation ledger
// (data/memory_overheads.yaml, torchtitan_eager_layer), per layer and per token, by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/activations.h"
#include "support/golden.h"

namespace strata::titan_eager_layer_test {
namespace {

// Llama-3.1-8B (hidden 4,096; 32 query heads and 8 KV heads of 128; intermediate 14,336) on
// 8 H100s through torchtitan, FSDP2, one sequence of 8,192 tokens, no recompute, bf16 (2 B).
Job TitanJob(const std::vector<std::string>& sets) {
  auto spec =
      LoadJobSpec(testing::TestPath("golden/cli_memory/torchtitan_eager_8b/job.yaml"), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

LayerActivationBytes Layer(const std::vector<std::string>& sets) {
  const Job job = TitanJob(sets);
  return LayerActivationsPerToken(job, testing::Constants(), job.model.layers[0]);
}

double Item(const ActivationMemory& memory, const std::string& name) {
  for (const LedgerItem& i : memory.items) {
    if (i.name == name) return i.bytes.count();
  }
  ADD_FAILURE() << "no item '" << name << "'";
  return 0;
}

// The fused layer's count (megatron-core's kernels; hf_eager_layer_test.cc derives it):
// 69,632 bf16 values + 32 heads x 4 B of log-sum-exp = 139,392 B per token.
constexpr double kFused = 139392.0;

// torchtitan's llama3 model.py, beyond that count:
//   FeedForward, w2(silu(w1 x) * w3 x): silu's output is kept beside w1 x, w3 x and the product,
//     a fourth 14,336-wide tensor: 14,336 x 2 B = 28,672 B (v0.1.0 to v0.2.2 alike)
//   Attention, v0.1.0 to v0.2.1: repeat_kv expands K and V from 8 to 32 heads before SDPA, which
//     keeps its inputs: 2 x (32 - 8) heads x 128 x 2 B = 12,288 B -> 40,960 B; 180,352 B in all.
//   Attention, v0.2.2 (73a0e69, the default release): pytorch/torchtitan ff0829c10 "GQA without
//     kv repeats (#2259)" removed repeat_kv; Attention.forward passes the 8-head K and V with
//     enable_gqa to SDPA, which keeps them at the width the count has: nothing more -> 28,672 B.
TEST(TitanEagerLayer, EagerModulesKeepAFourthMlpTensorAndRepeatedKvBefore022) {
  const LayerActivationBytes eager = Layer({"framework.version=0.2.1"});
  EXPECT_DOUBLE_EQ(eager.titan_eager, 40960.0);
  EXPECT_DOUBLE_EQ(eager.saved, kFused + 40960.0);
  EXPECT_DOUBLE_EQ(eager.hf_eager, 0.0);  // torchtitan's norms are not HF's fp32-upcasting ones
}

TEST(TitanEagerLayer, Release022PassesEnableGqaAndKeepsNoRepeatedKv) {
  const LayerActivationBytes eager = Layer({});  // release defaulted to the latest, 0.2.2
  EXPECT_DOUBLE_EQ(eager.titan_eager, 28672.0);
  EXPECT_DOUBLE_EQ(eager.saved, kFused + 28672.0);
  EXPECT_DOUBLE_EQ(Layer({"framework.version=0.2.2"}).titan_eager, 28672.0);
}

// Under torch.compile Inductor decides what to keep: the fused count, as before. A job that
// trains through megatron-core is megatron-core's fused layer.
TEST(TitanEagerLayer, CompiledAndMegatronKeepTheFusedCount) {
  EXPECT_DOUBLE_EQ(Layer({"framework.compile=true"}).saved, kFused);
  EXPECT_DOUBLE_EQ(Layer({"framework.compile=true"}).titan_eager, 0.0);
  EXPECT_DOUBLE_EQ(Layer({"framework.name=megatron-core"}).saved, kFused);
}

// TP 2 shards both: the MLP's 7,168 columns per rank (14,336 B) and, before 0.2.2, 16 query
// heads' K and V where the count has 4 KV heads: 2 x (16 - 4) x 128 x 2 B = 6,144 B -> 20,480 B.
TEST(TitanEagerLayer, TensorParallelShardsTheExtraTensors) {
  EXPECT_DOUBLE_EQ(Layer({"parallel.tp=2", "parallel.dp=4", "framework.version=0.2.1"}).titan_eager,
                   20480.0);
  EXPECT_DOUBLE_EQ(Layer({"parallel.tp=2", "parallel.dp=4"}).titan_eager, 14336.0);
}

// On the whole job: 32 layers x 8,192 tokens x 40,960 B = 10,737,418,240 B more saved
// activations at 0.2.1; at 0.2.2 the MLP's 28,672 B/token alone, 7,516,192,768 B (7.52 GB): the
// 3.22 GB of repeated K and V are gone. --explain says where they come from.
TEST(TitanEagerLayer, TheLedgerCarriesThemAndExplainSaysSo) {
  const MemoryConstants constants = testing::Constants();
  const ActivationMemory eager =
      ComputeActivations(TitanJob({"framework.version=0.2.1"}), constants, 0);
  const ActivationMemory current = ComputeActivations(TitanJob({}), constants, 0);
  const ActivationMemory compiled =
      ComputeActivations(TitanJob({"framework.compile=true"}), constants, 0);
  EXPECT_DOUBLE_EQ(eager.stored.count() - compiled.stored.count(), 10737418240.0);
  EXPECT_DOUBLE_EQ(current.stored.count() - compiled.stored.count(), 7516192768.0);
  auto note_of = [](const ActivationMemory& m) {
    for (const LedgerItem& i : m.items) {
      if (i.name.starts_with("activations: 32 x")) return i.note;
    }
    return std::string();
  };
  EXPECT_NE(note_of(eager).find("40,960 B/token"), std::string::npos);
  EXPECT_NE(note_of(eager).find("repeat_kv, torchtitan 0.2.1"), std::string::npos);
  EXPECT_NE(note_of(current).find("28,672 B/token"), std::string::npos);
  EXPECT_NE(note_of(current).find("torchtitan 0.2.2 passes enable_gqa"), std::string::npos);
}

// Full activation checkpointing keeps each layer's input only; the recomputed layer's backward
// holds its whole saved set, the eager tensors included: at 0.2.1 40,960 B x 8,192 tokens =
// 335,544,320 B, and half of it more in live gradients (backward_gradient_fraction 0.5):
// 503,316,480 B; at 0.2.2 28,672 B x 8,192 x 1.5 = 352,321,536 B. The checkpointed inputs are
// the same.
TEST(TitanEagerLayer, TheRecomputedLayerHoldsThem) {
  const MemoryConstants constants = testing::Constants();
  const ActivationMemory eager = ComputeActivations(
      TitanJob({"recompute.granularity=full", "framework.version=0.2.1"}), constants, 0);
  const ActivationMemory current =
      ComputeActivations(TitanJob({"recompute.granularity=full"}), constants, 0);
  const ActivationMemory compiled = ComputeActivations(
      TitanJob({"recompute.granularity=full", "framework.compile=true"}), constants, 0);
  EXPECT_DOUBLE_EQ(eager.stored.count(), compiled.stored.count());
  const std::string item = "activations: backward working set of one layer";
  EXPECT_DOUBLE_EQ(Item(eager, item) - Item(compiled, item), 503316480.0);
  EXPECT_DOUBLE_EQ(Item(current, item) - Item(compiled, item), 352321536.0);
}

}  // namespace
}  // namespace strata::titan_eager_layer_test

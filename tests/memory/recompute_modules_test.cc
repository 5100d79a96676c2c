// megatron-core's --recompute-modules in the activation ledger, per layer, by hand.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/activations.h"
#include "support/golden.h"

namespace strata {
namespace {

// Qwen3-14B layer at TP 4 with sequence parallelism, bf16 (a = 2 B), per token:
//   replicated (split by SP 4): mixer norm in + out, MLP norm in + out = 4 x 5120 = 20,480
//   sharded (split by TP 4): q 5120 + k, v 1024 each + attention out 5120 = 12,288,
//     + q, k before their norms 5120 + 1024 = 18,432; MLP gate+up 2 x 17408 + act 17408 = 52,224
//     -> 70,656
//   fp32 softmax LSE: 4 B x 40 heads = 160, split by TP 4 = 40
//   no recompute: 2 x (20,480 / 4 + 70,656 / 4) + 40 = 45,608 B
double SavedPerToken(const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec(testing::TestPath("memory/validation/ms-06.yaml"), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return LayerActivationsPerToken(*job, testing::Constants(), job->model.layers[0]).saved;
}

// Unfused attention (attention.kernel unfused, dropout 0.1) on the same layer: the 8,192 x 8,192
// scores of each of the 40 heads stay in HBM. Per token: softmax output and dropout output,
// 2 x 40 x 8,192 values of 2 B, and the 1-byte dropout mask, 40 x 8,192 B, all split by TP 4:
//   4 x 327,680 / 4 + 327,680 / 4 = 327,680 + 81,920 = 409,600 B; no flash LSE (-40 B):
//   45,608 - 40 + 409,600 = 455,168 B (Korthikanti et al.'s 5 a s^2 b per layer, per token).
// Without dropout only the softmax output: 45,608 - 40 + 163,840 = 209,408 B. Selective
// recompute of core_attn keeps none of it: 45,568 B, as with flash.
TEST(RecomputeModules, UnfusedAttentionKeepsTheScores) {
  EXPECT_DOUBLE_EQ(SavedPerToken({"recompute.granularity=none", "attention.kernel=unfused",
                                  "attention.dropout=0.1"}),
                   455168.0);
  EXPECT_DOUBLE_EQ(SavedPerToken({"recompute.granularity=none", "attention.kernel=unfused"}),
                   209408.0);
  EXPECT_DOUBLE_EQ(SavedPerToken({"attention.kernel=unfused", "attention.dropout=0.1"}), 45568.0);
}

// megatron-core's Transformer Engine spec fuses this dense layer's two norms into linear_qkv
// and linear_fc1 (both IdentityOp in the layer): `layernorm` recomputes neither, and a
// recomputed MLP's checkpoint input is the fused norm's input (the residual), so the norm output
// that linear_fc1 saved goes with the MLP.
TEST(RecomputeModules, ByHand) {
  EXPECT_DOUBLE_EQ(SavedPerToken({"recompute.granularity=none"}), 45608.0);
  // megatron-core's default selective = core_attn: the LSE goes, 45,568 B.
  EXPECT_DOUBLE_EQ(SavedPerToken({}), 45568.0);
  // mlp: the MLP's 52,224 sharded values and its norm's 5,120-wide output go; the norm input
  // stays: replicated 3 x 5120 = 15,360, so 2 x (15,360 / 4 + 18,432 / 4) + 40 = 16,936 B.
  EXPECT_DOUBLE_EQ(SavedPerToken({"recompute.modules=[mlp]"}), 16936.0);
  // layernorm: both norms are fused, nothing is recomputed: 45,608 B, as without recompute.
  EXPECT_DOUBLE_EQ(SavedPerToken({"recompute.modules=[layernorm]"}), 45608.0);
  EXPECT_DOUBLE_EQ(SavedPerToken({"recompute.modules=[layernorm, mlp]"}), 16936.0);
}

// The brief's case by hand: Llama-3.1-8B (h 4096, ffn 14,336, 32 heads), 4,096 tokens, micro
// batch 1, TP 1, bf16 (validation row H200-01 with selective recompute). Recomputing the MLP
// drops, per layer, linear_fc1's output s x 2 ffn x 2 B = 234,881,024 B, the SwiGLU output
// s x ffn x 2 B = 117,440,512 B and the fused norm's output s x h x 2 B = 33,554,432 B:
// 385,875,968 B per layer (94,208 B per token), 12.35 GB over the 32 layers. The layer's
// backward re-creates those tensors (and, under core_attn, the 4 B x 32 heads LSE).
TEST(RecomputeModules, MlpSavingOfOneLlamaLayer) {
  const MemoryConstants c = testing::Constants();
  auto layer_of = [&](const std::string& modules) {
    // --recompute-modules is megatron-core's: the job trains through megatron-core's layer.
    auto spec = LoadJobSpec(testing::TestPath("memory/validation/h200-01.yaml"),
                            {"framework.name=megatron-core", "recompute.granularity=selective",
                             "recompute.modules=" + modules});
    EXPECT_TRUE(spec.ok()) << spec.error().Format();
    auto job = ResolveJob(*spec);
    EXPECT_TRUE(job.ok()) << job.error().Format();
    EXPECT_DOUBLE_EQ(TokensPerRank(*job), 4096.0);
    return LayerActivationsPerToken(*job, c, job->model.layers[0]);
  };
  const LayerActivationBytes attn = layer_of("[core_attn]");
  const LayerActivationBytes both = layer_of("[core_attn, mlp]");
  EXPECT_DOUBLE_EQ((attn.saved - both.saved) * 4096.0, 385875968.0);
  EXPECT_DOUBLE_EQ(both.regenerated * 4096.0, 385875968.0 + 128.0 * 4096.0);
}

// Each value of recompute.modules changes what the reference MoE layers keep (Qwen3.6-35B-A3B:
// h 2048, 16 heads, top-8 of experts 512 wide, one shared expert 512 wide, EP 8 at a routing
// imbalance of 1, bf16, no SP), per token against no recompute:
//   core_attn       the fp32 LSE of the attention layer, 4 B x 16 = 64 B (0 on a GDN layer)
//   layernorm       the MoE layer's own pre-MLP norm output, 2048 x 2 B = 4,096 B (the mixer
//                   norm is fused into linear_qkv / in_proj)
//   moe_act         the experts' activation outputs, 8 x 512 x 2 B = 8,192 B
//   shared_experts  fc1 output and activation, 3 x 512 x 2 B = 3,072 B
//   moe             router logits 4 B x 256, top-k copies 8 x (2 x 2048 + 3 x 512) x 2 B,
//                   shared expert 3,072 B, its gate input 4,096 B: 1,024 + 90,112 + 3,072 +
//                   4,096 = 98,304 B; the norm output stays as the checkpoint input
//   mlp             nothing: megatron-core ignores it on an MoE layer
//   mla_up_proj     nothing on a model without MLA
TEST(RecomputeModules, EachModuleOnTheReferenceMoeLayers) {
  const MemoryConstants c = testing::Constants();
  auto saved = [&](const std::string& modules, MixerKind mixer) {
    const Job j = modules.empty() ? testing::ReferenceJob({"recompute.granularity=none"})
                                  : testing::ReferenceJob({"recompute.granularity=selective",
                                                           "recompute.modules=" + modules});
    for (const LayerSpec& l : j.model.layers) {
      if (l.mixer == mixer && l.ffn == FfnKind::kMoe) {
        return LayerActivationsPerToken(j, c, l).saved;
      }
    }
    ADD_FAILURE() << "no such layer";
    return 0.0;
  };
  for (MixerKind mixer : {MixerKind::kFullAttention, MixerKind::kGatedDeltaNet}) {
    const double none = saved("", mixer);
    const double lse = mixer == MixerKind::kFullAttention ? 64.0 : 0.0;
    EXPECT_DOUBLE_EQ(none - saved("[core_attn]", mixer), lse);
    EXPECT_DOUBLE_EQ(none - saved("[layernorm]", mixer), 4096.0);
    EXPECT_DOUBLE_EQ(none - saved("[moe_act]", mixer), 8192.0);
    EXPECT_DOUBLE_EQ(none - saved("[shared_experts]", mixer), 3072.0);
    EXPECT_DOUBLE_EQ(none - saved("[moe]", mixer), 98304.0);
    EXPECT_DOUBLE_EQ(none - saved("[moe, layernorm]", mixer), 98304.0);
    EXPECT_DOUBLE_EQ(none - saved("[mlp]", mixer), 0.0);
    EXPECT_DOUBLE_EQ(none - saved("[mla_up_proj]", mixer), 0.0);
  }
}

// MLA keeps its input norm as a module of its own (megatron-core fuses it into the down
// projection only under mla_down_proj_fusion, off by default), so `layernorm` drops its output
// on DeepSeek-V3's dense MLA layers: h = 7,168 values x 2 B = 14,336 B per token at TP 1; the
// dense MLP's fused norm stays. `mla_up_proj` drops the up-projected q, k, v of the 128 heads,
// 128 x (2 x (128 + 64) + 128) = 65,536 values = 131,072 B per token, keeping the latents.
TEST(RecomputeModules, MlaInputNormAndUpProjection) {
  const MemoryConstants c = testing::Constants();
  auto saved = [&](const std::vector<std::string>& sets) {
    auto spec = LoadJobSpec("deepseek-v3-pp16-vpp2-layout-h800x1024", sets);
    EXPECT_TRUE(spec.ok()) << spec.error().Format();
    auto job = ResolveJob(*spec);
    EXPECT_TRUE(job.ok()) << job.error().Format();
    EXPECT_EQ(job->model.layers[0].mixer, MixerKind::kMla);
    EXPECT_EQ(job->model.layers[0].ffn, FfnKind::kDense);
    return LayerActivationsPerToken(*job, c, job->model.layers[0]).saved;
  };
  const double none = saved({"recompute.granularity=none"});
  EXPECT_DOUBLE_EQ(
      none - saved({"recompute.granularity=selective", "recompute.modules=[layernorm]"}), 14336.0);
  EXPECT_DOUBLE_EQ(
      none - saved({"recompute.granularity=selective", "recompute.modules=[mla_up_proj]"}),
      131072.0);
}

// A recomputed module's tensors come back in its layer's backward: megatron-core's
// CheckpointFunction re-runs the module's forward, then its backward, so one layer's backward
// holds them on top of what the stage keeps. The same layer at PP 2 (stage 0: no logits),
// 8,192 tokens a micro batch:
//   mlp: the 52,224 sharded values and the fused norm's 5,120 replicated ones (SP 4),
//     2 B x (52,224 + 5,120) / 4 = 28,672 B/token (= 45,608 - 16,936) x 8,192 tokens
//     = 234,881,024 B on top of the gradients of what the layer keeps
//   default core_attn: the fp32 LSE, 40 B/token x 8,192 = 327,680 B
TEST(RecomputeModules, BackwardReCreatesTheRecomputedTensorsOfOneLayer) {
  const MemoryConstants c = testing::Constants();
  for (const auto& [modules, saved, regenerated] :
       std::vector<std::tuple<std::string, double, double>>{{"[mlp]", 16936.0, 28672.0},
                                                            {"[core_attn]", 45568.0, 40.0}}) {
    auto spec = LoadJobSpec(testing::TestPath("memory/validation/ms-06.yaml"),
                            {"recompute.modules=" + modules, "parallel.pp=2"});
    ASSERT_TRUE(spec.ok()) << spec.error().Format();
    auto job = ResolveJob(*spec);
    ASSERT_TRUE(job.ok()) << job.error().Format();
    const LayerActivationBytes layer = LayerActivationsPerToken(*job, c, job->model.layers[0]);
    EXPECT_DOUBLE_EQ(layer.saved, saved) << modules;
    EXPECT_DOUBLE_EQ(layer.regenerated, regenerated) << modules;
    const ActivationMemory act = ComputeActivations(*job, c, 0);
    EXPECT_NEAR(act.backward_working.count() - c.backward_gradient_fraction * saved * 8192.0,
                regenerated * 8192.0, 1.0)
        << modules;
  }
}

TEST(RecomputeModules, UnknownNameIsRefusedWithSuggestion) {
  auto spec = LoadJobSpec(testing::TestPath("memory/validation/ms-06.yaml"),
                          {"recompute.modules=[core_atn]"});
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().message.find("unknown recompute module 'core_atn'"), std::string::npos);
  EXPECT_NE(spec.error().hint.find("core_attn"), std::string::npos);
  auto full =
      LoadJobSpec(testing::TestPath("memory/validation/ms-07.yaml"), {"recompute.modules=[mlp]"});
  ASSERT_FALSE(full.ok());  // ms-07 is full recompute
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(RoutingImbalance, RaisesTheBusiestRanksExpertCopies) {
  // Reference MoE layer (docs/formulas.md): the top-k copies are 8 x (2 x 2048 + 3 x 512) =
  // 45,056 values = 90,112 B per token. At 1.5 times the mean the busiest EP rank keeps
  // 0.5 x 90,112 = 45,056 B more per token (no SP, so nothing divides it).
  const MemoryConstants c = testing::Constants();
  const Job even = testing::ReferenceJob();
  const Job skewed = testing::ReferenceJob({"moe.routing_imbalance=1.5"});
  size_t moe_layer = 0;
  while (even.model.layers[moe_layer].ffn != FfnKind::kMoe) ++moe_layer;
  const double delta = LayerActivationsPerToken(skewed, c, skewed.model.layers[moe_layer]).saved -
                       LayerActivationsPerToken(even, c, even.model.layers[moe_layer]).saved;
  EXPECT_DOUBLE_EQ(delta, 45056.0);
  // More than EP 8 times the mean is impossible.
  EXPECT_FALSE(LoadJobSpec(kReferenceJobName, {"moe.routing_imbalance=9"}).ok());
  EXPECT_FALSE(LoadJobSpec(kReferenceJobName, {"moe.routing_imbalance=0.5"}).ok());
}

}  // namespace
}  // namespace strata

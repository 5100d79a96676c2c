// Muon's matrices of an MLA MoE model, DeepSeek-V3 (data/models/deepseek-v3.json: h 7,168, 128
// heads, q_lora_rank 1,536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128; 256 routed
// experts and one shared of width 2,048; 3 dense layers of width 18,432, then 58 MoE layers).
// Both megatron-core's Muon (NVIDIA/Megatron-LM core_v0.16.1 = 55ac7082517c
// megatron/core/optimizer/muon.py:249-258: every 2-D parameter but the embedding and the output
// layer) and Moonlight's (MoonshotAI/Moonlight@c2ad5b20 examples/toy_train.py:293-302: every
// parameter of 2 or more dimensions but embed_tokens and lm_head) orthogonalise the router's
// weight (256 x 7,168) and MLA's five projections. megatron-core stores the feed-forward's gate
// and up as one linear_fc1 (2 f x h), which nothing splits; transformers' modules hold
// gate_proj and up_proj apart. Before, MuonMatricesOf listed the decoder's linears as PEFT's
// all-linear names them minus the router: no MLA matrix (the adapter list has none) and gate
// and up apart under megatron-core too.
//
// Newton-Schulz FLOP of an m x n matrix (m <= n): 5 x (4 m^2 n + 2 m^3) (sim/muon_cost.h).
//   q_a  7,168 -> 1,536  (m 1,536, n 7,168):     374,467,461,120
//   q_b  1,536 -> 24,576 (128 x 192):          1,195,879,956,480
//   kv_a 7,168 -> 576    (512 + 64):              49,474,437,120
//   kv_b 512 -> 32,768   (128 x (128 + 128)):    173,140,869,120
//   o    16,384 -> 7,168 (m 7,168, n 16,384): 20,519,206,256,640
//   MLA: 22,312,168,980,480 a layer
//   router 7,168 -> 256:                           9,563,013,120
//   an expert's linear_fc1 7,168 -> 4,096:     3,092,376,453,120
//   an expert's linear_fc2 2,048 -> 7,168:       687,194,767,360 (gate_proj, up_proj,
//                                                                 down_proj each the same)
//   dense linear_fc1 7,168 -> 36,864:         41,564,546,007,040
//   dense linear_fc2 18,432 -> 7,168:         22,623,740,231,680 (gate, up, down each)
// megatron-core: MoE layer 22,312,168,980,480 + 9,563,013,120 + 257 x (3,092,376,453,120 +
// 687,194,767,360) = 993,671,535,656,960; dense layer 22,312,168,980,480 + 41,564,546,007,040 +
// 22,623,740,231,680 = 86,500,455,219,200; whole model 3 x 86,500,455,219,200 + 58 x
// 993,671,535,656,960 = 57,892,450,433,761,280.
// Separate modules: MoE layer 22,312,168,980,480 + 9,563,013,120 + 257 x 3 x 687,194,767,360 =
// 552,148,897,628,160; dense layer 22,312,168,980,480 + 3 x 22,623,740,231,680 =
// 90,183,389,675,520; whole model 32,295,186,231,459,840.
// Before (no MLA, no router, gate and up apart): 30,933,589,268,889,600 under both.
// Parameters (the same in both shapes): MLA 187,105,280 a layer; MoE layer 187,105,280 +
// 1,835,008 + 257 x 3 x 14,680,064 = 11,507,269,632; dense layer 187,105,280 + 3 x 132,120,576
// = 583,467,008; whole model 669,172,039,680 (before: 657,652,187,136).
#include <gtest/gtest.h>

#include <vector>

#include "sim/step_test_support.h"
#include "strata/model/model_config.h"
#include "strata/sim/muon_cost.h"
#include "strata/sim/step_constants.h"

namespace strata {
namespace {

TEST(MuonMatrices, DeepSeekV3MlaRouterAndFusedFc1) {
  const testing::JobFileStep run =
      testing::EvaluateJobFile("deepseek-v3-pp16-vpp2-layout-h800x1024", {"optimizer.name=muon"});
  const StepTables& t = run.setup.tables;
  EXPECT_DOUBLE_EQ(t.muon_ns_flop_megatron_core, 57'892'450'433'761'280.0);
  EXPECT_DOUBLE_EQ(t.muon_ns_flop_separate, 32'295'186'231'459'840.0);
  EXPECT_DOUBLE_EQ(t.muon_matrix_params, 669'172'039'680.0);
}

// One MoE layer's shards under megatron-core's blockwise muon_tp_mode at TP 2, ETP 1: MLA's
// down projections and the router whole on every TP rank (q_a 374,467,461,120, kv_a
// 49,474,437,120, router 9,563,013,120), q_b's rows halved (1,536 -> 12,288: 616,059,371,520),
// kv_b's (512 -> 16,384: 87,241,523,200), o's columns (8,192 -> 7,168: 12,101,070,356,480), the
// shared expert's linear_fc1 rows (7,168 -> 2,048: 687,194,767,360) and linear_fc2 columns
// (1,024 -> 7,168: 161,061,273,600): 14,086,132,203,520 dense; the routed experts whole (ETP 1):
// 256 x 3,779,571,220,480 = 967,570,232,442,880. Before: 256 x 3 x 687,194,767,360 =
// 527,765,581,332,480 for the experts and only the shared expert's three halves
// (3 x 161,061,273,600 = 483,183,820,800) on the dense side.
TEST(MuonMatrices, DeepSeekV3LayerShardsOverTp) {
  auto model = LoadModelConfig("deepseek-v3");
  ASSERT_TRUE(model.ok()) << model.error().Format();
  const LayerSpec moe{MixerKind::kMla, FfnKind::kMoe};
  const std::vector<MuonMatrix> matrices = MuonMatricesOf(*model, moe);
  KernelEfficiency e;  // the seconds are not checked here: any finite efficiency
  e.gemm_large = 0.8;
  e.sustained_clock = 1;
  const MuonSeconds ns = NewtonSchulzSeconds(matrices, 989e12, e, true, 2, 1, false);
  EXPECT_DOUBLE_EQ(ns.non_expert_flop, 14'086'132'203'520.0);
  EXPECT_DOUBLE_EQ(ns.expert_flop, 967'570'232'442'880.0);
  // Elsewhere each module whole: MoE layer 552,148,897,628,160 (the figure above), 256 x 3 x
  // 687,194,767,360 of it the routed experts'.
  const MuonSeconds whole = NewtonSchulzSeconds(matrices, 989e12, e, false, 2, 1, false);
  EXPECT_DOUBLE_EQ(whole.expert_flop, 527'765'581'332'480.0);
  EXPECT_DOUBLE_EQ(whole.non_expert_flop + whole.expert_flop, 552'148'897'628'160.0);
}

}  // namespace
}  // namespace strata

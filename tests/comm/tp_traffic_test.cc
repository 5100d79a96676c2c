// Traffic of layouts with TP > 1, derived by hand from the configs (data/models/*.json) and
// megatron-core's communication pattern:
//  - a TP block (attention, or a dense MLP, or an MoE block with ETP > 1) issues, per pass,
//    one all-reduce of [tokens, h] without sequence parallelism, or one all-gather plus one
//    reduce-scatter of the same bytes with it; an MoE block with ETP 1 issues none;
//  - with sequence parallelism, the MoE all-to-all and the pipeline send carry tokens / TP.
#include <gtest/gtest.h>

#include <tuple>

#include "strata/comm/layout_traffic.h"
#include "strata/model/model_config.h"

namespace strata::tp_traffic_test {
namespace {

const TrafficItem* Find(const std::vector<TrafficItem>& items, GroupKind g, CollectiveOp op) {
  for (const auto& i : items) {
    if (i.group == g && i.op == op) return &i;
  }
  return nullptr;
}

ModelTrafficShape Shape(const char* model) {
  auto config = LoadModelConfig(model);
  EXPECT_TRUE(config.ok()) << config.error().Format();
  return TrafficShapeOf(*config, false);
}

// Qwen3-235B-A22B: hidden 4096, 94 layers, all MoE (decoder_sparse_step 1, no mlp_only_layers),
// top-8 routing. One micro batch of 4,096 tokens, 4 micro batches per step, no recompute.
TrafficInputs QwenInputs(int64_t tp, int64_t dp) {
  TrafficInputs in;
  in.layout.tp = tp;
  in.layout.ep = 8;
  in.layout.dp = dp;
  in.layout.sequence_parallel = tp > 1;
  in.micro_batch = 1;
  in.tokens_per_sample = 4096;
  in.micro_batches_per_step = 4;
  return in;
}

TEST(TpTraffic, Qwen3_235bAtTp1) {
  const auto items = LayoutTraffic(Shape("qwen3-235b-a22b"), QwenInputs(1, 64));
  EXPECT_EQ(Find(items, GroupKind::kTp, CollectiveOp::kAllReduce), nullptr);
  EXPECT_EQ(Find(items, GroupKind::kTp, CollectiveOp::kAllGather), nullptr);
  // 4,096 tokens x top-8 x 4,096 x 2 B = 268,435,456 B per all-to-all; dispatch + combine in
  // forward and backward = 4 per layer; 4 x 94 layers x 4 micro batches = 1,504 per step.
  const TrafficItem* ep = Find(items, GroupKind::kEp, CollectiveOp::kAllToAll);
  ASSERT_NE(ep, nullptr);
  EXPECT_DOUBLE_EQ(ep->size.count(), 268435456.0);
  EXPECT_DOUBLE_EQ(ep->calls_per_unit, 4.0);
  EXPECT_DOUBLE_EQ(ep->calls_per_step, 1504.0);
}

TEST(TpTraffic, Qwen3_235bAtTp4WithSequenceParallel) {
  const auto items = LayoutTraffic(Shape("qwen3-235b-a22b"), QwenInputs(4, 16));
  // Attention blocks only (every MLP is an MoE block with ETP 1): per layer and pass one
  // all-gather and one reduce-scatter of 4,096 x 4,096 x 2 B = 33,554,432 B, and in backward one
  // all-gather more (megatron's SP layers re-gather the column-parallel input for the weight
  // gradient): 3 all-gathers x 94 layers x 4 micro batches = 1,128; 2 x 94 x 4 = 752
  // reduce-scatters.
  for (const auto& [op, per_layer, per_step] :
       {std::tuple{CollectiveOp::kAllGather, 3.0, 1128.0},
        std::tuple{CollectiveOp::kReduceScatter, 2.0, 752.0}}) {
    const TrafficItem* tp = Find(items, GroupKind::kTp, op);
    ASSERT_NE(tp, nullptr);
    EXPECT_DOUBLE_EQ(tp->size.count(), 33554432.0);
    EXPECT_DOUBLE_EQ(tp->calls_per_unit, per_layer);
    EXPECT_DOUBLE_EQ(tp->calls_per_step, per_step);
  }
  EXPECT_EQ(Find(items, GroupKind::kTp, CollectiveOp::kAllReduce), nullptr);
  // The all-to-all carries one TP rank's 4,096 / 4 = 1,024 tokens:
  // 1,024 x 8 x 4,096 x 2 B = 67,108,864 B, still 4 per layer, 1,504 per step.
  const TrafficItem* ep = Find(items, GroupKind::kEp, CollectiveOp::kAllToAll);
  ASSERT_NE(ep, nullptr);
  EXPECT_DOUBLE_EQ(ep->size.count(), 67108864.0);
  EXPECT_DOUBLE_EQ(ep->calls_per_step, 1504.0);
}

// Llama-3.1-70B: hidden 8192, 80 dense layers. TP8 PP2 DP4 with sequence parallelism, one
// micro batch of 8,192 tokens, 8 micro batches per step, no recompute.
TEST(TpTraffic, Llama70bAtTp8Pp2) {
  TrafficInputs in;
  in.layout.tp = 8;
  in.layout.pp = 2;
  in.layout.dp = 4;
  in.layout.sequence_parallel = true;
  in.micro_batch = 1;
  in.tokens_per_sample = 8192;
  in.micro_batches_per_step = 8;
  const auto items = LayoutTraffic(Shape("llama-3.1-70b"), in);
  // 40 layers per stage, 2 TP blocks each (attention, MLP): per layer 2 blocks x 2 passes = 4
  // reduce-scatters and 2 blocks x 3 = 6 all-gathers (the backward gathers each block's
  // column-parallel input again: Transformer Engine's LayerNormLinear, ln_out_needs_gather) of
  // 8,192 x 8,192 x 2 B = 134,217,728 B; per step 4 x 40 x 8 = 1,280 and 6 x 40 x 8 = 1,920.
  // With torchtitan's DTensor layers, which save the gathered input, 4 and 1,280 (below).
  for (const auto& [op, per_layer, per_step] :
       {std::tuple{CollectiveOp::kAllGather, 6.0, 1920.0},
        std::tuple{CollectiveOp::kReduceScatter, 4.0, 1280.0}}) {
    const TrafficItem* tp = Find(items, GroupKind::kTp, op);
    ASSERT_NE(tp, nullptr);
    EXPECT_DOUBLE_EQ(tp->size.count(), 134217728.0);
    EXPECT_DOUBLE_EQ(tp->calls_per_unit, per_layer);
    EXPECT_DOUBLE_EQ(tp->calls_per_step, per_step);
  }
  TrafficInputs titan = in;
  titan.sp_regathers_input = false;
  EXPECT_DOUBLE_EQ(
      Find(LayoutTraffic(Shape("llama-3.1-70b"), titan), GroupKind::kTp, CollectiveOp::kAllGather)
          ->calls_per_step,
      1280.0);
  // The stage boundary carries one TP rank's 8,192 / 8 = 1,024 tokens x 8,192 x 2 B =
  // 16,777,216 B, forward and backward per micro batch: 2 x 8 = 16 per step.
  const TrafficItem* pp = Find(items, GroupKind::kPp, CollectiveOp::kSendRecv);
  ASSERT_NE(pp, nullptr);
  EXPECT_DOUBLE_EQ(pp->size.count(), 16777216.0);
  EXPECT_DOUBLE_EQ(pp->calls_per_step, 16.0);

  // Without sequence parallelism: one all-reduce per block per pass, and the full 8,192 tokens
  // cross the stage boundary (134,217,728 B).
  in.layout.sequence_parallel = false;
  const auto plain = LayoutTraffic(Shape("llama-3.1-70b"), in);
  const TrafficItem* ar = Find(plain, GroupKind::kTp, CollectiveOp::kAllReduce);
  ASSERT_NE(ar, nullptr);
  EXPECT_DOUBLE_EQ(ar->size.count(), 134217728.0);
  EXPECT_DOUBLE_EQ(ar->calls_per_step, 1280.0);
  const TrafficItem* pp_plain = Find(plain, GroupKind::kPp, CollectiveOp::kSendRecv);
  ASSERT_NE(pp_plain, nullptr);
  EXPECT_DOUBLE_EQ(pp_plain->size.count(), 134217728.0);
}

}  // namespace
}  // namespace strata::tp_traffic_test

// The per-layer collectives of one pipeline stage count that stage's own layers
// (TrafficInputs::stage), not the model's layers / PP.
#include <gtest/gtest.h>

#include "strata/comm/layout_traffic.h"

namespace strata {
namespace {

double CallsPerStep(const std::vector<TrafficItem>& items, GroupKind group, CollectiveOp op) {
  double calls = 0;
  for (const TrafficItem& t : items) {
    if (t.group == group && t.op == op) calls += t.calls_per_step;
  }
  return calls;
}

// DeepSeek-V3's shape (61 layers, the first 3 dense, 58 MoE, MLA everywhere) at TP 2, EP 2,
// PP 16, 4 micro batches, no recompute (2 passes), without sequence parallelism: one TP
// all-reduce per block and pass. Rank 0 of its layout holds 3 dense + 2 MoE layers: 5
// attention blocks and 3 dense-MLP blocks (an MoE block has no TP collective), so
// 2 x (5 + 3) x 4 = 64 all-reduces a step; its 2 MoE layers issue 2 (dispatch, combine) x 2
// passes x 2 layers x 4 = 32 all-to-alls. The model's average stage (61 / 16 = 3.8125 layers,
// 3 / 16 dense MLPs, 58 / 16 MoE) gives 2 x 4 x 4 = 32 and 2 x 2 x 3.625 x 4 = 58.
TEST(LayoutTrafficStage, CountsTheStagesOwnBlocks) {
  ModelTrafficShape m;
  m.hidden_size = 7168;
  m.layers = 61;
  m.moe_layers = 58;
  m.dense_ffn_layers = 3;
  m.full_attention_layers = 61;
  m.top_k = 8;
  TrafficInputs in;
  in.layout.tp = 2;
  in.layout.ep = 2;
  in.layout.pp = 16;
  in.micro_batches_per_step = 4;
  const std::vector<TrafficItem> average = LayoutTraffic(m, in);
  EXPECT_DOUBLE_EQ(CallsPerStep(average, GroupKind::kTp, CollectiveOp::kAllReduce), 32);
  EXPECT_DOUBLE_EQ(CallsPerStep(average, GroupKind::kEp, CollectiveOp::kAllToAll), 58);
  in.stage = StageLayerMix{.layers = 5,
                           .moe_layers = 2,
                           .dense_ffn_layers = 3,
                           .full_attention_layers = 5,
                           .softmax_attention_layers = 0};
  const std::vector<TrafficItem> rank0 = LayoutTraffic(m, in);
  EXPECT_DOUBLE_EQ(CallsPerStep(rank0, GroupKind::kTp, CollectiveOp::kAllReduce), 64);
  EXPECT_DOUBLE_EQ(CallsPerStep(rank0, GroupKind::kEp, CollectiveOp::kAllToAll), 32);
}

// A stage without decoder layers (a layout string's loss-only stage) issues no per-layer
// collective, and no division by its zero layers.
TEST(LayoutTrafficStage, StageWithoutLayersIssuesNone) {
  ModelTrafficShape m;
  m.hidden_size = 1024;
  m.layers = 8;
  m.dense_ffn_layers = 8;
  m.full_attention_layers = 8;
  TrafficInputs in;
  in.layout.tp = 2;
  in.layout.pp = 2;
  in.layout.sequence_parallel = true;
  in.stage = StageLayerMix{};
  for (const TrafficItem& t : LayoutTraffic(m, in)) {
    if (t.group == GroupKind::kTp) {
      EXPECT_DOUBLE_EQ(t.calls_per_step, 0) << t.purpose;
    }
  }
}

}  // namespace
}  // namespace strata

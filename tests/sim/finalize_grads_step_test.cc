// megatron-core's finalize_model_grads on each pipeline rank (issue 27): after the rank's DP
// gradient sync and before its optimizer it sums over TP the gradients of what every TP rank
// holds whole (norms, router, q/k norms, under sequence parallelism) and, at PP > 1, sums the
// shared word embedding's over the first and last rank; the rank whose all-reduces and
// optimizer take longest ends the step.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/hw/interconnects.h"
#include "strata/job/resolved_job.h"
#include "strata/sim/finalize_grads.h"
#include "strata/sim/stage_composition.h"
#include "strata/sim/step_model.h"

namespace strata {
namespace {

const PricedTraffic* PerStep(const StepResult& r, GroupKind group, std::string_view purpose) {
  for (const PricedTraffic& p : r.traffic) {
    if (p.item.group == group && p.item.frequency == TrafficFrequency::kPerStep &&
        p.item.purpose.find(purpose) != std::string::npos)
      return &p;
  }
  return nullptr;
}

// The reference job (Qwen3.6-35B-A3B: h 2048, 40 MoE layers, 10 of them full attention with
// per-head q/k norms of head_dim 256, 256 experts, a shared expert with its sigmoid gate) at
// TP 2 with sequence parallelism, PP 1. What megatron-core marks sequence_parallel or names
// q/k_layernorm, whole on both TP ranks:
//   a layer: 2 RMSNorms 2 x 2,048 + router 256 x 2,048 + shared-expert gate 2,048 = 530,432
//   40 layers 21,217,280 + final norm 2,048 + q/k norms 10 x 2 x 256 = 5,120 = 21,224,448
// x 2 B (ms-swift's bf16 gradients) = 42,448,896 B, one all-reduce (SUM) on the TP pair.
// Before, only the Gated DeltaNet's averaged gradients were counted.
TEST(FinalizeGrads, ReferenceAtTp2SumsTheNormsAndRouterOverTp) {
  const testing::ReferenceStep ref = testing::LoadReferenceStep(
      {"parallel.tp=2", "parallel.dp=20", "parallel.sequence_parallel=true"});
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_DOUBLE_EQ(r->finalize_grads.tp_sum, 21'224'448.0);
  const PricedTraffic* sum = PerStep(*r, GroupKind::kTp, "summed");
  ASSERT_NE(sum, nullptr);
  EXPECT_DOUBLE_EQ(sum->item.size.count(), 42'448'896.0);
  EXPECT_EQ(sum->cost.shape.ranks, 2);
  const PricedTraffic* avg = PerStep(*r, GroupKind::kTp, "averaged");
  ASSERT_NE(avg, nullptr);
  EXPECT_NEAR((*r)[StepPart::kTpGrad].total.s(), (sum->time_per_step + avg->time_per_step).value(),
              1e-12);
  // Without sequence parallelism only the q/k norms (reduced by name) stay: 5,120 (EP 1:
  // megatron-core requires SP for TP with EP).
  const testing::ReferenceStep no_sp =
      testing::LoadReferenceStep({"parallel.tp=2", "parallel.dp=20", "parallel.ep=1"});
  auto r2 = EvaluateStep(no_sp.setup.tables, no_sp.setup.layout, *no_sp.comm);
  ASSERT_TRUE(r2.ok()) << r2.error().Format();
  EXPECT_DOUBLE_EQ(r2->finalize_grads.tp_sum, 5'120.0);
}

// data/jobs/deepseek-v3-pp16-vpp2-layout-h800x1024.yaml: TP 1, PP 16 over 128 nodes, the MTP
// block shares the word embedding (7,168 x 129,280 = 926,679,040 parameters) with the first
// stage. The layout puts the MTP layer on virtual stage 30, rank 14, and the loss on rank 15:
// megatron-core's embedding group (pretrain_gpt.py get_embedding_ranks: the first rank and the
// MTP ranks, the last only when tied) is ranks 0 and 14, which all-reduce its fp32 gradient,
// 3,706,716,160 B, across two nodes once a step. Their optimizer shards
// (stage_optimizer_step_test.cc) are rank 0's 401,432,832 and rank 14's 541,010,000 parameters
// against rank 1's 719,205,376: the 3.7 GB all-reduce over 400 Gb/s InfiniBand takes tens of ms,
// the 178 million parameters between rank 14 and rank 1 about 2 ms of HBM, so rank 14, the
// larger shard of the pair, ends the step. Before, strata paired ranks 0 and 15 and rank 0
// ended it.
TEST(FinalizeGrads, DeepSeekV3SharedEmbeddingEndsTheStepOnTheMtpRank) {
  const std::optional<StepResult> r =
      testing::EvaluateJobFile("deepseek-v3-pp16-vpp2-layout-h800x1024").result;
  EXPECT_EQ(r->optimizer_rank, 14);
  EXPECT_DOUBLE_EQ(r->finalize_grads.shared_embedding, 926'679'040.0);
  EXPECT_EQ(r->finalize_grads.embedding_group_ranks, 2);
  EXPECT_DOUBLE_EQ(r->finalize_grads.tp_sum, 0.0);
  const PricedTraffic* tie = PerStep(*r, GroupKind::kPp, "embedding");
  ASSERT_NE(tie, nullptr);
  EXPECT_DOUBLE_EQ(tie->item.size.count(), 3'706'716'160.0);
  EXPECT_EQ(tie->cost.shape.ranks, 2);
  EXPECT_EQ(tie->cost.shape.nodes, 2);
  EXPECT_NEAR((*r)[StepPart::kTpGrad].total.s(), tie->time_per_step.s(), 1e-12);
  EXPECT_GT(tie->time_per_step.s(), 0.01);
  EXPECT_NEAR(r->local_params, 541'010'000.0, 1e-6 * 541'010'000.0);
}

// The vision tower at TP 2 (issue 27, the reference job with sequence parallelism). ms-swift's
// mcore-bridge builds Qwen3.5/3.6's tower from transformers' Qwen3_5VisionModel inside
// megatron-core's HuggingFaceModule, which marks every parameter of it
// average_gradients_across_tp_domain: all of the tower is whole on both TP ranks of the first
// stage and finalize_model_grads averages all of its gradients over TP. Its parameters, from
// the config's vision_config (depth 27, hidden 1,152, intermediate 4,304, patch 16, temporal
// patch 2, 3 channels, spatial merge 2, out hidden 2,048, 2,304 position embeddings):
//   patch embedding Conv3d 3 x 2 x 16 x 16 x 1,152 + bias 1,152        =   1,770,624
//   position embedding 2,304 x 1,152                                   =   2,654,208
//   a block: norm1, norm2 LayerNorms 2 x 2 x 1,152                      =       4,608
//            qkv 1,152 x 3,456 + 3,456; proj 1,152 x 1,152 + 1,152      =   5,313,024
//            fc1 1,152 x 4,304 + 4,304; fc2 4,304 x 1,152 + 1,152       =   9,921,872
//            = 15,239,504, x 27 blocks                                 = 411,466,608
//   merger: LayerNorm 2 x 1,152; fc1 4,608 x 4,608 + 4,608;
//           fc2 4,608 x 2,048 + 2,048                                  =  30,679,808
//   the tower                                                          = 446,571,248
// Beside it the 30 Gated DeltaNet layers whole on every TP rank (in_proj 2,048 x 12,288, b/a
// 2,048 x 64, conv 8,192 x 4, dt_bias and A_log 2 x 32, norm 128, out_proj 4,096 x 2,048 =
// 33,718,464 each) = 1,011,553,920: the averaged all-reduce carries 1,458,125,168 parameters
// x 2 B (bf16 gradients) = 2,916,250,336 B. Before, the tower was missing from it.
TEST(FinalizeGrads, ReferenceAtTp2AveragesTheVisionTowerOverTp) {
  const testing::ReferenceStep ref = testing::LoadReferenceStep(
      {"parallel.tp=2", "parallel.dp=20", "parallel.sequence_parallel=true"});
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_DOUBLE_EQ(r->finalize_grads.tp_vision, 446'571'248.0);
  EXPECT_DOUBLE_EQ(r->finalize_grads.tp_average, 1'458'125'168.0);
  const PricedTraffic* avg = PerStep(*r, GroupKind::kTp, "averaged");
  ASSERT_NE(avg, nullptr);
  EXPECT_DOUBLE_EQ(avg->item.size.count(), 2'916'250'336.0);
  // A frozen tower has no gradient to reduce.
  const testing::ReferenceStep frozen = testing::LoadReferenceStep(
      {"parallel.tp=2", "parallel.dp=20", "parallel.sequence_parallel=true", "frozen=[vision]"});
  auto r2 = EvaluateStep(frozen.setup.tables, frozen.setup.layout, *frozen.comm);
  ASSERT_TRUE(r2.ok()) << r2.error().Format();
  EXPECT_DOUBLE_EQ(r2->finalize_grads.tp_vision, 0.0);
  EXPECT_DOUBLE_EQ(r2->finalize_grads.tp_average, 1'011'553'920.0);
}

// megatron-core's embedding group as pretrain_gpt.py's get_embedding_ranks forms it: the first
// rank, the last when tied, every rank with an MTP layer. Four ranks, the MTP layer on rank 2,
// the output layer on rank 3: untied {0, 2} (rank 3 holds no copy of the embedding), tied
// {0, 2, 3}; without MTP and untied {0} alone (nothing to reduce); MTP on the last rank (no
// layout string) {0, 3}, the default first-and-last pair.
TEST(FinalizeGrads, EmbeddingGroupIsTheFirstTheTiedLastAndTheMtpRanks) {
  std::vector<StageComposition> ranks(4);
  for (int64_t i = 0; i < 4; ++i) ranks[static_cast<size_t>(i)].rank = i;
  ranks[0].embedding = true;
  ranks[3].output = true;
  ranks[2].mtp_layers = 1;
  EXPECT_EQ(EmbeddingGroupRanks(ranks, false), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(EmbeddingGroupRanks(ranks, true), (std::vector<int64_t>{0, 2, 3}));
  ranks[2].mtp_layers = 0;
  EXPECT_EQ(EmbeddingGroupRanks(ranks, false), (std::vector<int64_t>{0}));
  ranks[3].mtp_layers = 1;
  EXPECT_EQ(EmbeddingGroupRanks(ranks, false), (std::vector<int64_t>{0, 3}));
}

// DeepSeek-V3 (untied, one MTP layer) at PP 4 with the layout "Et*16|t*16|t*29,m|L":
// 16 + 16 + 29 = 61 layers, the MTP layer after the last on rank 2, the loss alone on rank 3
// (megatron-core builds the MTP block after the decoder layers). The embedding
// group is ranks 0 and 2: each all-reduces the 7,168 x 129,280 = 926,679,040 shared
// parameters, rank 3 none. Before, strata paired ranks 0 and 3 (first and last).
TEST(FinalizeGrads, MtpOnItsOwnStageJoinsTheEmbeddingGroupInsteadOfTheLast) {
  const testing::JobFileStep run = testing::EvaluateJobFile(
      "deepseek-v3-pp16-vpp2-layout-h800x1024",
      {"parallel.pp=4", "parallel.dp=256", "parallel.pipeline_layout=Et*16|t*16|t*29,m|L"});
  const StepTables& t = run.setup.tables;
  const StepLayout& s = run.setup.layout;
  const std::vector<StageComposition> ranks =
      StageCompositions(s.layout, t.layer_kinds, t.mtp_layers);
  ASSERT_EQ(ranks.size(), 4u);
  const std::vector<int64_t> group = EmbeddingGroupRanks(ranks, false);
  EXPECT_EQ(group, (std::vector<int64_t>{0, 2}));
  const double shared[] = {926'679'040.0, 0.0, 926'679'040.0, 0.0};
  for (size_t i = 0; i < 4; ++i) {
    const FinalizeGradParams f = FinalizeGradParamsOf(t, s, ranks[i], group);
    EXPECT_DOUBLE_EQ(f.shared_embedding, shared[i]) << "rank " << i;
    EXPECT_EQ(f.embedding_group_ranks, shared[i] > 0 ? 2 : 0) << "rank " << i;
  }
}

}  // namespace
}  // namespace strata

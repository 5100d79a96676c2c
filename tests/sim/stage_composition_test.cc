// A pipeline rank's layers by kind (sim/stage_composition.h), derived by hand from the layouts.
#include "strata/sim/stage_composition.h"

#include <gtest/gtest.h>

#include "strata/job/job_spec.h"
#include "strata/job/resolved_job.h"

namespace strata {
namespace {

ResolvedJob Resolved(const std::string& name, const std::vector<std::string>& sets = {}) {
  auto spec = LoadJobSpec(name, sets);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().Format());
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
  return *job;
}

// DeepSeek-V3: 61 layers, the first 3 dense (first_k_dense_replace 3), 58 MoE; the layout
// "Et*3|(tt|)*29,m|L" over PP 16 gives 32 virtual stages, stage k on rank k % 16: stage 0 the
// embedding and layers 0-2 (dense), stages 1-29 two layers each (3-60, MoE), stage 30 the MTP
// block, stage 31 the loss. Rank 0: stages 0 and 16 (layers 33, 34): 3 dense + 2 MoE and the
// embedding. Ranks 1-13: stages r and r + 16: 4 MoE. Rank 14: stage 14 and the MTP stage:
// 2 MoE + 1 MTP. Rank 15: stage 15 and the loss: 2 MoE + the output layer.
TEST(StageComposition, DeepSeekV3LayoutString) {
  const ResolvedJob job = Resolved("deepseek-v3-pp16-vpp2-layout-h800x1024");
  const LayerKinds kinds = LayerKindsOf(job.model.layers);
  ASSERT_EQ(kinds.kinds.size(), 2u);
  EXPECT_EQ(kinds.count, (std::vector<int64_t>{3, 58}));
  const std::vector<StageComposition> stages =
      StageCompositions(job.spec.layout, kinds, job.model.mtp_layers);
  ASSERT_EQ(stages.size(), 16u);
  EXPECT_EQ(stages[0].kind_layers, (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(stages[0].embedding);
  EXPECT_EQ(stages[0].moe_layers, 2);
  EXPECT_EQ(stages[0].dense_ffn_layers, 3);
  EXPECT_EQ(CompositionText(stages[0], kinds), "3 dense + 2 MoE layers, the embedding");
  for (int r = 1; r <= 13; ++r) {
    EXPECT_EQ(stages[static_cast<size_t>(r)].kind_layers, (std::vector<int64_t>{0, 4})) << r;
    EXPECT_EQ(stages[static_cast<size_t>(r)].moe_layers, 4) << r;
    EXPECT_FALSE(stages[static_cast<size_t>(r)].embedding || stages[static_cast<size_t>(r)].output);
  }
  EXPECT_EQ(CompositionText(stages[1], kinds), "4 MoE layers");
  EXPECT_EQ(stages[14].mtp_layers, 1);
  EXPECT_EQ(CompositionText(stages[14], kinds), "2 MoE layers, 1 MTP layer");
  EXPECT_TRUE(stages[15].output);
  EXPECT_EQ(CompositionText(stages[15], kinds), "2 MoE layers, the output layer");
  // MLA counts as attention whose K/V context parallelism exchanges; it is not softmax GQA.
  EXPECT_EQ(stages[1].full_attention_layers, 4);
  EXPECT_EQ(stages[1].softmax_attention_layers, 0);
}

// Qwen3.6-35B-A3B: 40 layers, full attention every 4th (layers 3, 7, ..., 39; the config's
// layer_types), Gated DeltaNet otherwise. An even PP 4 split gives 10 layers a rank: rank 0
// (0-9) holds full layers 3, 7; rank 1 (10-19) 11, 15, 19; rank 2 (20-29) 23, 27; rank 3
// (30-39) 31, 35, 39 and the output layer.
TEST(StageComposition, HybridEvenSplitStagesDiffer) {
  const ResolvedJob job =
      Resolved("qwen3.6-35b-a3b-sft-h20x40", {"parallel.pp=4", "parallel.dp=10", "parallel.ep=2"});
  const LayerKinds kinds = LayerKindsOf(job.model.layers);
  ASSERT_EQ(kinds.kinds.size(), 2u);
  const std::vector<StageComposition> stages = StageCompositions(job.spec.layout, kinds, 0);
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_EQ(stages[0].full_attention_layers, 2);
  EXPECT_EQ(stages[1].full_attention_layers, 3);
  EXPECT_EQ(stages[2].full_attention_layers, 2);
  EXPECT_EQ(stages[3].full_attention_layers, 3);
  for (const StageComposition& s : stages) EXPECT_EQ(s.moe_layers, 10);
  EXPECT_EQ(CompositionText(stages[3], kinds),
            "7 Gated DeltaNet + 3 full-attention layers, the output layer");
  EXPECT_EQ(CompositionText(stages[0], kinds),
            "8 Gated DeltaNet + 2 full-attention layers, the embedding");
}

// One stage holds everything at PP 1.
TEST(StageComposition, OneStage) {
  const std::vector<LayerSpec> layers(4, LayerSpec{MixerKind::kFullAttention, FfnKind::kDense});
  const LayerKinds kinds = LayerKindsOf(layers);
  EXPECT_TRUE(kinds.uniform());
  const std::vector<StageComposition> stages = StageCompositions(ParallelLayout{}, kinds, 1);
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(CompositionText(stages[0], kinds),
            "4 layers, the embedding, 1 MTP layer, the output layer");
}

}  // namespace
}  // namespace strata

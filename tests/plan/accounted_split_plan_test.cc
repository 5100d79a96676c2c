// The planner against megatron-core's account-for-embedding/loss split (--account-for-embedding-
// in-pipeline-split, --account-for-loss-in-pipeline-split: transformer_config.py and
// get_num_layers_to_build in megatron/core/transformer/transformer_block.py), which NVIDIA's
// published Llama-3.1-405B and Qwen3-235B layouts use.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "plan/plan_test_support.h"
#include "strata/job/pipeline_split.h"
#include "strata/report/plan_report.h"
#include "support/golden.h"

namespace strata {
namespace {

/// The candidates the planner's search enumerated for `p` (its space as PlanLayouts fills it).
std::vector<plan::Candidate> Enumerated(const testing::Planned& p,
                                        const plan::PlanOptions& options) {
  plan::SearchSpace s = options.space;
  const JobSpec& spec = p.setup.job.spec;
  s.world = spec.cluster.world();
  s.global_batch = spec.global_batch;
  s.max_tokens = static_cast<int64_t>(spec.sequence.max_tokens);
  s.sharding = p.result.sharding;
  for (const plan::ModeScope& m : p.result.scope.modes) {
    if (m.runs_mode) s.mode_dimensions.push_back(m.dimensions);
  }
  std::vector<plan::Candidate> out;
  plan::EnumerateLayouts(plan::RulesOf(p.setup.job.model, p.setup.job.query_groups()), s,
                         [&](const plan::Candidate& c) {
                           out.push_back(c);
                           return true;
                         });
  return out;
}

// By hand: the layers plus the accounted slots must split into PP x VPP chunks of at least 2
// (CheckAccounted).
//   126 (Llama-3.1-405B), PP 8: 126 + 2 = 128 = 8 x 16; VPP 8 gives chunks of 2 (NVIDIA's H100
//     layout); VPP 16 would give chunks of 1: refused. 127 is prime: no single accounting.
//   126, PP 2, VPP 1: (128 / 2) - 1 = 63 a stage, the even split: left out.
//   94 (Qwen3-235B), PP 8: 96 = 8 x 12; VPP 4 (NVIDIA's layout) and VPP 3 divide 12.
//   61 (DeepSeek-V3), PP 2: 62 = 2 x 31 with one slot (embedding or loss); 63 is odd.
TEST(AccountedSplits, ByHand) {
  auto kinds = [](const std::vector<plan::StageSplit>& v) {
    std::vector<std::pair<bool, bool>> out;
    for (const plan::StageSplit& s : v) out.emplace_back(s.embedding, s.loss);
    return out;
  };
  using K = std::vector<std::pair<bool, bool>>;
  EXPECT_EQ(kinds(plan::AccountedSplits(126, 8, 8)), (K{{true, true}}));
  EXPECT_EQ(kinds(plan::AccountedSplits(126, 8, 1)), (K{{true, true}}));
  EXPECT_TRUE(plan::AccountedSplits(126, 8, 16).empty());
  EXPECT_TRUE(plan::AccountedSplits(126, 2, 1).empty());
  EXPECT_TRUE(plan::AccountedSplits(126, 1, 1).empty());
  EXPECT_EQ(kinds(plan::AccountedSplits(94, 8, 4)), (K{{true, true}}));
  EXPECT_EQ(kinds(plan::AccountedSplits(94, 8, 3)), (K{{true, true}}));
  EXPECT_EQ(kinds(plan::AccountedSplits(61, 2, 1)), (K{{true, false}, {false, true}}));
  // Every split is one job validation accepts, and its chunks hold every layer.
  for (const auto& [layers, pp, vpp] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {126, 8, 8}, {126, 16, 4}, {94, 8, 4}, {94, 16, 2}, {61, 2, 1}, {61, 31, 1}}) {
    for (const plan::StageSplit& s : plan::AccountedSplits(layers, pp, vpp)) {
      ParallelLayout l;
      l.pp = pp;
      l.vpp = vpp;
      l.account_for_embedding = s.embedding;
      l.account_for_loss = s.loss;
      EXPECT_TRUE(CheckPipelineSplit(l, layers, 0).ok()) << layers << " on " << pp << "x" << vpp;
      int64_t sum = 0;
      for (int64_t n : ChunkLayerCounts(l, layers)) {
        EXPECT_GE(n, 1) << layers << " on " << pp << "x" << vpp;
        sum += n;
      }
      EXPECT_EQ(sum, layers) << layers << " on " << pp << "x" << vpp;
    }
  }
}

// Megatron-Bridge's H100 FP8 Llama-3.1-405B layout (TP8 PP8 VPP8 CP2, embedding and loss each
// counted as a layer; the fixture's header cites the row). 126 = 2 x 3^2 x 7, so without the
// accounted split PP 8 admits no VPP > 1: `--fix pp=8 --fix vpp=8` found 0 valid layouts (63
// partial layouts removed by the layer rule) and said "every layout checked is over the card's
// memory". With it, 128 / (8 x 8) = 2 a chunk: the published layout is in the space.
TEST(AccountedSplitPlan, PublishedLlama405bLayoutIsSearched) {
  const plan::PlanOptions options =
      testing::FixedLayoutOptions(/*tp=*/8, /*pp=*/8, /*cp=*/2, /*vpp=*/8);
  const testing::Planned p = testing::PlanJob(testing::Llama405bH100Fp8Job(), {}, options);
  ASSERT_TRUE(p.ok);
  // TP8 PP8 VPP8 CP2 EP1 ETP1 DP8 mb1, recompute none: the published layout alone.
  ASSERT_EQ(p.result.rules.valid, 1);
  const std::vector<plan::Candidate> all = Enumerated(p, options);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].layout.account_for_embedding);
  EXPECT_TRUE(all[0].layout.account_for_loss);
  EXPECT_EQ(all[0].layout.vpp, 8);
  EXPECT_EQ(all[0].layout.dp, 8);
  EXPECT_EQ(p.result.memory_checked, 1);
}

// Qwen3-235B-A22B (94 layers) with overlap.moe_a2a on, as NVIDIA's H100 preset runs it:
// megatron-core then needs VPP > 1 at PP > 1, and 94 = 2 x 47 admits none at PP 8, so every
// pipelined layout was gone (`--fix pp=8`: 0 valid). 96 = 8 x 4 x 3: the published TP2 PP8 VPP4
// EP32 is now searched.
TEST(AccountedSplitPlan, Qwen3PipelinedLayoutsWithA2aOverlap) {
  const plan::PlanOptions options =
      testing::FixedLayoutOptions(/*tp=*/2, /*pp=*/8, /*cp=*/0, /*vpp=*/0, /*ep=*/32);
  const testing::Planned p =
      testing::PlanJob(testing::TestPath("fixtures/plan/mb-qwen3-235b-h100x256.yaml"), {}, options);
  ASSERT_TRUE(p.ok);
  EXPECT_GT(p.result.rules.valid, 0);
  bool published = false;
  for (const plan::Candidate& c : Enumerated(p, options)) {
    const ParallelLayout& l = c.layout;
    EXPECT_GT(l.vpp, 1);  // megatron-core's a2a overlap rule
    published |= l.vpp == 4 && l.cp == 1 && l.account_for_embedding && l.account_for_loss;
  }
  EXPECT_TRUE(published);
}

// When no layout passes the rules, the plan names the rules and their counts instead of blaming
// memory ("every layout checked is over the card's memory" with 0 checked). 126 layers on PP 128
// (1,024 / 128 = 8 GPUs left for TP, CP, DP): no even split, no uneven one (ceil(126 / 128) = 1
// a stage leaves nothing for a lighter one) and no accounted one (128 / 128 = 1 slot a stage,
// fewer than the 2 a chunk needs).
TEST(AccountedSplitPlan, NoValidLayoutSaysWhichRule) {
  plan::PlanOptions options;
  options.space.fixed.pp = 128;
  const testing::Planned p = testing::PlanJob(testing::Llama405bH100Fp8Job(), {}, options);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.result.rules.valid, 0);
  EXPECT_GT(p.result.rules[plan::Rule::kLayersDividePp], 0);
  const std::string text = PlanToText(p.setup, p.result, false);
  EXPECT_EQ(text.find("every layout checked is over the card's memory"), std::string::npos) << text;
  EXPECT_NE(text.find("no valid layout: the layout rules removed every partial layout ("),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("{} by: the layers must split into PP x VPP chunks",
                                  p.result.rules[plan::Rule::kLayersDividePp])),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace strata

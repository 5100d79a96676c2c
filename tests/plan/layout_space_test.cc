#include "strata/plan/layout_space.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

#include "strata/job/job_validation.h"
#include "strata/job/training_modes_parse.h"

namespace strata::plan {
namespace {

// A small Mixtral-style MoE: 8 heads (MHA, 8 KV heads), 4 layers, 4 experts of FFN width 1024.
constexpr const char* kTinyMoe = R"({
  "architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
  "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 4,
  "num_attention_heads": 8, "num_key_value_heads": 8, "num_local_experts": 4,
  "num_experts_per_tok": 2, "vocab_size": 1000, "tie_word_embeddings": false
})";

ModelConfig TinyMoe() {
  auto model = ParseModelConfig(kTinyMoe, "tiny-moe.json");
  EXPECT_TRUE(model.ok()) << model.error().Format();
  return *model;
}

// The same with grouped-query attention: 2 KV heads for the 8 query heads, so that TP 4 and 8
// exceed the query groups (megatron-core runs them, whole-head engines do not).
ModelConfig TinyGqaMoe() {
  ModelConfig model = TinyMoe();
  model.attention.num_kv_heads = 2;
  return model;
}

// 16 GPUs, global batch 16, with CP, VPP, micro batch and recompute fixed (cp=1, vpp=1, mb=1,
// recompute none): the space small enough to count by hand.
SearchSpace HandCountedSpace() {
  SearchSpace space;
  space.world = 16;
  space.global_batch = 16;
  space.max_tokens = 4096;
  space.recompute = {RecomputeGranularity::kNone};
  space.fixed.cp = 1;
  space.fixed.vpp = 1;
  space.fixed_micro_batch = 1;
  return space;
}

TEST(LayoutSpace, DivisorsAscending) {
  EXPECT_EQ(Divisors(40), (std::vector<int64_t>{1, 2, 4, 5, 8, 10, 20, 40}));
  EXPECT_EQ(Divisors(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(Divisors(16384).size(), 15u);  // 2^0 .. 2^14
}

TEST(LayoutSpace, HandCountedSixteenGpus) {
  // 16 GPUs, global batch 16, with CP, VPP, micro batch and recompute fixed (cp=1, vpp=1, mb=1,
  // recompute none) so that the count can be done by hand:
  //   TP in {1,2,4,8} (TP 16 does not divide 8 heads: 1 removal).
  //   PP divides 16/TP and the 4 layers: PP in {1,2,4}; PP 8 and 16 at TP 1 and PP 8 at TP 2 are
  //   removed by the layer rule (3 removals); TP 8 x PP 4 = 32 > 16 is not a layout at all.
  //   DP = 16 / (TP x PP); experts live in TP x DP = 16 / PP ranks; EP divides 4 and 16/PP,
  //   ETP divides 16 / (PP x EP):
  //     PP 1 (4 TPs): EP 1 -> ETP in {1,2,4,8,16} (5), EP 2 -> 4, EP 4 -> 3: 12 each -> 48;
  //                   EP 8 and 16 removed: 2 each -> 8 removals
  //     PP 2 (4 TPs): EP 1 -> 4, EP 2 -> 3, EP 4 -> 2: 9 each -> 36; EP 8 removed: 4 removals
  //     PP 4 (3 TPs): EP 1 -> 3, EP 2 -> 2, EP 4 -> 1: 6 each -> 18
  //   Even stages: 48 + 36 + 18 = 102; expert-rule removals 12.
  //   Uneven stages (UnevenSplits): PP 2 adds first 3 + last 1 (the other stage ceil(4/2) + 1 =
  //   3 layers, the last the 1 left), the same 36 layouts and 4 EP removals again; PP 4 has none
  //   (one layer a stage). Valid: 102 + 36 = 138; expert-rule removals 16.
  SearchSpace space = HandCountedSpace();
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>> seen;
  const PruneCounts counts = EnumerateLayouts(
      RulesOf(TinyMoe(), QueryGroupSplit::kMultipleOrDivisor), space, [&](const Candidate& c) {
        EXPECT_EQ(c.layout.world(), 16);
        EXPECT_EQ(c.layout.sequence_parallel, c.layout.tp > 1);
        seen.insert(
            {c.layout.tp, c.layout.pp, c.layout.ep, c.layout.etp, c.layout.last_stage_layers});
        if (c.layout.uneven_pipeline()) {
          EXPECT_EQ(c.layout.pp, 2);
          EXPECT_EQ(c.layout.last_stage_layers, 1);
        }
        return true;
      });
  EXPECT_EQ(counts.valid, 138);
  EXPECT_EQ(seen.size(), 138u);  // each one once
  EXPECT_EQ(counts[Rule::kTpDividesModel], 1);
  EXPECT_EQ(counts[Rule::kLayersDividePp], 3);
  EXPECT_EQ(counts[Rule::kExpertsDivideEp], 16);
  EXPECT_EQ(counts[Rule::kExpertFfnDividesEtp], 0);  // 1024 is divisible by every ETP <= 16
}

// UnevenSplits by hand (ceil(L / PP) = c; the other stages take c or c + 1 layers each, the last
// the rest, which must be at least 1 and fewer than theirs; the first likewise with c):
//   27 layers, PP 2 (Moonlight, MS-04): c = 14: last 13; c + 1 = 15: last 12; first 13.
//   24 layers, PP 2 (Qwen1.5-MoE, MS-03): c = 12 leaves 12 (not lighter); 13: last 11; first none.
//   61 layers, PP 8 (DeepSeek-V3): c = 8: 61 - 7 x 8 = 5 last; 9: 61 - 63 < 1; first 5.
//   4 layers, PP 4: one layer a stage, no lighter stage.
TEST(LayoutSpace, UnevenSplitsByHand) {
  auto pairs = [](const std::vector<StageSplit>& v) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const StageSplit& s : v) out.emplace_back(s.first, s.last);
    return out;
  };
  using P = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(pairs(UnevenSplits(27, 2)), (P{{0, 13}, {0, 12}, {13, 0}}));
  EXPECT_EQ(pairs(UnevenSplits(24, 2)), (P{{0, 11}}));
  EXPECT_EQ(pairs(UnevenSplits(61, 8)), (P{{0, 5}, {5, 0}}));
  EXPECT_TRUE(UnevenSplits(4, 4).empty());
  EXPECT_TRUE(UnevenSplits(24, 1).empty());
  // Every split is one the job validation accepts.
  for (const auto& [layers, pp] : P{{27, 2}, {24, 2}, {61, 8}, {40, 4}, {94, 16}}) {
    for (const StageSplit& s : UnevenSplits(layers, pp)) {
      ParallelLayout l;
      l.pp = pp;
      l.first_stage_layers = s.first;
      l.last_stage_layers = s.last;
      const std::vector<int64_t> counts = StageLayerCounts(l, layers);
      int64_t sum = 0;
      for (int64_t n : counts) {
        EXPECT_GE(n, 1) << layers << " on " << pp;
        sum += n;
      }
      EXPECT_EQ(sum, layers) << layers << " on " << pp;
    }
  }
}

// Sharding modes are the innermost choice: each layout once per mode, in the order given.
TEST(LayoutSpace, ShardingModesMultiplyTheSpace) {
  SearchSpace space = HandCountedSpace();
  space.sharding = {ShardingMode::kZero1, ShardingMode::kZero3};
  std::vector<ShardingMode> order;
  const PruneCounts counts = EnumerateLayouts(
      RulesOf(TinyMoe(), QueryGroupSplit::kMultipleOrDivisor), space, [&](const Candidate& c) {
        order.push_back(c.sharding);
        return true;
      });
  EXPECT_EQ(counts.valid, 2 * 138);  // HandCountedSixteenGpus' 138 layouts, twice
  ASSERT_EQ(order.size(), 276u);
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i], i % 2 == 0 ? ShardingMode::kZero1 : ShardingMode::kZero3) << i;
  }
}

// A framework that runs data parallelism only (DimensionSet all false, as HF Trainer + ZeRO-3):
// in HandCountedSpace the one layout left is TP1 PP1 CP1 EP1 ETP1 DP16. Each other value of a
// dimension is removed where it is met, by the framework rule before the model's rules:
//   TP 2, 4, 8, 16 (4); at TP 1, PP 2, 4, 8, 16 (4); CP and VPP are fixed at 1 (VPP 2 and 4
//   count under --fix); at PP 1, EP 2, 4, 8, 16 of the 16 expert ranks (4); at EP 1, ETP 2, 4,
//   8, 16 (4): 16 removals.
TEST(LayoutSpace, AFrameworkThatRunsOnlyDataParallelism) {
  SearchSpace space = HandCountedSpace();
  space.sharding = {ShardingMode::kZero3};
  space.mode_dimensions = {DimensionSet{false, false, false, false, false, false}};
  std::vector<Candidate> seen;
  const PruneCounts counts = EnumerateLayouts(
      RulesOf(TinyMoe(), QueryGroupSplit::kMultipleOrDivisor), space, [&](const Candidate& c) {
        seen.push_back(c);
        return true;
      });
  EXPECT_EQ(counts.valid, 1);
  EXPECT_EQ(counts[Rule::kFrameworkCannotRun], 16);
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0].layout.dp, 16);
  EXPECT_EQ(seen[0].sharding, ShardingMode::kZero3);
}

// Two modes with different reach (--sharding any on an ms-swift job: zero1 through
// megatron-core, every dimension; zero3 through the HF Trainer, DP only): zero1 keeps
// HandCountedSixteenGpus' 138 layouts, zero3 the one DP-only layout: 139. The other 137 zero3
// candidates are removed one by one.
TEST(LayoutSpace, EachShardingModeKeepsWhatItsFrameworkRuns) {
  SearchSpace space = HandCountedSpace();
  space.sharding = {ShardingMode::kZero1, ShardingMode::kZero3};
  space.mode_dimensions = {DimensionSet{}, DimensionSet{false, false, false, false, false, false}};
  int64_t zero3 = 0;
  const PruneCounts counts = EnumerateLayouts(
      RulesOf(TinyMoe(), QueryGroupSplit::kMultipleOrDivisor), space, [&](const Candidate& c) {
        if (c.sharding != ShardingMode::kZero3) return true;
        ++zero3;
        EXPECT_EQ(c.layout.dp, 16);
        return true;
      });
  EXPECT_EQ(counts.valid, 139);
  EXPECT_EQ(zero3, 1);
  EXPECT_EQ(counts[Rule::kFrameworkCannotRun], 137);
}

// The KV-head split is the mode's engine's: with 2 KV heads, TP 4 and 8 run only under the
// megatron-core mode; the whole-head mode (same dimensions otherwise) keeps TP 1 and 2.
TEST(LayoutSpace, EachShardingModeSplitsKvHeadsAsItsEngine) {
  SearchSpace space = HandCountedSpace();
  space.sharding = {ShardingMode::kZero1, ShardingMode::kFsdp2};
  DimensionSet whole_heads;
  whole_heads.query_groups = QueryGroupSplit::kTpDivides;
  space.mode_dimensions = {DimensionSet{}, whole_heads};
  std::set<int64_t> zero1_tp, fsdp2_tp;
  EnumerateLayouts(RulesOf(TinyGqaMoe(), QueryGroupSplit::kTpDivides), space,
                   [&](const Candidate& c) {
                     (c.sharding == ShardingMode::kZero1 ? zero1_tp : fsdp2_tp).insert(c.layout.tp);
                     return true;
                   });
  EXPECT_EQ(zero1_tp, (std::set<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(fsdp2_tp, (std::set<int64_t>{1, 2}));
}

TEST(LayoutSpace, StopsWhenTheVisitorSaysSo) {
  SearchSpace space;
  space.world = 16;
  space.global_batch = 16;
  space.max_tokens = 4096;
  int visited = 0;
  const PruneCounts counts =
      EnumerateLayouts(RulesOf(TinyMoe(), QueryGroupSplit::kMultipleOrDivisor), space,
                       [&](const Candidate&) { return ++visited < 5; });
  EXPECT_EQ(visited, 5);
  EXPECT_EQ(counts.valid, 5);
}

TEST(LayoutSpace, FixedValuesAreRespected) {
  SearchSpace space;
  space.world = 16;
  space.global_batch = 32;
  space.max_tokens = 4096;
  space.fixed.tp = 2;
  space.fixed.ep = 4;
  int64_t n = 0;
  EnumerateLayouts(RulesOf(TinyMoe(), QueryGroupSplit::kMultipleOrDivisor), space,
                   [&](const Candidate& c) {
                     EXPECT_EQ(c.layout.tp, 2);
                     EXPECT_EQ(c.layout.ep, 4);
                     ++n;
                     return true;
                   });
  EXPECT_GT(n, 0);
}

// The enumerator's integer rules and the job validation's rules must agree on every layout of a
// grid: a layout is enumerated exactly when the validation accepts it.
class LayoutSpaceAgreement : public ::testing::TestWithParam<std::tuple<bool, QueryGroupSplit>> {};

TEST_P(LayoutSpaceAgreement, AgreesWithJobValidation) {
  const auto [gqa, split] = GetParam();
  const ModelConfig model = gqa ? TinyGqaMoe() : TinyMoe();
  SearchSpace space;
  space.world = 16;
  space.global_batch = 16;
  space.max_tokens = 4096;
  space.recompute = {RecomputeGranularity::kNone};
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>> enumerated;
  EnumerateLayouts(RulesOf(model, split), space, [&](const Candidate& c) {
    const ParallelLayout& l = c.layout;
    enumerated.insert({l.tp, l.pp, l.vpp, l.cp, l.ep, l.etp, c.micro_batch});
    return true;
  });
  int checked = 0, accepted = 0;
  for (int64_t tp : {1, 2, 3, 4, 8, 16}) {
    for (int64_t pp : {1, 2, 4, 8}) {
      for (int64_t vpp : {1, 2, 4}) {
        for (int64_t cp : {1, 2, 4}) {
          for (int64_t ep : {1, 2, 4, 8}) {
            for (int64_t etp : {1, 2, 4}) {
              for (int64_t mb : {1, 2, 3}) {
                JobSpec job;
                job.cluster.gpu = "H100-SXM";
                job.cluster.gpus_per_node = 8;
                job.cluster.nodes = 2;
                job.layout = ParallelLayout{tp, pp, vpp, cp, ep, etp, 0, tp > 1};
                job.micro_batch = mb;
                job.global_batch = 16;
                job.sequence.max_tokens = 4096;
                const bool valid = CheckLayoutArithmetic(job).ok() &&
                                   CheckLayoutAgainstModel(job, model, split).ok();
                const bool listed = enumerated.count({tp, pp, vpp, cp, ep, etp, mb}) > 0;
                EXPECT_EQ(valid, listed) << "TP" << tp << " PP" << pp << " VPP" << vpp << " CP"
                                         << cp << " EP" << ep << " ETP" << etp << " MB" << mb;
                ++checked;
                accepted += valid;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 6 * 4 * 3 * 3 * 4 * 3 * 3);
  EXPECT_GT(accepted, 50);  // the grid exercises both answers
}

INSTANTIATE_TEST_SUITE_P(
    ModelsAndSplits, LayoutSpaceAgreement,
    ::testing::Combine(::testing::Bool(), ::testing::Values(QueryGroupSplit::kTpDivides,
                                                            QueryGroupSplit::kMultipleOrDivisor)));

// The KV-head rule alone, as megatron-core's TransformerConfig.__post_init__ states it
// (num_query_groups a multiple or divisor of tensor_model_parallel_size) and as whole-head
// engines need it (TP divides the groups).
TEST(LayoutSpace, QueryGroupRule) {
  struct Case {
    int64_t tp, groups;
    bool megatron, whole_heads;
  };
  const Case cases[] = {
      {1, 4, true, true},   {2, 4, true, true}, {4, 4, true, true},
      {8, 4, true, false},   // 8 = 2 x 4: one KV head per rank, shared by 2 ranks
      {16, 4, true, false},  // 16 = 4 x 4
      {3, 4, false, false},  // neither a multiple nor a divisor
      {6, 4, false, false},  // 6 > 4 but not a multiple of 4
      {8, 0, true, true},    // no softmax attention: no rule
  };
  for (const Case& c : cases) {
    EXPECT_EQ(TpFitsQueryGroups(c.tp, c.groups, QueryGroupSplit::kMultipleOrDivisor), c.megatron)
        << "TP" << c.tp << " groups " << c.groups;
    EXPECT_EQ(TpFitsQueryGroups(c.tp, c.groups, QueryGroupSplit::kTpDivides), c.whole_heads)
        << "TP" << c.tp << " groups " << c.groups;
  }
}

}  // namespace
}  // namespace strata::plan

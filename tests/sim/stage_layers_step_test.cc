// The step prices the critical pipeline stage by its own layers (issue 27): a DeepSeek-style
// layout (first_k_dense dense layers, MoE after) and a hybrid whose layer kinds alternate
// (Gated DeltaNet and full attention) put different layers on each stage, so neither the
// stage's compute nor its per-layer collectives are its share of an average layer.
#include <gtest/gtest.h>

#include "sim/step_test_support.h"
#include "strata/job/resolved_job.h"
#include "strata/sim/step_model.h"

namespace strata::stage_layers_step_test {
namespace {

struct Evaluated {
  StepSetup setup;
  StepResult r;
  MicroBatchCompute whole;  // the same tables and layout at PP 1: every layer on one stage
};

Evaluated Evaluate(const std::string& name, const std::vector<std::string>& sets = {}) {
  Evaluated out;
  auto spec = LoadJobSpec(name, sets);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().Format());
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
  auto setup = PrepareStep(*job);
  EXPECT_TRUE(setup.ok()) << (setup.ok() ? "" : setup.error().Format());
  out.setup = *setup;
  std::optional<StepResult> r = testing::EvaluateJobStep(*job);
  EXPECT_TRUE(r.has_value());
  if (r) out.r = *r;
  StepLayout one = out.setup.layout;
  one.layout.pp = 1;
  one.layout.vpp = 1;
  one.layout.pipeline_layout = nullptr;
  out.whole = ComputeMicroBatch(out.setup.tables, one);
  return out;
}

const PricedTraffic* Find(const StepResult& r, GroupKind group, CollectiveOp op) {
  for (const PricedTraffic& p : r.traffic) {
    if (p.item.group == group && p.item.op == op) return &p;
  }
  return nullptr;
}

// data/jobs/deepseek-v3-pp16-vpp2-layout-h800x1024.yaml, layout "Et*3|(tt|)*29,m|L": rank 0
// holds 3 dense + 2 MoE layers and the embedding, ranks 1-13 4 MoE layers each, rank 14 2 MoE
// and the MTP block, rank 15 2 MoE and the output layer (stage_composition_test.cc).
// EP all-to-all per MoE layer and micro batch: dispatch + combine (2) x (forward, backward,
// full recompute's forward again: 3 passes) = 6 calls; 64 micro batches (4,096 / DP 64).
// Rank 0: 2 x 6 x 64 = 768 calls; ranks 1-13: 4 x 6 x 64 = 1,536; ranks 14, 15: 768. Rank 0
// has the most compute (5 layers against 4), but each all-to-all crosses 8 nodes at ~9.6 ms
// (x 1.15 for the busiest EP rank) with overlap.moe_a2a off: 768 more calls are ~8.5 s more a
// step than rank 0's one extra layer of compute, so ranks 1-13 set the pace. Before, every
// stage ran 58 / 16 = 3.625 MoE layers: 6 x 3.625 x 64 = 1,392 calls, on the 5-layer rank 0.
TEST(StageLayersStep, DeepSeekV3LayoutPricesTheMoeRanks) {
  const Evaluated e = Evaluate("deepseek-v3-pp16-vpp2-layout-h800x1024");
  const StageShare& critical = e.r.critical_stage;
  EXPECT_TRUE(critical.own);
  EXPECT_EQ(critical.composition.rank, 1);
  EXPECT_EQ(critical.composition.moe_layers, 4);
  EXPECT_EQ(critical.composition.layers, 4);
  EXPECT_FALSE(critical.last);
  const PricedTraffic* a2a = Find(e.r, GroupKind::kEp, CollectiveOp::kAllToAll);
  ASSERT_NE(a2a, nullptr);
  EXPECT_DOUBLE_EQ(a2a->item.calls_per_step, 1536);
  // Its routed-expert GEMMs are 4 of the 58 MoE layers' (before: 5 / 61 of the stack, 4.75
  // MoE layers' worth), and it runs no dense MLP (before: 0.25 of a dense layer's). At PP 1 the
  // one stage also holds the MTP block, whose layer is MoE: 4 of 59 MoE layers' GEMMs.
  EXPECT_NEAR(e.r.forward.expert_gemm.s() / e.whole.forward.expert_gemm.s(), 4.0 / 59.0, 1e-12);
  for (const GemmTerm& g : e.r.gemms) EXPECT_NE(g.width, 18432.0) << "a dense MLP on rank 1";
  // Every stage was priced; rank 0 (more compute, half the all-to-alls) is not the slowest.
  ASSERT_EQ(e.r.stage_times.size(), 4u);  // ranks 15, 0, 1, 14: the distinct compositions
  for (const StepResult::StageTime& s : e.r.stage_times) {
    EXPECT_LE(s.micro_batch.s(), e.r.micro_batch.s()) << s.stage.rank;
  }
}

// Rank 0 of the same layout, priced by itself: all 3 dense layers' MLP FLOP and 2 of the 58
// MoE layers' routed-expert FLOP (before: 5 / 61 of each, 0.25 and 4.75 layers' worth); its
// framework counts are its own (5 layers, 2 of them MoE: the host costs' MoE share 0.4, not
// the model's 58 / 61 = 0.95).
TEST(StageLayersStep, DeepSeekV3FirstStageHoldsTheDenseLayers) {
  const Evaluated e = Evaluate("deepseek-v3-pp16-vpp2-layout-h800x1024");
  const StepTables& t = e.setup.tables;
  const std::vector<StageComposition> stages =
      StageCompositions(e.setup.layout.layout, t.layer_kinds, t.mtp_layers);
  const StepTables rank0 = StageTables(t, stages[0]);
  auto flop = [](const StepTables& tables, ModuleKind module) {
    double sum = 0;
    for (const GemmGroup& g : tables.gemms)
      if (g.module == module) sum += g.flop_per_token;
    return sum;
  };
  EXPECT_NEAR(flop(rank0, ModuleKind::kDenseMlp) / flop(t, ModuleKind::kDenseMlp), 1.0, 1e-12);
  EXPECT_NEAR(flop(rank0, ModuleKind::kRoutedExperts) / flop(t, ModuleKind::kRoutedExperts),
              2.0 / 58.0, 1e-12);
  EXPECT_DOUBLE_EQ(flop(rank0, ModuleKind::kHead), 0.0);  // the output layer is on rank 15
  EXPECT_DOUBLE_EQ(rank0.framework_counts.layers, 5);
  EXPECT_DOUBLE_EQ(rank0.framework_counts.moe_layers, 2);
  // Full-span attention is the same in every layer: 5 of the 61 layers' FLOP.
  EXPECT_NEAR(rank0.attention_flop_per_token / t.attention_flop_per_token, 5.0 / 61.0, 1e-12);
}

// Qwen3.6-35B-A3B at PP 4 (10 layers a rank): rank 3 holds full-attention layers 31, 35, 39
// and Gated DeltaNet layers 30, 32-34, 36-38, with the output layer; rank 1 the same mix
// without it; ranks 0 and 2 two full-attention layers each. At ~29K tokens a full-attention
// layer costs more than a Gated DeltaNet one, and the output layer (248K vocabulary) adds to
// rank 3: rank 3 is critical. Its flash attention is 3 of the 10 full layers' (before: 10 / 40
// of the stack, 2.5 layers' worth), its Gated DeltaNet 7 of the 30 (before 7.5). (CP, whose
// K/V exchange would count its full-attention layers, is refused for this model's Gated
// DeltaNet by its frameworks.)
TEST(StageLayersStep, HybridStagePricesItsOwnFullAttentionLayers) {
  const Evaluated e =
      Evaluate("qwen3.6-35b-a3b-sft-h20x40", {"parallel.pp=4", "parallel.dp=10", "parallel.ep=2"});
  const StageShare& critical = e.r.critical_stage;
  EXPECT_TRUE(critical.own);
  EXPECT_EQ(critical.composition.rank, 3);
  EXPECT_TRUE(critical.last);
  EXPECT_NEAR(e.r.forward.attention.s() / e.whole.forward.attention.s(), 3.0 / 10.0, 1e-12);
  EXPECT_NEAR(e.r.forward.gated_deltanet.s() / e.whole.forward.gated_deltanet.s(), 7.0 / 30.0,
              1e-12);
  // Every stage was priced, rank 1 (the same layers, no output layer) below rank 3.
  ASSERT_EQ(e.r.stage_times.size(), 4u);
  for (const StepResult::StageTime& s : e.r.stage_times) {
    EXPECT_LE(s.micro_batch.s(), e.r.micro_batch.s()) << s.stage.rank;
  }
}

// At PP 1 the one stage holds every layer: the whole model's tables, nothing rebuilt.
TEST(StageLayersStep, OneStageKeepsTheWholeTables) {
  const Evaluated e = Evaluate("qwen3.6-35b-a3b-sft-h20x40");
  EXPECT_FALSE(e.r.critical_stage.own);
  EXPECT_DOUBLE_EQ(e.r.forward.attention.s(), e.whole.forward.attention.s());
  EXPECT_DOUBLE_EQ(e.r.forward.expert_gemm.s(), e.whole.forward.expert_gemm.s());
}

}  // namespace
}  // namespace strata::stage_layers_step_test

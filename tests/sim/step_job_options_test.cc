// The job options the step model honours: moe.routing_imbalance, recompute.modules and frozen:,
// each against a value derived by hand in the comment above it.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/sim/step_model.h"

namespace strata::step_job_options_test {
namespace {

using testing::LoadReferenceStep;

// The skew row is (imbalance - 1) x the routed experts' GEMM time of the three passes, for each
// of the m micro batches, and only where EP > 1 spreads the experts over ranks:
//   the reference job (EP8), moe.routing_imbalance not given: the file's assumed 1.15 -> 0.15
//   routing_imbalance 1 (forced balance):                                              -> 0
//   routing_imbalance 1.5:                                                             -> 0.5
//   EP1: every rank holds every expert and routes its own tokens, no busiest rank      -> 0
TEST(StepJobOptions, RoutingImbalanceSetsTheSkewRow) {
  struct Case {
    std::vector<std::string> sets;
    double expected_skew_share;
  };
  const Case cases[] = {
      {{}, 0.15},
      {{"moe.routing_imbalance=1"}, 0.0},
      {{"moe.routing_imbalance=1.5"}, 0.5},
      {{"parallel.ep=1"}, 0.0},
  };
  for (const Case& c : cases) {
    const std::string name = c.sets.empty() ? "default" : c.sets[0];
    auto ref = LoadReferenceStep(c.sets);
    auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
    ASSERT_TRUE(r.ok()) << name << ": " << r.error().Format();
    const double m = static_cast<double>(ref.setup.layout.micro_batches);
    const double experts =
        m * (r->forward.expert_gemm + r->backward.expert_gemm + r->recompute.expert_gemm).value();
    ASSERT_GT(experts, 0) << name;
    EXPECT_NEAR(r->parts[static_cast<size_t>(StepPart::kMoeImbalance)].total.s() / experts,
                c.expected_skew_share, 1e-12)
        << name;
  }
}

// The EP all-to-all ends when the busiest rank has received its dispatched tokens and returned
// their outputs: the step's EP row is the mean rank's priced traffic x the same skew. On the
// reference job (EP8, no overlap): imbalance 1 -> the traffic as priced, 1.5 -> 1.5 x it, and
// the default 1.15 -> 1.15 x it. It failed before: the row was the mean rank's traffic whatever
// the skew.
TEST(StepJobOptions, RoutingImbalanceStretchesTheAllToAll) {
  for (const auto& [set, skew] : {std::pair<std::string, double>{"moe.routing_imbalance=1", 1.0},
                                  {"moe.routing_imbalance=1.5", 1.5},
                                  {"", 1.15}}) {
    std::vector<std::string> sets;
    if (!set.empty()) sets.push_back(set);
    auto ref = LoadReferenceStep(sets);
    auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
    ASSERT_TRUE(r.ok()) << set << ": " << r.error().Format();
    double priced = 0;
    for (const PricedTraffic& p : r->traffic) {
      if (p.item.group == GroupKind::kEp) priced += p.time_per_step.s();
    }
    ASSERT_GT(priced, 0) << set;
    const StepPartTime& ep = r->parts[static_cast<size_t>(StepPart::kEp)];
    EXPECT_NEAR(ep.total.s(), skew * priced, 1e-12 * priced) << set;
    EXPECT_NEAR(ep.exposed.s(), ep.total.s(), 1e-12 * priced) << set;  // no overlap: all exposed
  }
}

// Llama 3.1 8B (config.json: hidden 4096, 32 layers, 32 query heads and 8 K/V heads of 128,
// SwiGLU 14,336) on one GPU, one 4,096-token sample, on a made-up part: 1e15 FLOP/s, 1e12 B/s
// of HBM, every GEMM at 0.5 of peak (half_dim 1e-6: no shape penalty), HBM at 0.5. Per token:
//   MLP GEMMs     2 x 3 x 4096 x 14336 x 32 layers         = 11,274,289,152 FLOP
//                 x 4096 tokens / 5e14 FLOP/s             = 92.3590 ms
//   projections   2 x 4096 x (4096 + 1024 + 1024 + 4096) x 32 = 2,684,354,560 FLOP
//                 x 4096 / 5e14                           = 21.9902 ms
//   MLP SwiGLU    read 2 x 14336, write 14336, 2 B, 32 layers = 2,752,512 B
//                 x 4096 / 5e11 B/s                       = 22.5486 ms
//   two norms     (read 4096, write 4096) x 2 B x 2 x 32  = 1,048,576 B x 4096 / 5e11 = 8.5899 ms
struct SmallDense {
  ModelConfig model;
  GpuSpec gpu;
  KernelEfficiencyFile efficiency;
  StepTables tables;
  StepLayout layout;
};

SmallDense MakeSmallDense() {
  SmallDense d;
  auto model = LoadModelConfig("llama-3.1-8b");
  EXPECT_TRUE(model.ok()) << model.error().Format();
  d.model = *model;
  auto gpu = FindGpu("H100 SXM");
  EXPECT_TRUE(gpu.ok());
  d.gpu = *gpu;
  d.gpu.bf16_dense = FlopPerSecond::Peta(1);
  d.gpu.hbm_bandwidth = BytesPerSecond::TBps(1);
  KernelEfficiency& e = d.efficiency.defaults;
  e.gemm_large = 0.5;
  e.gemm_half_dim = 1e-6;
  e.grouped_gemm_factor = 1;
  e.attention_forward = e.attention_backward = 0.5;
  e.attention_half_seq = 1e-6;
  e.gated_deltanet.fla = {0.5, 0.5};
  e.gated_deltanet.other_linear_mixers = 0.5;
  e.hbm_efficiency = 0.5;
  StepTableInputs in;
  in.model = &d.model;
  in.sequence = SequenceLengths::Fixed(4096);
  in.gpu = &d.gpu;
  in.efficiency = &d.efficiency;
  d.tables = BuildStepTables(in);
  d.layout.recompute = RecomputeGranularity::kSelective;
  return d;
}

TEST(StepJobOptions, RecomputeModulesReRunOnlyTheNamedModules) {
  const SmallDense d = MakeSmallDense();
  struct Case {
    const char* name;
    RecomputeModules modules;
    double dense_gemm_ms;
    double memory_bound_ms;
    bool attention;
  };
  RecomputeModules core_attn;  // megatron-core's default
  RecomputeModules mlp;
  mlp.core_attn = false;
  mlp.mlp = true;
  RecomputeModules layernorm;
  layernorm.core_attn = false;
  layernorm.layernorm = true;
  RecomputeModules both = mlp;
  both.core_attn = true;
  const Case cases[] = {
      {"core_attn", core_attn, 0.0, 0.0, true},
      {"mlp", mlp, 92.3590, 22.5486, false},
      {"layernorm", layernorm, 0.0, 8.5899, false},
      {"core_attn + mlp", both, 92.3590, 22.5486, true},
  };
  for (const Case& c : cases) {
    StepLayout layout = d.layout;
    layout.recompute_modules = c.modules;
    const MicroBatchCompute r = ComputeMicroBatch(d.tables, layout);
    EXPECT_NEAR(r.recompute.dense_gemm.ms(), c.dense_gemm_ms, 1e-3) << c.name;
    EXPECT_NEAR(r.recompute.memory_bound.ms(), c.memory_bound_ms, 1e-3) << c.name;
    EXPECT_NEAR(r.recompute.attention.ms(), c.attention ? r.forward.attention.ms() : 0.0, 1e-9)
        << c.name;
    EXPECT_GT(r.forward.attention.ms(), 0) << c.name;
  }
}

// A frozen module's backward has its data gradient (the forward's FLOP) but no weight gradient:
//   nothing frozen: 2 x (21.9902 + 92.3590) = 228.6984 ms of dense GEMMs in backward
//   dense_mlp frozen: 2 x 21.9902 + 92.3590 = 136.3394 ms
//   attention frozen: 21.9902 + 2 x 92.3590 = 206.7082 ms
TEST(StepJobOptions, FrozenModulesHaveNoWeightGradientGemms) {
  const SmallDense d = MakeSmallDense();
  struct Case {
    const char* name;
    std::vector<ModuleKind> frozen;
    double backward_dense_ms;
  };
  const Case cases[] = {
      {"none", {}, 228.6984},
      {"dense_mlp", {ModuleKind::kDenseMlp}, 136.3394},
      {"attention", {ModuleKind::kAttention}, 206.7082},
  };
  for (const Case& c : cases) {
    StepLayout layout = d.layout;
    for (ModuleKind k : c.frozen) layout.frozen[static_cast<size_t>(k)] = true;
    const MicroBatchCompute r = ComputeMicroBatch(d.tables, layout);
    EXPECT_NEAR(r.backward.dense_gemm.ms(), c.backward_dense_ms, 1e-3) << c.name;
  }
}

// The job's `frozen:` list reaches the step: the reference job with its routed experts frozen
// runs their backward at the forward's GEMM time (data gradient only), not twice it.
TEST(StepJobOptions, FrozenListOfTheJobReachesTheStep) {
  auto ref = LoadReferenceStep({"frozen=[routed_experts]"});
  const MicroBatchCompute r = ComputeMicroBatch(ref.setup.tables, ref.setup.layout);
  EXPECT_NEAR(r.backward.expert_gemm / r.forward.expert_gemm, 1.0, 1e-12);
  auto trained = LoadReferenceStep();
  const MicroBatchCompute t = ComputeMicroBatch(trained.setup.tables, trained.setup.layout);
  EXPECT_NEAR(t.backward.expert_gemm / t.forward.expert_gemm, 2.0, 1e-12);
}

// How the routed experts run is printed for models that have them: the reference job (256
// experts) says so; the same job on a dense model (Llama 3.1 8B, EP 1) has no experts and no such
// line (it printed "MoE experts: one grouped GEMM" for every dense job).
TEST(StepJobOptions, TheExpertsLineIsPrintedForMoeModelsOnly) {
  auto has_experts_line = [](const std::vector<std::string>& lines) {
    for (const std::string& a : lines) {
      if (a.starts_with("MoE experts:")) return true;
    }
    return false;
  };
  EXPECT_TRUE(has_experts_line(LoadReferenceStep().setup.tables.framework.assumptions));
  const auto dense = LoadReferenceStep({"model=llama-3.1-8b", "parallel.ep=1"});
  EXPECT_FALSE(dense.setup.tables.framework.assumptions.empty());
  EXPECT_FALSE(has_experts_line(dense.setup.tables.framework.assumptions));
}

// moe.grouped_gemm takes true or false; anything else is refused naming the field, and the
// moe section no longer needs routing_imbalance beside it.
TEST(StepJobOptions, GroupedGemmIsABoolean) {
  JobRequest bad;
  bad.overrides = {"moe.grouped_gemm=maybe"};
  auto job = ResolveJob(bad);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().Format().find("grouped_gemm"), std::string::npos) << job.error().Format();
  JobRequest good;
  good.overrides = {"moe.grouped_gemm=false"};
  auto ok = ResolveJob(good);
  ASSERT_TRUE(ok.ok()) << ok.error().Format();
  EXPECT_EQ(ok->spec.moe_grouped_gemm, std::optional<bool>(false));
}

}  // namespace
}  // namespace strata::step_job_options_test

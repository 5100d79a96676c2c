// The planner's search is exhaustive: how many candidate layouts per second the enumeration
// (the integer layout rules, before any memory or step-time evaluation) produces, for three sizes
// of search: the reference job (35B MoE, 40 GPUs), Llama-3.1-70B on 1,024 GPUs and DeepSeek-V3
// (671B MoE) on 16,384 GPUs. Reported as items_per_second = layouts per second.
//
// BM_Plan* run the whole search end to end, as `strata plan` does after reading its files, on
// the same three sizes (the reference job on its 40 H20; Llama-3.1-70B on 1,024 H100 and
// DeepSeek-V3 on 16,384 H100, both on nodes of data/clusters/h100-8x8-ib400.yaml) and on
// Llama-3.1-70B on 64 H100. Every valid layout is bounded by its compute and evaluated in full
// when the bound could rank it before where the walk stops (plan/time_order.h); the fastest are
// checked with the memory ledger until the top 5 that fit (and the job's own rank) are known.
// items_per_second = valid layouts ranked per second; the counters give per search the layouts,
// the full step evaluations and the ledger evaluations. BM_*_Slow run PlanLayoutsReference (every
// layout evaluated in full, every walked layout through the ledger) for comparison.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "strata/hw/interconnects.h"
#include "strata/memory/memory_constants.h"
#include "strata/model/model_config.h"
#include "strata/plan/layout_space.h"
#include "strata/plan/planner.h"
#include "strata/sim/step_job.h"

namespace {

strata::plan::ModelRules RulesOrDie(const std::string& name) {
  auto model = strata::LoadModelConfig(name);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.error().Format().c_str());
    std::exit(2);
  }
  return strata::plan::RulesOf(*model, strata::QueryGroupSplit::kMultipleOrDivisor);
}

void Enumerate(benchmark::State& state, const std::string& model, int64_t world,
               int64_t global_batch, int64_t max_tokens) {
  const strata::plan::ModelRules rules = RulesOrDie(model);
  strata::plan::SearchSpace space;
  space.world = world;
  space.global_batch = global_batch;
  space.max_tokens = max_tokens;
  int64_t layouts = 0;
  for (auto _ : state) {
    int64_t sum = 0;
    const auto counts = strata::plan::EnumerateLayouts(rules, space, [&](const auto& c) {
      sum += c.layout.tp + c.micro_batch;  // touch the candidate so nothing is optimised away
      return true;
    });
    benchmark::DoNotOptimize(sum);
    layouts += counts.valid;
  }
  state.SetItemsProcessed(layouts);
  state.counters["layouts"] =
      static_cast<double>(layouts) / static_cast<double>(state.iterations());
}

void BM_EnumerateReference40(benchmark::State& state) {
  Enumerate(state, "qwen3.6-35b-a3b", 40, 80, 49152);
}
void BM_EnumerateLlama70b1024(benchmark::State& state) {
  Enumerate(state, "llama-3.1-70b", 1024, 1024, 8192);
}
void BM_EnumerateDeepseekV3_16384(benchmark::State& state) {
  Enumerate(state, "deepseek-v3", 16384, 16384, 4096);
}

template <class T>
T OrDie(strata::Result<T> r) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.error().Format().c_str());
    std::exit(2);
  }
  return std::move(r).value();
}

using PlanFn = strata::Result<strata::plan::PlanResult> (*)(const strata::StepSetup&,
                                                            const strata::CollectiveModel&,
                                                            const strata::MemoryConstants&,
                                                            const strata::plan::PlanOptions&);

/// The whole planner on a data/jobs/ job (with --set overrides, on `nodes` nodes of its cluster
/// when not 0, as `strata plan --nodes`), files read once outside the loop. `plan` is the fast
/// search (PlanLayouts) or the reference that evaluates every layout in full.
void Plan(benchmark::State& state, const std::vector<std::string>& sets, int64_t nodes,
          PlanFn plan_fn) {
  const auto spec = OrDie(strata::LoadJobSpec(strata::kReferenceJobName, sets));
  auto job = OrDie(strata::ResolveJob(spec));
  if (nodes > 0) {
    const strata::Status resized = strata::plan::ResizeJob(job, nodes);
    if (!resized.ok()) {
      std::fprintf(stderr, "%s\n", resized.error().Format().c_str());
      std::exit(2);
    }
  }
  const auto setup = OrDie(strata::PrepareStep(job));
  const auto links = OrDie(strata::LoadInterconnects());
  const auto comm = OrDie(strata::CollectiveModel::Create(setup.job.cluster, links));
  const auto memory = OrDie(strata::LoadMemoryConstants());
  strata::plan::PlanOptions options;
  int64_t layouts = 0, ledgers = 0, evaluations = 0;
  for (auto _ : state) {
    const auto plan = OrDie(plan_fn(setup, comm, memory, options));
    benchmark::DoNotOptimize(plan.top.data());
    layouts += plan.rules.valid;
    ledgers += plan.ledger_evaluations + 1;  // + the job's own layout
    evaluations += plan.step_evaluations;
  }
  state.SetItemsProcessed(layouts);
  const auto n = static_cast<double>(state.iterations());
  state.counters["layouts"] = static_cast<double>(layouts) / n;
  state.counters["ledgers"] = static_cast<double>(ledgers) / n;
  state.counters["full_evals"] = static_cast<double>(evaluations) / n;
}

// The reference job: Qwen3.6-35B-A3B on 40 H20.
const std::vector<std::string> reference_sets = {};
// Llama-3.1-70B on the 64 H100 of data/clusters/h100-8x8-ib400.yaml, 8K sequences, batch 512.
const std::vector<std::string> llama70b64_sets = {"model=llama-3.1-70b",
                                                  "cluster=h100-8x8-ib400",
                                                  "parallel.ep=1",
                                                  "parallel.tp=8",
                                                  "parallel.dp=8",
                                                  "batch.global_batch=512",
                                                  "sequence.max_tokens=8192",
                                                  "sequence.mean_tokens=8192"};
// The enumeration benchmarks' two larger searches, end to end: Llama-3.1-70B on 1,024 H100
// (128 nodes of that cluster), batch 1,024 of 8K; DeepSeek-V3 (671B MoE) on 16,384 H100 (2,048
// nodes), batch 16,384 of 4K, its own layout EP64 with full recompute.
const std::vector<std::string> llama70b1024_sets = {"model=llama-3.1-70b",
                                                    "cluster=h100-8x8-ib400",
                                                    "parallel.ep=1",
                                                    "parallel.tp=8",
                                                    "parallel.dp=8",
                                                    "batch.global_batch=1024",
                                                    "sequence.max_tokens=8192",
                                                    "sequence.mean_tokens=8192"};
const std::vector<std::string> deepseek_v3_16384_sets = {
    "model=deepseek-v3",        "cluster=h100-8x8-ib400",
    "parallel.ep=64",           "parallel.tp=1",
    "parallel.dp=64",           "batch.global_batch=16384",
    "sequence.max_tokens=4096", "sequence.mean_tokens=4096"};

void BM_PlanReference40(benchmark::State& state) {
  Plan(state, reference_sets, 0, strata::plan::PlanLayouts);
}
void BM_PlanLlama70b64(benchmark::State& state) {
  Plan(state, llama70b64_sets, 0, strata::plan::PlanLayouts);
}
void BM_PlanLlama70b1024(benchmark::State& state) {
  Plan(state, llama70b1024_sets, 128, strata::plan::PlanLayouts);
}
void BM_PlanDeepseekV3_16384(benchmark::State& state) {
  Plan(state, deepseek_v3_16384_sets, 2048, strata::plan::PlanLayouts);
}
// The reference search (every layout evaluated in full), for comparison.
void BM_PlanReference40_Slow(benchmark::State& state) {
  Plan(state, reference_sets, 0, strata::plan::PlanLayoutsReference);
}
void BM_PlanLlama70b64_Slow(benchmark::State& state) {
  Plan(state, llama70b64_sets, 0, strata::plan::PlanLayoutsReference);
}
void BM_PlanLlama70b1024_Slow(benchmark::State& state) {
  Plan(state, llama70b1024_sets, 128, strata::plan::PlanLayoutsReference);
}

BENCHMARK(BM_PlanReference40)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlanLlama70b64)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlanLlama70b1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlanDeepseekV3_16384)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlanReference40_Slow)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlanLlama70b64_Slow)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlanLlama70b1024_Slow)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EnumerateReference40)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EnumerateLlama70b1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EnumerateDeepseekV3_16384)->Unit(benchmark::kMillisecond);

}  // namespace

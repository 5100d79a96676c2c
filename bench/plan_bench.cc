// The planner's search is exhaustive: how many candidate layouts per second the enumeration
// (the integer layout rules, before any memory or step-time evaluation) produces, for three sizes
// of search: the reference job (35B MoE, 40 GPUs), Llama-3.1-70B on 1,024 GPUs and DeepSeek-V3
// (671B MoE) on 16,384 GPUs. Reported as items_per_second = layouts per second.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>

#include "strata/model/model_config.h"
#include "strata/plan/layout_space.h"

namespace {

strata::plan::ModelRules RulesOrDie(const std::string& name) {
  auto model = strata::LoadModelConfig(name);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.error().Format().c_str());
    std::exit(2);
  }
  return strata::plan::RulesOf(*model);
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
  state.counters["layouts"] = static_cast<double>(layouts) / static_cast<double>(state.iterations());
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

BENCHMARK(BM_EnumerateReference40)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EnumerateLlama70b1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EnumerateDeepseekV3_16384)->Unit(benchmark::kMillisecond);

}  // namespace

// Generation's continuous-batching simulation per instance: n samples (the quantile lengths of
// a capped exponential), B slots, one decode roofline per interval between finishes. n reaches
// ~10^5 when few instances generate a large batch; the split search runs it once per candidate
// placement, so it must stay O(n log n): the time per sample should be flat across n.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "strata/rl/response_lengths.h"
#include "strata/rl/rollout.h"

namespace {

strata::GenerationInput Input(int64_t samples, int64_t slots) {
  strata::GenerationInput g;
  g.decode.dense_weights = strata::Bytes::GB(10);
  g.decode.expert_weights = strata::Bytes::GB(50);
  g.decode.experts = 128;
  g.decode.top_k = 8;
  g.decode.kv.full_per_token = strata::Bytes::Count(1e5);
  g.decode.flop_per_token = strata::FlopCount::Of(2e10);
  g.decode.hbm_bandwidth = strata::BytesPerSecond::Of(4e12);
  g.decode.peak = strata::FlopPerSecond::Peta(1);
  g.decode.step_overhead = strata::Seconds::Of(0.004);
  g.prompts = static_cast<double>(samples) / 8;
  g.samples = static_cast<double>(samples);
  g.prompt_mean = 1024;
  g.response =
      *strata::MakeResponseDistribution(strata::ResponseShape::kCappedExponential, 4096, 8192)
           .distribution;
  g.prefill_flop_per_token = strata::FlopCount::Of(2e10);
  g.concurrent_sequences = slots;
  return g;
}

void BM_Generation(benchmark::State& state) {
  const strata::GenerationInput g = Input(state.range(0), 256);
  for (auto _ : state) {
    benchmark::DoNotOptimize(strata::ComputeGeneration(g));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Generation)->RangeMultiplier(10)->Range(100, 100000);

}  // namespace

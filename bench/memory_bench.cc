// One memory-ledger evaluation (what the planner runs per candidate layout) should take
// microseconds: the reference job, a pipelined layout with interleaving (two stages evaluated),
// and the OOM advice, which re-evaluates the ledger once per candidate change. *_NumbersOnly:
// the planner's ledger (no items, no text) on statics computed once per layout, as the planner
// reuses them for a layout's micro batches and recompute choices.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "strata/memory/ledger.h"
#include "strata/memory/ledger_statics.h"
#include "strata/memory/oom_advice.h"

namespace {

strata::Job LoadOrDie(const std::vector<std::string>& sets) {
  auto spec = strata::LoadJobSpec(strata::kReferenceJobName, sets);
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", spec.error().Format().c_str());
    std::exit(2);
  }
  auto job = strata::ResolveJob(*spec);
  if (!job.ok()) {
    std::fprintf(stderr, "%s\n", job.error().Format().c_str());
    std::exit(2);
  }
  return *job;
}

strata::MemoryConstants ConstantsOrDie() {
  auto c = strata::LoadMemoryConstants();
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", c.error().Format().c_str());
    std::exit(2);
  }
  return *c;
}

void BM_LedgerReferenceJob(benchmark::State& state) {
  const strata::Job job = LoadOrDie({});
  const strata::MemoryConstants constants = ConstantsOrDie();
  for (auto _ : state) {
    benchmark::DoNotOptimize(strata::ComputeLedger(job, constants));
  }
}
BENCHMARK(BM_LedgerReferenceJob)->Unit(benchmark::kMicrosecond);

void BM_LedgerPipelined(benchmark::State& state) {
  const strata::Job job =
      LoadOrDie({"parallel.pp=4", "parallel.vpp=2", "parallel.ep=2", "batch.global_batch=80"});
  const strata::MemoryConstants constants = ConstantsOrDie();
  for (auto _ : state) {
    benchmark::DoNotOptimize(strata::ComputeLedger(job, constants));
  }
}
BENCHMARK(BM_LedgerPipelined)->Unit(benchmark::kMicrosecond);

void NumbersOnly(benchmark::State& state, const std::vector<std::string>& sets) {
  const strata::Job job = LoadOrDie(sets);
  const strata::MemoryConstants constants = ConstantsOrDie();
  const auto statics = strata::ComputeStageStatics(job, strata::CountParams(job.model),
                                                   strata::Detail::kNumbersOnly);
  strata::Bytes floor;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        strata::ComputeLedger(job, constants, statics, floor, strata::Detail::kNumbersOnly));
  }
}
void BM_LedgerReferenceJob_NumbersOnly(benchmark::State& state) { NumbersOnly(state, {}); }
BENCHMARK(BM_LedgerReferenceJob_NumbersOnly)->Unit(benchmark::kMicrosecond);
void BM_LedgerPipelined_NumbersOnly(benchmark::State& state) {
  NumbersOnly(state, {"parallel.pp=4", "parallel.vpp=2", "parallel.ep=2", "batch.global_batch=80"});
}
BENCHMARK(BM_LedgerPipelined_NumbersOnly)->Unit(benchmark::kMicrosecond);

void BM_OomAdvice(benchmark::State& state) {
  const strata::Job job = LoadOrDie({"precision.grads=fp32"});
  const strata::MemoryConstants constants = ConstantsOrDie();
  for (auto _ : state) {
    benchmark::DoNotOptimize(strata::SuggestMemoryFixes(job, constants));
  }
}
BENCHMARK(BM_OomAdvice)->Unit(benchmark::kMicrosecond);

}  // namespace

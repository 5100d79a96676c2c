// One step-time evaluation, with the per-model tables built once beforehand, is what the planner
// runs per candidate layout: it must take microseconds. BM_StepTables shows the per-model work
// the planner pays once; BM_StepEvaluate* the per-layout arithmetic (placement, traffic,
// pricing on the bandwidth map, compute, overlap, bubble, stragglers, optimizer).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "strata/hw/interconnects.h"
#include "strata/sim/step_job.h"

namespace {

template <class T>
T OrDie(strata::Result<T> r) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.error().Format().c_str());
    std::exit(2);
  }
  return std::move(*r);
}

struct Reference {
  strata::StepSetup setup;
  strata::CollectiveModel comm;
};

const Reference& Ref() {
  static const Reference ref = [] {
    auto job = OrDie(strata::ResolveJob(strata::JobRequest{}));
    auto setup = OrDie(strata::PrepareStep(job));
    auto comm = OrDie(
        strata::CollectiveModel::Create(setup.job.cluster, OrDie(strata::LoadInterconnects())));
    return Reference{std::move(setup), std::move(comm)};
  }();
  return ref;
}

void BM_StepTables(benchmark::State& state) {
  const Reference& ref = Ref();
  strata::StepTableInputs in;
  in.model = &ref.setup.job.model;
  in.sequence = strata::SequenceLengths::MeanMax(29000, 49152);
  in.gpu = &ref.setup.job.gpu();
  in.efficiency = &ref.setup.efficiency;
  for (auto _ : state) benchmark::DoNotOptimize(strata::BuildStepTables(in));
}
BENCHMARK(BM_StepTables);

void BM_StepEvaluateReference(benchmark::State& state) {
  const Reference& ref = Ref();
  for (auto _ : state) {
    auto r = strata::EvaluateStep(ref.setup.tables, ref.setup.layout, ref.comm);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_StepEvaluateReference);

// 128 GPUs (the reference nodes, 16 of them): TP 2 with sequence parallelism, PP 4 interleaved
// (VPP 2), EP 8, DP 16: every group talks, and the groups cross nodes.
void BM_StepEvaluatePipelined(benchmark::State& state) {
  const Reference& ref = Ref();
  strata::Cluster cluster = ref.comm.cluster();
  cluster.nodes = 16;
  const auto comm = OrDie(strata::CollectiveModel::Create(cluster, ref.comm.links()));
  strata::StepLayout layout = ref.setup.layout;
  layout.layout.tp = 2;
  layout.layout.pp = 4;
  layout.layout.vpp = 2;
  layout.layout.dp = 16;
  layout.layout.ep = 8;
  layout.layout.sequence_parallel = true;
  layout.micro_batches = 8;
  if (!strata::EvaluateStep(ref.setup.tables, layout, comm).ok()) {
    state.SkipWithError("the pipelined layout does not place");
    return;
  }
  for (auto _ : state) {
    auto r = strata::EvaluateStep(ref.setup.tables, layout, comm);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_StepEvaluatePipelined);

}  // namespace

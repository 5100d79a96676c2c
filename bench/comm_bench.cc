// Hot paths of the planner's inner loop: pricing one collective, and placing a layout's groups
// on a large cluster (the planner enumerates thousands of layouts).
#include <benchmark/benchmark.h>

#include "strata/comm/collective_cost.h"
#include "strata/hw/cluster.h"
#include "strata/hw/interconnects.h"
#include "strata/job/placement.h"

namespace strata {
namespace {

void BM_CollectiveCostAuto(benchmark::State& state) {
  auto cluster = LoadCluster("h20-5x8");
  auto links = LoadInterconnects();
  if (!cluster.ok() || !links.ok()) {
    state.SkipWithError("cannot load the reference cluster");
    return;
  }
  auto model = CollectiveModel::Create(*cluster, *links);
  const GroupShape shape{40, 5, 8};
  for (auto _ : state) {
    auto cost = model->Cost(CollectiveOp::kAllReduce, Bytes::GiB(1), shape);
    benchmark::DoNotOptimize(cost);
  }
}
BENCHMARK(BM_CollectiveCostAuto);

// Placement is O(world) per group kind; state.range(0) is the world size.
void BM_PlaceGroups(benchmark::State& state) {
  ParallelLayout layout;
  layout.tp = 8;
  layout.pp = 4;
  layout.ep = 8;
  layout.dp = state.range(0) / (layout.tp * layout.pp);
  for (auto _ : state) {
    auto groups = PlaceGroups(layout, 8);
    benchmark::DoNotOptimize(groups);
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_PlaceGroups)->RangeMultiplier(4)->Range(256, 16384)->Complexity();

}  // namespace
}  // namespace strata

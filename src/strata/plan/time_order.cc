#include "strata/plan/time_order.h"

#include <algorithm>
#include <array>
#include <map>

#include "strata/plan/planner.h"
#include "strata/sim/step_model.h"
#include "strata/sim/step_placement.h"

namespace strata::plan {
namespace {

// The bound is the step's compute rows summed in another order: it can exceed the full step's
// sum by rounding (~1e-16 relative). Lowering it by far more than that keeps it a bound without
// changing which layouts it lets through in any way that matters.
constexpr double kBoundMargin = 1.0 - 1e-9;

using PlacementKey = std::array<int64_t, 6>;

PlacementKey KeyOf(const ParallelLayout& l) { return {l.tp, l.cp, l.ep, l.etp, l.dp, l.pp}; }

}  // namespace

LayoutsByTime::LayoutsByTime(const StepSetup& setup, const CollectiveModel& comm,
                             const SearchSpace& space)
    : setup_(setup), comm_(comm) {
  std::map<PlacementKey, uint32_t> slots;
  PlacementKey last_key{};
  uint32_t last_slot = 0;
  bool have_last = false;
  const int64_t gpus_per_node = comm.cluster().gpus_per_node;
  rules_ = EnumerateLayouts(RulesOf(setup.job.model), space, [&](const Candidate& c) {
    const auto index = static_cast<uint32_t>(candidates_.size());
    const PlacementKey key = KeyOf(c.layout);
    bool first = false;
    if (!have_last || key != last_key) {
      auto [it, inserted] = slots.try_emplace(key, static_cast<uint32_t>(placements_.size()));
      if (inserted) {
        Placement p;
        if (auto aligned = AlignedGroupShapes(c.layout, gpus_per_node)) {
          p.groups = std::move(*aligned);
          p.placeable = true;
        } else if (auto placed = PlaceGroups(c.layout, gpus_per_node); placed.ok()) {
          p.groups = std::move(placed).value();
          p.placeable = true;
        }
        placements_.push_back(std::move(p));
        first = true;
      }
      last_key = key;
      last_slot = it->second;
      have_last = true;
    }
    Placement& placement = placements_[last_slot];
    if (!placement.placeable) {
      ++unplaceable_;
      return true;
    }
    candidates_.push_back(c);
    placement_of_.push_back(last_slot);
    if (first) {
      // The placement's first layout, in full: whether the cluster can price its groups.
      if (const std::optional<double> step = FullStep(index)) {
        heap_.push_back({*step, index, true});
      } else {
        placement.placeable = false;
        candidates_.pop_back();
        placement_of_.pop_back();
        ++unplaceable_;
      }
      return true;
    }
    const double bound = StepComputeBound(setup.tables, StepLayoutFor(setup, c)).s();
    heap_.push_back({bound * kBoundMargin, index, false});
    return true;
  });
  std::make_heap(heap_.begin(), heap_.end(), Later);
}

std::optional<double> LayoutsByTime::FullStep(uint32_t index) {
  ++full_evaluations_;
  auto step = EvaluateStepOn(setup_.tables, StepLayoutFor(setup_, candidates_[index]), comm_,
                             placements_[placement_of_[index]].groups);
  if (!step.ok()) return std::nullopt;
  return step->step.s();
}

std::optional<Timed> LayoutsByTime::Next() {
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    const Entry e = heap_.back();
    heap_.pop_back();
    if (e.full) return Timed{e.key, candidates_[e.index], e.index};
    // The smallest bound left: evaluate it in full and put it back with its real time.
    if (const std::optional<double> step = FullStep(e.index)) {
      heap_.push_back({*step, e.index, true});
      std::push_heap(heap_.begin(), heap_.end(), Later);
    } else {
      ++unplaceable_;  // not expected: a placement prices alike for all of its layouts
    }
  }
  return std::nullopt;
}

}  // namespace strata::plan

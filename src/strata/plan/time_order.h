// The planner's fast path: every valid layout in order of predicted step time, produced lazily.
//
// Each layout first gets a cheap lower bound (StepComputeBound: its compute alone, from the
// per-model tables, no placement and no allocation). The bounds go into a heap; a layout is
// evaluated with the full step model only when its bound reaches the top of the heap, i.e. when
// no layout still unevaluated could be faster. Taking layouts from the heap therefore yields
// exactly the order of sorting every layout by its full step time (ties by enumeration order),
// while the planner, which stops once its top K fit and the job's own layout is reached, never
// evaluates the layouts whose compute alone is slower than where it stopped.
//
// Group placements depend only on TP, CP, EP, ETP, DP and PP: each is placed once
// (AlignedGroupShapes, else PlaceGroups) and shared by every micro batch, recompute and VPP
// choice of that layout (EvaluateStepOn). The first layout of each placement is evaluated in full
// at once, which also tells whether that placement can be priced on the cluster: the same for
// all of its layouts, since what fails (a group's shape on the cluster) does not depend on them.
#ifndef STRATA_PLAN_TIME_ORDER_H_
#define STRATA_PLAN_TIME_ORDER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/job/placement.h"
#include "strata/plan/layout_space.h"
#include "strata/sim/step_job.h"

namespace strata::plan {

/// A layout with its full predicted step time.
struct Timed {
  double step_s = 0;
  Candidate candidate;
  int64_t index = 0;  // enumeration order: breaks ties between equal step times
};

class LayoutsByTime {
 public:
  /// Enumerates `space` (counting the rules' removals into `rules`) and bounds every layout.
  LayoutsByTime(const StepSetup& setup, const CollectiveModel& comm, const SearchSpace& space);

  /// The next layout in order of full step time; nullopt when every placeable layout was given.
  std::optional<Timed> Next();

  const PruneCounts& rules() const { return rules_; }
  int64_t unplaceable() const { return unplaceable_; }
  int64_t placeable() const { return rules_.valid - unplaceable_; }
  int64_t full_evaluations() const { return full_evaluations_; }

 private:
  struct Placement {
    std::vector<GroupPlacement> groups;
    bool placeable = false;
  };
  struct Entry {
    double key;  // the full step time when `full`, else the lower bound
    uint32_t index;
    bool full;
  };
  static bool Later(const Entry& a, const Entry& b) {
    return a.key > b.key || (a.key == b.key && a.index > b.index);
  }
  std::optional<double> FullStep(uint32_t index);

  const StepSetup& setup_;
  const CollectiveModel& comm_;
  PruneCounts rules_;
  int64_t unplaceable_ = 0;
  int64_t full_evaluations_ = 0;
  std::vector<Placement> placements_;
  std::vector<Candidate> candidates_;
  std::vector<uint32_t> placement_of_;  // per candidate
  std::vector<Entry> heap_;
};

}  // namespace strata::plan

#endif  // STRATA_PLAN_TIME_ORDER_H_

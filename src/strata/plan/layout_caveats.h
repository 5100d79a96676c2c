// The plan's caveat for the layouts it compares (the winner, the runner-up, the job's own) whose
// expert-parallel family the step model's validation misses in a known direction: that family's
// median error on the validation's fit rows and how many rows it rests on
// (sim/step_layout_error.h, data/step_layout_error.yaml). A family with fewer than
// kMinLayoutErrorRows fit rows is not in the file, and gets no caveat.
#ifndef STRATA_PLAN_LAYOUT_CAVEATS_H_
#define STRATA_PLAN_LAYOUT_CAVEATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/job/parallel_layout.h"
#include "strata/sim/step_layout_error.h"

namespace strata::plan {

/// A layout the plan's text compares: its role ("winner", "runner-up", "yours") and name.
struct ComparedLayout {
  std::string role;
  std::string name;
  ParallelLayout layout;
};

/// One family's caveat and the compared layouts it covers, in the order they were given.
struct LayoutCaveat {
  StepLayoutError error;
  std::vector<ComparedLayout> layouts;
};

/// The caveats of `compared` on nodes of `gpus_per_node`, one per family found in `errors`, in
/// the order of each family's first layout.
std::vector<LayoutCaveat> LayoutCaveatsOf(const std::vector<ComparedLayout>& compared,
                                          int64_t gpus_per_node,
                                          const std::vector<StepLayoutError>& errors);

/// "caveat: EP8 inside one NVLink domain (winner TP1 ...): on the 14 fit rows of that layout
/// family the step model's median error is -45.2% (predicted faster than measured) ..."
std::string LayoutCaveatText(const LayoutCaveat& caveat);

}  // namespace strata::plan

#endif  // STRATA_PLAN_LAYOUT_CAVEATS_H_

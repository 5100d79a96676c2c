// The data files every evaluation of a job reads (interconnect efficiencies, memory overheads,
// kernel efficiencies), loaded once. A view that evaluates a job, or many jobs (a report, a
// comparison), takes a Workspace instead of loading the catalogs again in each function.
#ifndef STRATA_EVAL_WORKSPACE_H_
#define STRATA_EVAL_WORKSPACE_H_

#include <vector>

#include "strata/core/result.h"
#include "strata/hw/interconnects.h"
#include "strata/memory/memory_constants.h"
#include "strata/sim/framework_profile.h"
#include "strata/sim/mfu_ceiling.h"
#include "strata/sim/step_constants.h"
#include "strata/sim/step_error_band.h"
#include "strata/sim/step_layout_error.h"

namespace strata {

struct Workspace {
  Interconnects links;
  MemoryConstants memory;
  KernelEfficiencyFile efficiency;
  std::vector<MfuCeiling> mfu_ceilings;  // the best published MFU per GPU and precision
  FrameworkCatalog frameworks;           // what each framework adds to the step
  StepErrorData step_errors;  // the step model's error per kind of run, and per model's runs
  std::vector<StepLayoutError> step_layout_errors;  // and per expert-parallel layout family

  /// Loads each file of data/ the evaluation needs; fails naming the file that does not load.
  static Result<Workspace> Load();
};

}  // namespace strata

#endif  // STRATA_EVAL_WORKSPACE_H_

// From a resolved job to the step model's inputs: the one place that knows which job field
// feeds which input, so every view (strata step, the planner, validation) builds them alike.
#ifndef STRATA_SIM_STEP_JOB_H_
#define STRATA_SIM_STEP_JOB_H_

#include "strata/comm/collective_cost.h"
#include "strata/core/result.h"
#include "strata/job/resolved_job.h"
#include "strata/memory/memory_constants.h"
#include "strata/sim/framework_profile.h"
#include "strata/sim/mfu_ceiling.h"
#include "strata/sim/step_model.h"
#include "strata/sim/step_tables.h"

namespace strata {

/// The per-layout inputs of the job's own layout.
StepLayout StepLayoutOf(const ResolvedJob& job);

/// Everything `strata step` evaluates, built once.
struct StepSetup {
  ResolvedJob job;
  KernelEfficiencyFile efficiency;
  FrameworkCatalog frameworks;
  std::vector<MfuCeiling> mfu_ceilings;
  StepTables tables;
  StepLayout layout;
};

/// Loads the kernel efficiencies and builds the per-model tables for a resolved job.
Result<StepSetup> PrepareStep(const ResolvedJob& job);

/// The same with the data files already loaded (eval/workspace.h loads each once).
Result<StepSetup> PrepareStep(const ResolvedJob& job, const KernelEfficiencyFile& efficiency,
                              const std::vector<MfuCeiling>& mfu_ceilings,
                              const MemoryConstants& memory, const FrameworkCatalog& frameworks);

}  // namespace strata

#endif  // STRATA_SIM_STEP_JOB_H_

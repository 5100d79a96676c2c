#include "strata/eval/evaluation.h"

#include "strata/sim/map_section.h"

namespace strata {

Result<Evaluation> EvaluateJob(const Workspace& workspace, const ResolvedJob& job,
                               const EvalOptions& options) {
  Evaluation e;
  e.job = job;
  e.ledger = ComputeLedger(job, workspace.memory);
  if (options.memory_fixes && !e.ledger.fits) e.fixes = SuggestMemoryFixes(job, workspace.memory);
  if (options.depth == EvalDepth::kMemory) return e;
  STRATA_ASSIGN_OR_RETURN(e.setup, PrepareStep(job, workspace.efficiency, workspace.mfu_ceilings,
                                               workspace.memory, workspace.frameworks));
  STRATA_ASSIGN_OR_RETURN(CollectiveModel comm,
                          CollectiveModel::Create(job.cluster, workspace.links));
  e.comm.emplace(std::move(comm));
  STRATA_ASSIGN_OR_RETURN(e.step, EvaluateStep(e.setup->tables, e.setup->layout, *e.comm));
  if (const StepErrorBand* band = FindStepErrorBand(workspace.step_errors.bands, StepFamily(job))) {
    e.step_band = *band;
  }
  e.model_runs =
      FindModelStepRuns(workspace.step_errors.model_runs, job.model.name, job.gpu().name);
  if (options.assumption_effects) {
    STRATA_ASSIGN_OR_RETURN(e.assumption_effects,
                            AssumptionEffects(workspace, job, *e.setup, *e.step));
  }
  if (options.depth == EvalDepth::kStep) return e;
  STRATA_ASSIGN_OR_RETURN(e.traffic, LayoutSectionOf(*e.setup, *e.comm, options.rank_order));
  return e;
}

}  // namespace strata

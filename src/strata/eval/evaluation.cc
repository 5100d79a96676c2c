#include "strata/eval/evaluation.h"

#include "strata/plan/framework_scope.h"
#include "strata/sim/map_section.h"

namespace strata {
namespace {

// A memory fix may raise a parallel dimension only where the job's framework runs it
// (data/frameworks.yaml `parallel:`, resolved for the job's framework, release, model and
// sharding mode as the planner resolves it): the HF Trainer runs no pipeline, so "twice the PP"
// is no fix for its jobs. A dimension the job already has above 1 is not judged again.
RunnableCheck FrameworkRuns(const Workspace& workspace, const ResolvedJob& job) {
  const plan::FrameworkScope scope =
      plan::ResolveScope(workspace.frameworks, job.spec, job.model.model_type,
                         job.model.CountLayers(FfnKind::kMoe) > 0, {job.spec.sharding.mode});
  const plan::ModeScope mode = scope.modes.front();
  if (!mode.known) return {};
  const ParallelLayout before = job.spec.layout;
  return [mode, before](const JobSpec& changed) {
    const ParallelLayout& l = changed.layout;
    const plan::DimensionSet& d = mode.dimensions;
    auto raised = [](int64_t from, int64_t to) { return to > 1 && to != from; };
    return !((!d.tp && raised(before.tp, l.tp)) || (!d.pp && raised(before.pp, l.pp)) ||
             (!d.vpp && raised(before.vpp, l.vpp)) || (!d.cp && raised(before.cp, l.cp)) ||
             (!d.ep && raised(before.ep, l.ep)) || (!d.etp && raised(before.etp, l.etp)));
  };
}

}  // namespace

Result<Evaluation> EvaluateJob(const Workspace& workspace, const ResolvedJob& job,
                               const EvalOptions& options) {
  Evaluation e;
  e.job = job;
  e.ledger = ComputeLedger(job, workspace.memory);
  if (options.memory_fixes && !e.ledger.fits) {
    e.fixes = SuggestMemoryFixes(job, workspace.memory, 4, FrameworkRuns(workspace, job));
  }
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

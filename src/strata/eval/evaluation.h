// One evaluation of a job: the memory ledger, the step model's result and the traffic on the
// bandwidth map, computed once from one resolved job and one workspace. Every view (memory, step,
// plan, compare, map, rl, report) reads it instead of building its own inputs: the step's traffic
// and the map's were built apart once, and priced an fp32 job's traffic differently
// (tests/cli/views_agree_test.cc).
#ifndef STRATA_EVAL_EVALUATION_H_
#define STRATA_EVAL_EVALUATION_H_

#include <optional>
#include <string>
#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/comm/map_layout.h"
#include "strata/core/result.h"
#include "strata/eval/assumption_effects.h"
#include "strata/eval/workspace.h"
#include "strata/job/placement.h"
#include "strata/job/resolved_job.h"
#include "strata/memory/ledger.h"
#include "strata/memory/oom_advice.h"
#include "strata/sim/step_job.h"
#include "strata/sim/step_model.h"

namespace strata {

/// How far to evaluate. The memory ledger needs no network: a job whose cluster describes no
/// links between its nodes still has one, while its step is refused.
enum class EvalDepth {
  kMemory,   // the ledger (and, when it does not fit, the cheapest fixes)
  kStep,     // + the step model on the default rank order
  kTraffic,  // + the step's traffic on groups placed by `rank_order`
};

struct EvalOptions {
  EvalDepth depth = EvalDepth::kTraffic;
  std::string rank_order = kDefaultRankOrder;  // places the groups of the traffic section
  bool memory_fixes = false;  // when the ledger does not fit, search the cheapest fixes
  // kStep and deeper: evaluate the step again under each unstated assumption's alternatives.
  bool assumption_effects = false;
};

struct Evaluation {
  ResolvedJob job;
  MemoryLedger ledger;           // the most loaded stage
  std::vector<MemoryFix> fixes;  // with memory_fixes, when the ledger does not fit
  // kStep and deeper.
  std::optional<StepSetup> setup;       // the step tables and the layout's inputs
  std::optional<CollectiveModel> comm;  // the cluster's bandwidth map and collective costs
  std::optional<StepResult> step;       // on the default rank order
  /// How far measured steps of runs of the job's kind landed from the model (its fit rows);
  /// none when the data has no band for the kind, or a calibration replaced the model's rates.
  std::optional<StepErrorBand> step_band;
  /// Where the corpora's measured runs of the job's model landed, its GPU's first; empty when
  /// none, or under a calibration (as the band).
  std::vector<ModelStepRuns> model_runs;
  std::vector<AssumptionEffect> assumption_effects;  // with options.assumption_effects
  // kTraffic.
  std::optional<LayoutSection> traffic;  // the step's traffic on groups placed by rank order
};

/// Evaluates `job` with `workspace`'s data as deep as `options.depth`. Fails only on what that
/// depth needs (a step without a network between the nodes, a rank order that does not parse).
Result<Evaluation> EvaluateJob(const Workspace& workspace, const ResolvedJob& job,
                               const EvalOptions& options = {});

}  // namespace strata

#endif  // STRATA_EVAL_EVALUATION_H_

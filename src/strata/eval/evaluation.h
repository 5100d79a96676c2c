// One evaluation of a job: the memory ledger, the step model's result and the traffic on the
// bandwidth map, computed once from one resolved job and one workspace. Views read it instead of
// each building its own inputs (the step's traffic and the map's were built apart once, and
// priced an fp32 job's traffic differently: tests/cli/views_agree_test.cc).
#ifndef STRATA_EVAL_EVALUATION_H_
#define STRATA_EVAL_EVALUATION_H_

#include <optional>
#include <string_view>

#include "strata/comm/collective_cost.h"
#include "strata/comm/map_layout.h"
#include "strata/core/result.h"
#include "strata/eval/workspace.h"
#include "strata/job/resolved_job.h"
#include "strata/memory/ledger.h"
#include "strata/sim/step_job.h"
#include "strata/sim/step_model.h"

namespace strata {

struct Evaluation {
  StepSetup setup;                      // the job (setup.job), its step tables and layout
  std::optional<CollectiveModel> comm;  // the cluster's bandwidth map and collective costs
  MemoryLedger ledger;                  // the most loaded stage
  StepResult step;                      // on the default rank order
  LayoutSection traffic;                // the step's traffic on groups placed by rank order

  const ResolvedJob& job() const { return setup.job; }
};

/// Evaluates `job` with `workspace`'s data; `rank_order` places the groups of the traffic
/// section (the step itself uses megatron-core's default order).
Result<Evaluation> EvaluateJob(const Workspace& workspace, const ResolvedJob& job,
                               std::string_view rank_order);

}  // namespace strata

#endif  // STRATA_EVAL_EVALUATION_H_

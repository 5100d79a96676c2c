#include "strata/eval/evaluation.h"

#include "strata/sim/map_section.h"

namespace strata {

Result<Evaluation> EvaluateJob(const Workspace& workspace, const ResolvedJob& job,
                               std::string_view rank_order) {
  Evaluation e;
  STRATA_ASSIGN_OR_RETURN(e.setup, PrepareStep(job, workspace.efficiency, workspace.mfu_ceilings,
                                               workspace.memory, workspace.frameworks));
  STRATA_ASSIGN_OR_RETURN(CollectiveModel comm,
                          CollectiveModel::Create(e.setup.job.cluster, workspace.links));
  e.comm.emplace(std::move(comm));
  e.ledger = ComputeLedger(e.setup.job, workspace.memory);
  STRATA_ASSIGN_OR_RETURN(e.step, EvaluateStep(e.setup.tables, e.setup.layout, *e.comm));
  STRATA_ASSIGN_OR_RETURN(e.traffic, LayoutSectionOf(e.setup, *e.comm, rank_order));
  return e;
}

}  // namespace strata

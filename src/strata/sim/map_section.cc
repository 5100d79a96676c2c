#include "strata/sim/map_section.h"

#include "strata/job/placement.h"
#include "strata/sim/step_model.h"

namespace strata {

Result<LayoutSection> LayoutSectionOf(const StepSetup& setup, const CollectiveModel& model,
                                      std::string_view rank_order) {
  const ResolvedJob& job = setup.job;
  LayoutSection s;
  s.model = job.model.name;
  s.rank_order = std::string(rank_order);
  s.experts = job.model.HasLayers(FfnKind::kMoe);
  STRATA_ASSIGN_OR_RETURN(s.groups,
                          PlaceGroups(job.layout(), job.cluster.gpus_per_node, rank_order));
  STRATA_ASSIGN_OR_RETURN(StepResult step,
                          EvaluateStepOn(setup.tables, setup.layout, model, s.groups));
  // The inputs of the stage the step priced (its own layers' counts where they differ).
  s.inputs = StepTrafficInputs(setup.tables, setup.layout, &step.critical_stage);
  s.traffic = std::move(step.traffic);
  return s;
}

}  // namespace strata

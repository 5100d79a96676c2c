// The layout section of `strata map`: where a job's traffic runs on its cluster. The traffic is
// the step model's own (sim/step_model.h), priced on the groups placed by the map's rank order,
// so the map and `step`, `plan` and `compare` show the same bytes for the same job: the
// activation dtype and the sharding mode (ZeRO-2/3, FSDP2, HSDP) included.
#ifndef STRATA_SIM_MAP_SECTION_H_
#define STRATA_SIM_MAP_SECTION_H_

#include <string_view>

#include "strata/comm/collective_cost.h"
#include "strata/comm/map_layout.h"
#include "strata/core/result.h"
#include "strata/sim/step_job.h"

namespace strata {

/// Groups placed by `rank_order`; the traffic the step model prices on them.
Result<LayoutSection> LayoutSectionOf(const StepSetup& setup, const CollectiveModel& model,
                                      std::string_view rank_order);

}  // namespace strata

#endif  // STRATA_SIM_MAP_SECTION_H_

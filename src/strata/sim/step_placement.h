// Group placement for the hot path: the shape of every parallel group (size, nodes it spans,
// fewest ranks on one node) from the layout alone, without enumerating the world's ranks as
// job/placement.h does (tens of microseconds at 40 GPUs, milliseconds at thousands). Exact for
// megatron-core's default rank order when each group's stride and extent align with the node
// size; otherwise it declines and the caller uses PlaceGroups. Tested against PlaceGroups.
#ifndef STRATA_SIM_STEP_PLACEMENT_H_
#define STRATA_SIM_STEP_PLACEMENT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "strata/job/parallel_layout.h"
#include "strata/job/placement.h"

namespace strata {

/// The groups of kinds tp, cp, dp, dp_cp, pp, ep, etp, expert_dp (first_group left empty), or
/// nullopt when the layout is not node-aligned (or invalid) and PlaceGroups must decide.
std::optional<std::vector<GroupPlacement>> AlignedGroupShapes(const ParallelLayout& layout,
                                                              int64_t gpus_per_node);

}  // namespace strata

#endif  // STRATA_SIM_STEP_PLACEMENT_H_

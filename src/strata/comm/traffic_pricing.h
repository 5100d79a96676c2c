// Puts a layout's traffic on the bandwidth map: each item runs on its group's placement (from the
// rank order), and the collective model prices it on the level that group really crosses.
#ifndef STRATA_COMM_TRAFFIC_PRICING_H_
#define STRATA_COMM_TRAFFIC_PRICING_H_

#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/comm/layout_traffic.h"
#include "strata/comm/pricing_cache.h"
#include "strata/core/result.h"
#include "strata/job/placement.h"

namespace strata {

struct PricedTraffic {
  TrafficItem item;
  CollectiveCost cost;    // one call, on the group's shape (cost.shape)
  Seconds time_per_step;  // cost.time x calls_per_step, before any overlap with compute
  Bytes size_per_step;    // item.size x calls_per_step
};

/// Fails when the layout needs more GPUs than the cluster has. kNumbersOnly: the costs' level
/// names are left empty (CollectiveModel::Cost); a `cache` then answers the questions it has seen.
Result<std::vector<PricedTraffic>> PriceTraffic(std::vector<TrafficItem> items,
                                                const std::vector<GroupPlacement>& groups,
                                                const CollectiveModel& model,
                                                Detail detail = Detail::kExplained,
                                                PricingCache* cache = nullptr);

/// Prices one collective into `cost` (kAuto): from `cache` when given and kNumbersOnly, else
/// CollectiveModel::Cost with `detail`.
Status PriceInto(CollectiveCost& cost, const CollectiveModel& model, CollectiveOp op, Bytes size,
                 const GroupShape& shape, Detail detail, PricingCache* cache);

/// The shape a placed group has on the nodes.
GroupShape ShapeOf(const GroupPlacement& group);

}  // namespace strata

#endif  // STRATA_COMM_TRAFFIC_PRICING_H_

#include "strata/comm/traffic_pricing.h"

#include <fmt/format.h>

namespace strata {

GroupShape ShapeOf(const GroupPlacement& group) {
  return {group.size, group.nodes_spanned, group.ranks_per_node};
}

Status PriceInto(CollectiveCost& cost, const CollectiveModel& model, CollectiveOp op, Bytes size,
                 const GroupShape& shape, Detail detail, PricingCache* cache) {
  if (cache != nullptr && detail == Detail::kNumbersOnly) {
    STRATA_ASSIGN_OR_RETURN(const CollectiveCost* cached, cache->Cost(model, op, size, shape));
    cost = *cached;
  } else {
    STRATA_ASSIGN_OR_RETURN(cost, model.Cost(op, size, shape, CommAlgorithm::kAuto, detail));
  }
  return OkStatus();
}

Result<std::vector<PricedTraffic>> PriceTraffic(std::vector<TrafficItem> items,
                                                const std::vector<GroupPlacement>& groups,
                                                const CollectiveModel& model, Detail detail,
                                                PricingCache* cache) {
  std::vector<PricedTraffic> out;
  out.reserve(items.size());
  for (auto& item : items) {  // moved into the result: no copy of its text
    const GroupPlacement* group = FindGroup(groups, item.group);
    if (group == nullptr) {
      return InvalidInput(fmt::format("no placement for the {} group", ToString(item.group)));
    }
    // Built in place: the planner prices millions of these, and each temporary moved its two
    // strings once more.
    PricedTraffic& p = out.emplace_back();
    Status priced = PriceInto(p.cost, model, item.op, item.size, ShapeOf(*group), detail, cache);
    if (!priced.ok()) {
      Error e = std::move(priced).error();
      e.message = fmt::format("{} group: {}", ToString(item.group), e.message);
      return e;
    }
    p.time_per_step = p.cost.time * item.calls_per_step;
    p.size_per_step = item.size * item.calls_per_step;
    p.item = std::move(item);
  }
  return out;
}

}  // namespace strata

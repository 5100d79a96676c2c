#include "strata/comm/traffic_pricing.h"

#include <fmt/format.h>

namespace strata {

GroupShape ShapeOf(const GroupPlacement& group) {
  return {group.size, group.nodes_spanned, group.ranks_per_node};
}

Result<std::vector<PricedTraffic>> PriceTraffic(std::vector<TrafficItem> items,
                                                const std::vector<GroupPlacement>& groups,
                                                const CollectiveModel& model, Detail detail) {
  std::vector<PricedTraffic> out;
  out.reserve(items.size());
  for (auto& item : items) {  // moved into the result: no copy of its text
    const GroupPlacement* group = FindGroup(groups, item.group);
    if (group == nullptr) {
      return InvalidInput(fmt::format("no placement for the {} group", ToString(item.group)));
    }
    auto cost = model.Cost(item.op, item.size, ShapeOf(*group), CommAlgorithm::kAuto, detail);
    if (!cost.ok()) {
      Error e = std::move(cost).error();
      e.message = fmt::format("{} group: {}", ToString(item.group), e.message);
      return e;
    }
    const Seconds time = cost->time * item.calls_per_step;
    const Bytes size = item.size * item.calls_per_step;
    out.push_back({std::move(item), std::move(cost).value(), time, size});
  }
  return out;
}

}  // namespace strata

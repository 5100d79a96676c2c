#include "strata/comm/map_layout.h"

namespace strata {

Result<LayoutSection> LayoutSectionOf(const ResolvedJob& job, const CollectiveModel& model,
                                      std::string_view rank_order) {
  LayoutSection s;
  s.model = job.model.name;
  s.rank_order = std::string(rank_order);
  s.inputs = TrafficInputsOf(job);
  STRATA_ASSIGN_OR_RETURN(s.groups, PlaceGroups(job.layout, job.cluster.gpus_per_node, rank_order));
  auto items = LayoutTraffic(TrafficShapeOf(job.model, job.spec.mtp), s.inputs);
  STRATA_ASSIGN_OR_RETURN(s.traffic, PriceTraffic(std::move(items), s.groups, model));
  return s;
}

}  // namespace strata

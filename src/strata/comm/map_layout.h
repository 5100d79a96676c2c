// What a bandwidth map of a job holds: the cluster's map and, for the job's layout, which
// parallel group talks on which level, how much and how often (report/map_report.h renders it;
// sim/map_section.h fills the layout section from the step model's traffic).
#ifndef STRATA_COMM_MAP_LAYOUT_H_
#define STRATA_COMM_MAP_LAYOUT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/comm/layout_traffic.h"
#include "strata/comm/traffic_pricing.h"
#include "strata/hw/bandwidth_map.h"
#include "strata/hw/cluster.h"
#include "strata/job/placement.h"

namespace strata {

struct LayoutSection {
  std::string model;       // the model's name
  std::string rank_order;  // "tp-cp-ep-dp-pp"
  bool experts = false;    // the model has routed experts (an expert-DP group to show)
  TrafficInputs inputs;
  std::vector<GroupPlacement> groups;
  std::vector<PricedTraffic> traffic;
};

struct MapReport {
  Cluster cluster;
  BandwidthMap map;
  std::optional<LayoutSection> layout;
};

}  // namespace strata

#endif  // STRATA_COMM_MAP_LAYOUT_H_

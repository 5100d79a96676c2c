// What `strata map` shows: the cluster's bandwidth map and, for a layout, which parallel group
// talks on which level, how much and how often. Returns strings and JSON; the CLI prints them.
#ifndef STRATA_COMM_MAP_REPORT_H_
#define STRATA_COMM_MAP_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "strata/comm/layout_traffic.h"
#include "strata/comm/traffic_pricing.h"
#include "strata/core/json_output.h"
#include "strata/hw/bandwidth_map.h"
#include "strata/hw/cluster.h"
#include "strata/job/placement.h"

namespace strata {

struct LayoutSection {
  std::string model;       // the model's name
  std::string rank_order;  // "tp-cp-ep-dp-pp"
  TrafficInputs inputs;
  std::vector<GroupPlacement> groups;
  std::vector<PricedTraffic> traffic;
};

struct MapReport {
  Cluster cluster;
  BandwidthMap map;
  std::optional<LayoutSection> layout;
};

std::string RenderMapText(const MapReport& report);
Json MapJson(const MapReport& report);

/// "0-7", "0,8,16,24,32", "0-39": a rank list as short as it can be written.
std::string RankList(const std::vector<int64_t>& ranks);
/// A bandwidth in GB/s with the digits that matter: 4000, 450, 12.5, 0.391.
std::string GbpsCell(BytesPerSecond rate);

}  // namespace strata

#endif  // STRATA_COMM_MAP_REPORT_H_

// What `strata map` shows, as text and JSON: the cluster's bandwidth map and, for a layout,
// which parallel group talks on which level, how much and how often.
#ifndef STRATA_REPORT_MAP_REPORT_H_
#define STRATA_REPORT_MAP_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/comm/map_layout.h"
#include "strata/core/json_output.h"

namespace strata {

std::string RenderMapText(const MapReport& report);
Json MapJson(const MapReport& report);

/// "0-7", "0,8,16,24,32", "0-39": a rank list as short as it can be written.
std::string RankList(const std::vector<int64_t>& ranks);
/// A bandwidth in GB/s with the digits that matter: 4000, 450, 12.5, 0.391.
std::string GbpsCell(BytesPerSecond rate);

}  // namespace strata

#endif  // STRATA_REPORT_MAP_REPORT_H_

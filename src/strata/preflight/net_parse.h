// Parsers for the network part of a node snapshot: iproute2's JSON (`ip -j addr`, `ip -j
// route`), `ibdev2netdev`, `rdma link` and `show_gids` (formats: ../shared/reference/formats/
// logs-and-node-state.md sections 2.5-2.7). Errors name the file, line or array element.
#ifndef STRATA_PREFLIGHT_NET_PARSE_H_
#define STRATA_PREFLIGHT_NET_PARSE_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/preflight/node_state.h"

namespace strata::preflight {

Result<std::vector<NetInterface>> ParseIpAddrJson(std::string_view text, const std::string& file);
Result<std::vector<Route>> ParseIpRouteJson(std::string_view text, const std::string& file);

/// "mlx5_1 port 1 ==> ens1np0 (Up)" per line.
Result<std::vector<RdmaPort>> ParseIbdev2netdev(std::string_view text, const std::string& file);

/// `rdma link`: "link mlx5_1/1 state ACTIVE physical_state LINK_UP netdev ens1np0". Merges the
/// port state into `ports` (adding ports ibdev2netdev did not list).
Status MergeRdmaLink(std::string_view text, const std::string& file, std::vector<RdmaPort>& ports);

/// `show_gids`: "DEV PORT INDEX GID IPv4 VER DEV" rows (the IPv4 column may be empty).
Result<std::vector<GidEntry>> ParseShowGids(std::string_view text, const std::string& file);

/// `ibstat` (rdma-core): "CA 'mlx5_1'" blocks with "Firmware version:", then "Port N:" blocks
/// with "State:", "Physical state:", "Rate:" (Gb/s) and "Link layer:"; other keys are skipped.
Result<std::vector<IbstatCa>> ParseIbstat(std::string_view text, const std::string& file);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_NET_PARSE_H_

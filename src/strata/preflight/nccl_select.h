// NCCL's network selection, replayed offline on a node snapshot: which IP interface the
// bootstrap and the socket transport use, which RDMA devices and ports carry data, and which
// RoCE GID. The rules follow NCCL's documentation (docs.nvidia.com/deeplearning/nccl/user-guide/
// docs/env.html, NCCL_SOCKET_IFNAME and NCCL_IB_HCA) and its source (src/misc/socket.cc
// ncclFindInterfaces / matchIfList, src/transport/net_ib init), as restated in
// ../shared/reference/formats/logs-and-node-state.md section 3.1.
#ifndef STRATA_PREFLIGHT_NCCL_SELECT_H_
#define STRATA_PREFLIGHT_NCCL_SELECT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/preflight/node_state.h"

namespace strata::preflight {

/// A NCCL interface or HCA list: "eth,ib", "^docker", "=eth0", "^=docker0", "mlx5_0:1,mlx5_1:1".
/// One leading '^' (exclude) then one '=' (exact) apply to the whole list.
struct NcclList {
  bool exclude = false;
  bool exact = false;
  struct Entry {
    std::string prefix;
    int port = -1;  // -1: any port
  };
  std::vector<Entry> entries;
};

NcclList ParseNcclList(std::string_view value);

/// matchIfList: true when `name` (and `port`, -1 = any) matches an entry; an empty list matches
/// everything. The caller applies `exclude`.
bool MatchesAny(const NcclList& list, std::string_view name, int port);

/// Whether the list selects `name`: MatchesAny XOR exclude.
bool Selects(const NcclList& list, std::string_view name, int port = -1);

struct SocketChoice {
  std::vector<std::string> interfaces;  // in NCCL's order; the bootstrap uses the first
  std::vector<std::string> addresses;   // "192.168.1.11/24", one per interface
  std::string rule;                     // how they were chosen, for the report
  std::string setting;                  // "NCCL_SOCKET_IFNAME==ens1np0" or "" (automatic)
};

/// The interfaces NCCL's socket code picks, given the node's interfaces in `ip -j addr` order
/// (which follows getifaddrs order: ifindex) and the variables NCCL sees.
SocketChoice PredictSocketInterfaces(const std::vector<NetInterface>& interfaces,
                                     const std::map<std::string, std::string>& env);

struct HcaChoice {
  std::vector<std::string> ports;         // "mlx5_1:1", in device order
  std::vector<std::string> ignored_down;  // selected by name but not active: NCCL skips them
  bool disabled = false;                  // NCCL_IB_DISABLE=1 or NCCL_NET=Socket
  std::string disabled_by;                // "NCCL_NET=Socket"
  std::string rule;
};

/// The RDMA ports NCCL's IB transport uses: active ports matching NCCL_IB_HCA (all active ports
/// when unset); none when NCCL_IB_DISABLE=1 or NCCL_NET=Socket.
HcaChoice PredictIbPorts(const std::vector<RdmaPort>& ports,
                         const std::map<std::string, std::string>& env);

/// The GID NCCL uses on one port: NCCL_IB_GID_INDEX when set, else the first RoCE v2 entry with
/// an IPv4-mapped address (NCCL >= 2.21 selects by NCCL_IB_ADDR_FAMILY, AF_INET by default, and
/// NCCL_IB_ROCE_VERSION_NUM, 2 by default). nullptr when there is none.
const GidEntry* ChooseGid(const std::vector<GidEntry>& gids, const std::string& device, int port,
                          const std::map<std::string, std::string>& env);

/// "192.168.1.0/24" for 192.168.1.11/24 (IPv4); the address itself for IPv6.
std::string SubnetOf(const IpAddress& address);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_NCCL_SELECT_H_

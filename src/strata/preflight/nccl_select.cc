#include "strata/preflight/nccl_select.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <optional>

#include "strata/core/strings.h"

namespace strata::preflight {

namespace {

/// The IPv4 netmask of a prefix length, in network byte order; none outside 0..32 (the ip-addr
/// parser refuses those for inet, but a NodeState built in code need not have passed it). A
/// shift by 32 - prefixlen outside that range is undefined behaviour (fuzz finding 13).
std::optional<uint32_t> Ipv4Mask(int prefixlen) {
  if (prefixlen < 0 || prefixlen > 32) return std::nullopt;
  return prefixlen == 0 ? 0 : htonl(~uint32_t{0} << (32 - prefixlen));
}

std::string Get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? "" : it->second;
}

// The first address NCCL records for an interface: getifaddrs lists IPv4 entries before IPv6
// ones; NCCL_SOCKET_FAMILY restricts the family; IPv6 loopback is skipped.
const IpAddress* UsableAddress(const NetInterface& n, const std::string& family) {
  for (const char* f : {"inet", "inet6"}) {
    if (!family.empty() && family != f) continue;
    for (const IpAddress& a : n.addresses) {
      if (a.family != f) continue;
      if (a.family == "inet6" && a.local == "::1") continue;
      return &a;
    }
  }
  return nullptr;
}

// findInterfaces(prefixList, ...): interfaces in order whose name the list selects.
void FindInterfaces(const std::vector<NetInterface>& interfaces, std::string_view list_text,
                    const std::string& family, SocketChoice& choice) {
  const NcclList list = ParseNcclList(list_text);
  for (const NetInterface& n : interfaces) {
    if (!n.Running()) continue;
    const IpAddress* a = UsableAddress(n, family);
    if (!a) continue;
    if (!Selects(list, n.name)) continue;
    choice.interfaces.push_back(n.name);
    choice.addresses.push_back(fmt::format("{}/{}", a->local, a->prefixlen));
  }
}

}  // namespace

NcclList ParseNcclList(std::string_view value) {
  NcclList list;
  if (!value.empty() && value[0] == '^') {
    list.exclude = true;
    value.remove_prefix(1);
  }
  if (!value.empty() && value[0] == '=') {
    list.exact = true;
    value.remove_prefix(1);
  }
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string_view::npos) end = value.size();
    std::string_view item = value.substr(start, end - start);
    if (!item.empty()) {
      NcclList::Entry e;
      const size_t colon = item.find(':');
      e.prefix = std::string(item.substr(0, colon));
      if (colon != std::string_view::npos)
        e.port = std::atoi(std::string(item.substr(colon + 1)).c_str());
      list.entries.push_back(std::move(e));
    }
    start = end + 1;
  }
  return list;
}

bool MatchesAny(const NcclList& list, std::string_view name, int port) {
  if (list.entries.empty()) return true;
  for (const NcclList::Entry& e : list.entries) {
    const bool name_ok =
        list.exact ? name == e.prefix : name.substr(0, e.prefix.size()) == e.prefix;
    const bool port_ok = e.port == -1 || port == -1 || e.port == port;
    if (name_ok && port_ok) return true;
  }
  return false;
}

bool Selects(const NcclList& list, std::string_view name, int port) {
  return MatchesAny(list, name, port) != list.exclude;
}

SocketChoice PredictSocketInterfaces(const std::vector<NetInterface>& interfaces,
                                     const std::map<std::string, std::string>& env) {
  SocketChoice choice;
  const std::string ifname = Get(env, "NCCL_SOCKET_IFNAME");
  std::string family = Get(env, "NCCL_SOCKET_FAMILY");
  family = family == "AF_INET" ? "inet" : family == "AF_INET6" ? "inet6" : "";
  // NCCL honours the variable only when it is longer than one character.
  if (ifname.size() > 1) {
    choice.setting = "NCCL_SOCKET_IFNAME=" + ifname;
    choice.rule = fmt::format("NCCL_SOCKET_IFNAME={}", ifname);
    FindInterfaces(interfaces, ifname, family, choice);
    return choice;
  }
  const std::string ignored =
      ifname.empty() ? "" : fmt::format(" (NCCL_SOCKET_IFNAME={} ignored: one character)", ifname);
  FindInterfaces(interfaces, "ib", family, choice);
  if (!choice.interfaces.empty()) {
    choice.rule = "automatic: interfaces starting with 'ib' come first" + ignored;
    return choice;
  }
  const std::string comm_id = Get(env, "NCCL_COMM_ID");
  if (comm_id.size() > 1) {
    // The interface in the same subnet as NCCL_COMM_ID's address.
    const std::string host = comm_id.substr(0, comm_id.rfind(':'));
    in_addr target{};
    if (::inet_pton(AF_INET, host.c_str(), &target) == 1) {
      for (const NetInterface& n : interfaces) {
        if (!n.Running()) continue;
        for (const IpAddress& a : n.addresses) {
          in_addr mine{};
          if (a.family != "inet" || ::inet_pton(AF_INET, a.local.c_str(), &mine) != 1) continue;
          const std::optional<uint32_t> mask = Ipv4Mask(a.prefixlen);
          if (!mask) continue;
          if ((mine.s_addr & *mask) == (target.s_addr & *mask)) {
            choice.interfaces.push_back(n.name);
            choice.addresses.push_back(fmt::format("{}/{}", a.local, a.prefixlen));
            choice.rule = "automatic: the interface in NCCL_COMM_ID's subnet" + ignored;
            return choice;
          }
        }
      }
    }
  }
  FindInterfaces(interfaces, "^docker,lo,virbr", family, choice);
  if (!choice.interfaces.empty()) {
    choice.rule =
        "automatic: no 'ib' interface, so every running interface except docker*, lo*, virbr* "
        "in address order" +
        ignored;
    return choice;
  }
  for (const char* last : {"docker", "lo", "virbr"}) {
    FindInterfaces(interfaces, last, family, choice);
    if (!choice.interfaces.empty()) {
      choice.rule =
          fmt::format("automatic: nothing else is up, so '{}*' as a last resort{}", last, ignored);
      return choice;
    }
  }
  choice.rule = "automatic: no running interface with an address" + ignored;
  return choice;
}

HcaChoice PredictIbPorts(const std::vector<RdmaPort>& ports,
                         const std::map<std::string, std::string>& env) {
  HcaChoice choice;
  if (Get(env, "NCCL_IB_DISABLE") == "1") {
    choice.disabled = true;
    choice.disabled_by = "NCCL_IB_DISABLE=1";
    choice.rule = "NCCL_IB_DISABLE=1: no RDMA; inter-node traffic goes over TCP sockets";
    return choice;
  }
  // NCCL_NET names the network module, case-insensitively (src/net.cc strcasecmp): "Socket" is
  // the TCP one, so the RDMA ports are not NCCL's even though they are up (audit52 K4).
  const std::string net = Get(env, "NCCL_NET");
  if (AsciiLower(net) == "socket") {
    choice.disabled = true;
    choice.disabled_by = "NCCL_NET=" + net;
    choice.rule = choice.disabled_by + ": no RDMA; inter-node traffic goes over TCP sockets";
    return choice;
  }
  const std::string hca = Get(env, "NCCL_IB_HCA");
  const NcclList list = ParseNcclList(hca);
  choice.rule = hca.empty() ? "automatic: every active RDMA port" : "NCCL_IB_HCA=" + hca;
  for (const RdmaPort& p : ports) {
    if (!Selects(list, p.device, p.port)) continue;
    // ibdev2netdev alone does not show the port state: its Up/Down is the netdev's, which for
    // RoCE follows the port. rdma link, when collected, is authoritative.
    const bool active = p.port_active.value_or(p.netdev_up.value_or(false));
    const std::string name = fmt::format("{}:{}", p.device, p.port);
    if (active) {
      choice.ports.push_back(name);
    } else {
      choice.ignored_down.push_back(name);
    }
  }
  return choice;
}

const GidEntry* ChooseGid(const std::vector<GidEntry>& gids, const std::string& device, int port,
                          const std::map<std::string, std::string>& env) {
  const std::string index = Get(env, "NCCL_IB_GID_INDEX");
  if (!index.empty() && index != "-1") {
    const int wanted = std::atoi(index.c_str());
    for (const GidEntry& g : gids) {
      if (g.device == device && g.port == port && g.index == wanted) return &g;
    }
    return nullptr;
  }
  for (const GidEntry& g : gids) {
    if (g.device == device && g.port == port && g.version == "v2" && !g.ipv4.empty()) return &g;
  }
  return nullptr;
}

std::string SubnetOf(const IpAddress& address) {
  in_addr a{};
  if (address.family != "inet" || ::inet_pton(AF_INET, address.local.c_str(), &a) != 1)
    return address.local;
  const std::optional<uint32_t> mask = Ipv4Mask(address.prefixlen);
  if (!mask) return address.local;
  a.s_addr &= *mask;
  char buffer[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a, buffer, sizeof buffer);
  return fmt::format("{}/{}", buffer, address.prefixlen);
}

}  // namespace strata::preflight

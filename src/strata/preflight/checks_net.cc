// Network checks: the interface NCCL's bootstrap and socket transport will pick on each node
// and the RDMA ports and GIDs its IB transport will use (nccl_select.h), compared across nodes.
// Different subnets, the management port, docker0, a missing interface or a missing RDMA device
// are findings with the setting that fixes them (incident 6).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "strata/preflight/checks.h"
#include "strata/preflight/effective_env.h"

namespace strata::preflight {
namespace {

std::string Join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

const NetInterface* FindInterface(const NodeState& node, const std::string& name) {
  for (const NetInterface& n : node.interfaces) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

// The interface to suggest for NCCL_SOCKET_IFNAME: the netdev of the first active RDMA port that
// is running with an address (the data network), else the first running interface that is
// neither the management port nor docker/lo/virbr.
std::string SuggestInterface(const NodeState& node) {
  const std::string mgmt = node.DefaultRouteDevice();
  for (const RdmaPort& p : node.rdma) {
    const NetInterface* n = FindInterface(node, p.netdev);
    if (n && n->Running() && !n->addresses.empty() && p.netdev != mgmt) return p.netdev;
  }
  for (const NetInterface& n : node.interfaces) {
    if (!n.Running() || n.addresses.empty() || n.name == mgmt) continue;
    if (n.name.starts_with("docker") || n.name.starts_with("lo") || n.name.starts_with("virbr"))
      continue;
    return n.name;
  }
  return "";
}

void CheckSocket(const NodeState& node, const std::map<std::string, std::string>& env,
                 NodeSummary& summary, PreflightReport& report) {
  const SocketChoice& s = summary.socket;
  const std::string suggestion = SuggestInterface(node);
  const std::string fix =
      suggestion.empty() ? "set NCCL_SOCKET_IFNAME to an interface that is up and has an address"
                         : fmt::format("NCCL_SOCKET_IFNAME=={}", suggestion);
  if (s.interfaces.empty()) {
    std::string detail;
    auto it = env.find("NCCL_SOCKET_IFNAME");
    if (it != env.end()) {
      const NcclList list = ParseNcclList(it->second);
      for (const NetInterface& n : node.interfaces) {
        if (Selects(list, n.name) && !n.Running())
          detail += fmt::format(" ({} matches but is not running)", n.name);
      }
    }
    report.findings.push_back(
        Finding{Severity::kError, "nic", node.host,
                fmt::format("no interface is selected by {}{}: NCCL fails at init with "
                            "'Bootstrap : no socket interface found'",
                            s.rule, detail),
                fix});
    return;
  }
  const std::string& first = s.interfaces[0];
  if (first.starts_with("docker") || first.starts_with("lo") || first.starts_with("virbr")) {
    report.findings.push_back(
        Finding{Severity::kError, "nic", node.host,
                fmt::format("NCCL's bootstrap will use {} ({}), a local-only interface other "
                            "nodes cannot reach ({})",
                            first, s.addresses[0], s.rule),
                fix});
    return;
  }
  const std::string mgmt = node.DefaultRouteDevice();
  if (first == mgmt && !suggestion.empty() && suggestion != mgmt) {
    const bool no_rdma = summary.hca.ports.empty();
    report.findings.push_back(Finding{
        no_rdma ? Severity::kError : Severity::kWarning, "nic", node.host,
        no_rdma ? fmt::format(
                      "NCCL will use {} ({}), the management port (it carries the default route), "
                      "and no RDMA "
                      "port is in use: all inter-node collective traffic goes over TCP on {} ({})",
                      first, s.addresses[0], first, s.rule)
                : fmt::format(
                      "NCCL's bootstrap and RDMA out-of-band connections will use {} ({}), the "
                      "management "
                      "port (it carries the default route), while the data network is on {} ({})",
                      first, s.addresses[0], suggestion, s.rule),
        fix});
  }
}

void CheckHcas(const NodeState& node, const std::map<std::string, std::string>& env,
               NodeSummary& summary, PreflightReport& report) {
  HcaChoice& h = summary.hca;
  if (h.disabled) return;  // reported as a dangerous setting
  const std::string mgmt = node.DefaultRouteDevice();
  auto hca_it = env.find("NCCL_IB_HCA");
  // Unset: an empty list (every active port is taken).
  const NcclList list = hca_it == env.end() ? NcclList{} : ParseNcclList(hca_it->second);
  if (hca_it != env.end()) {
    if (list.exact && !list.exclude) {
      for (const NcclList::Entry& e : list.entries) {
        bool present = false;
        for (const RdmaPort& p : node.rdma) present |= p.device == e.prefix;
        if (!present) {
          report.findings.push_back(
              Finding{Severity::kError, "rdma", node.host,
                      fmt::format("NCCL_IB_HCA={} names {}, which this node does not have",
                                  hca_it->second, e.prefix),
                      "list only devices every node has (compare ibdev2netdev across nodes)"});
        }
      }
    }
    if (!list.exact && !list.exclude) {
      // The prefix trap: "mlx5_1" also selects mlx5_10..19, "mlx5" every mlx5 device.
      std::vector<std::string> extra, wanted;
      for (const RdmaPort& p : node.rdma) {
        bool named = false;
        for (const NcclList::Entry& e : list.entries) named |= p.device == e.prefix;
        if (named)
          wanted.push_back(p.device);
        else if (Selects(list, p.device, p.port))
          extra.push_back(p.device + (p.netdev == mgmt && !mgmt.empty()
                                          ? " (" + p.netdev + ", the management port)"
                                          : ""));
      }
      if (!extra.empty()) {
        report.findings.push_back(
            Finding{Severity::kWarning, "rdma", node.host,
                    fmt::format("NCCL_IB_HCA={} is a list of prefixes, so it also selects {}",
                                hca_it->second, Join(extra)),
                    wanted.empty() ? "name the data devices exactly: NCCL_IB_HCA==<dev>,<dev>"
                                   : fmt::format("NCCL_IB_HCA=={}", Join(wanted, ","))});
      }
    }
  }
  // The management port's HCA in NCCL's data path: unset NCCL_IB_HCA takes every active port;
  // a list that names it (exactly, or as the very prefix) puts it there on purpose or by a typo.
  // (A prefix that selects it without naming it is the prefix trap above.) NCCL spreads its
  // channels over the listed NICs and a ring runs at its slowest link.
  for (const std::string& port : h.ports) {
    const std::string device = port.substr(0, port.find(':'));
    for (const RdmaPort& p : node.rdma) {
      if (p.device != device || mgmt.empty() || p.netdev != mgmt) continue;
      if (hca_it == env.end()) {
        report.findings.push_back(Finding{
            Severity::kWarning, "rdma", node.host,
            fmt::format("NCCL will send data over {} ({}), the management port's HCA", port, mgmt),
            "exclude it: NCCL_IB_HCA=^=" + device});
        continue;
      }
      bool named = false;
      for (const NcclList::Entry& e : list.entries) named |= e.prefix == device;
      if (named && !list.exclude) {
        // An error, as a node missing a data port is: the rings through this NIC run at the
        // management link's rate (the reference cluster: 25 Gb/s against 200 Gb/s).
        report.findings.push_back(Finding{
            Severity::kError, "rdma", node.host,
            fmt::format("NCCL_IB_HCA={} names {} ({}, the management port's HCA): NCCL will "
                        "send data over {}",
                        hca_it->second, device, mgmt, port),
            "list the data NICs only (ibdev2netdev: the ports whose netdev is not " + mgmt + ")"});
      }
    }
  }
  // An explicit list that leaves out an active data port: NCCL never uses that NIC, and the
  // inter-node collectives lose its share of the node's bandwidth.
  if (hca_it != env.end() && !list.exclude && !list.entries.empty()) {
    std::vector<std::string> idle;
    for (const RdmaPort& p : node.rdma) {
      if (p.port_active.has_value() && !*p.port_active) continue;
      if (!mgmt.empty() && p.netdev == mgmt) continue;
      const std::string port = fmt::format("{}:{}", p.device, p.port);
      if (std::find(h.ports.begin(), h.ports.end(), port) != h.ports.end()) continue;
      idle.push_back(port + (p.netdev.empty() ? "" : " (" + p.netdev + ")"));
    }
    if (!idle.empty()) {
      report.findings.push_back(Finding{
          Severity::kWarning, "rdma", node.host,
          fmt::format("NCCL_IB_HCA={} leaves out the active data port{} {}: NCCL will not use {}",
                      hca_it->second, idle.size() == 1 ? "" : "s", Join(idle),
                      idle.size() == 1 ? "it" : "them"),
          "add it to NCCL_IB_HCA, unless the NIC is kept for storage on purpose"});
    }
  }
  if (!node.rdma.empty() && h.ports.empty()) {
    report.findings.push_back(Finding{
        Severity::kError, "rdma", node.host,
        fmt::format("no active RDMA port is selected ({}{}): NCCL falls back to TCP "
                    "sockets for all inter-node traffic",
                    h.rule, h.ignored_down.empty() ? "" : "; down: " + Join(h.ignored_down)),
        "bring the ports up (ibdev2netdev, rdma link) or fix NCCL_IB_HCA"});
  }
  // GIDs, for RoCE ports whose table was collected.
  auto gid_env = env.find("NCCL_IB_GID_INDEX");
  for (const std::string& port : h.ports) {
    const std::string device = port.substr(0, port.find(':'));
    const int number = std::atoi(port.substr(port.find(':') + 1).c_str());
    bool has_table = false;
    for (const GidEntry& g : node.gids) has_table |= g.device == device && g.port == number;
    if (!has_table) continue;
    const GidEntry* g = ChooseGid(node.gids, device, number, env);
    if (!g) {
      report.findings.push_back(Finding{
          Severity::kError, "gid", node.host,
          gid_env != env.end() && gid_env->second != "-1"
              ? fmt::format("NCCL_IB_GID_INDEX={} does not exist on {}", gid_env->second, port)
              : fmt::format("{} has no RoCE v2 GID with an IPv4 address for NCCL to pick", port),
          "give the port's netdev an IPv4 address, or unset NCCL_IB_GID_INDEX"});
      continue;
    }
    summary.gids.push_back(fmt::format("{} GID {} ({}, {})", port, g->index, g->version,
                                       g->ipv4.empty() ? g->gid : g->ipv4));
    if (g->version != "v2") {
      report.findings.push_back(Finding{
          Severity::kError, "gid", node.host,
          fmt::format("GID index {} on {} is RoCE {}: NCCL needs RoCE v2 to route between subnets",
                      g->index, port, g->version),
          "unset NCCL_IB_GID_INDEX (NCCL >= 2.21 picks the RoCE v2 IPv4 GID) or set the v2 index"});
    } else if (g->ipv4.empty()) {
      report.findings.push_back(
          Finding{Severity::kError, "gid", node.host,
                  fmt::format("GID index {} on {} is {}, a link-local address that is not routed "
                              "(NVIDIA/nccl #769): connections time out",
                              g->index, port, g->gid),
                  "unset NCCL_IB_GID_INDEX (NCCL >= 2.21 picks the RoCE v2 IPv4 GID) or set the v2 "
                  "IPv4 index"});
    }
  }
}

void CompareNodes(const std::vector<NodeSummary>& nodes, PreflightReport& report) {
  // Bootstrap subnets: every node's first socket interface must reach the others.
  std::map<std::string, std::vector<std::string>> subnets;  // subnet -> "host (if)"
  std::map<std::string, std::string> iface_of_subnet;
  for (const NodeSummary& n : nodes) {
    if (n.socket.interfaces.empty()) continue;
    const std::string& a = n.socket.addresses[0];
    IpAddress ip{a.find(':') == std::string::npos ? "inet" : "inet6", a.substr(0, a.find('/')),
                 std::atoi(a.substr(a.find('/') + 1).c_str()), ""};
    const std::string subnet = SubnetOf(ip);
    subnets[subnet].push_back(fmt::format("{} ({} {})", n.host, n.socket.interfaces[0], a));
    iface_of_subnet[subnet] = n.socket.interfaces[0];
  }
  if (subnets.size() > 1) {
    std::vector<std::pair<std::string, std::vector<std::string>>> ordered(subnets.begin(),
                                                                          subnets.end());
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
      return a.second.size() > b.second.size();
    });
    std::string parts;
    for (const auto& [subnet, hosts] : ordered)
      parts += fmt::format("{}{}: {}", parts.empty() ? "" : "; ", subnet, Join(hosts));
    report.findings.push_back(Finding{
        Severity::kError, "nic", "",
        fmt::format("NCCL's bootstrap interfaces are in different subnets ({}): ranks "
                    "cannot connect and init hangs or times out",
                    parts),
        fmt::format("NCCL_SOCKET_IFNAME=={} on every node", iface_of_subnet[ordered[0].first])});
  }
  // RDMA rails: a node with fewer active ports than most nodes is missing a device. (A node with
  // more, e.g. one whose NCCL_IB_HCA also selects the management HCA, is reported by CheckHcas.)
  std::map<size_t, size_t> hosts_with;  // port count -> number of nodes
  std::set<std::string> all_ports;
  for (const NodeSummary& n : nodes) {
    if (n.hca.disabled || !n.rdma_read) continue;
    ++hosts_with[n.hca.ports.size()];
    all_ports.insert(n.hca.ports.begin(), n.hca.ports.end());
  }
  size_t usual = 0, most_hosts = 0;
  for (const auto& [count, hosts] : hosts_with) {
    if (hosts >= most_hosts) {  // ties go to the larger count
      usual = count;
      most_hosts = hosts;
    }
  }
  for (const NodeSummary& n : nodes) {
    if (n.hca.disabled || !n.rdma_read || n.hca.ports.size() >= usual) continue;
    std::vector<std::string> missing;
    for (const std::string& p : all_ports) {
      if (std::find(n.hca.ports.begin(), n.hca.ports.end(), p) == n.hca.ports.end())
        missing.push_back(p);
    }
    report.findings.push_back(Finding{
        Severity::kError, "rdma", n.host,
        fmt::format("{} RDMA port{} in use, other nodes use {}: missing {}{}", n.hca.ports.size(),
                    n.hca.ports.size() == 1 ? "" : "s", usual, Join(missing),
                    n.hca.ignored_down.empty() ? "" : " (down: " + Join(n.hca.ignored_down) + ")"),
        "bring the missing port up or drain the node: rings through it run at a fraction of "
        "the others' bandwidth"});
  }
}

// The ports NCCL will use, as ibstat saw them (audit56 Q8: a data port downtrained to 25 Gb/s
// of 200, Active and LinkUp, read "ready to launch"). NCCL spreads its channels over every port
// it selects, so a ring through a slow port waits for it: a used port below the fastest used
// port of the cluster is an error, as a missing port already is. The project's reference
// (formats/logs-and-node-state.md 2.6) asks for firmware identical across nodes for the same
// adapter type: a difference is a warning.
void CheckPortRates(const std::vector<NodeState>& nodes, PreflightReport& report) {
  struct Used {
    const NodeState* node;
    std::string port;  // "mlx5_3:1"
    const IbstatCa* ca;
    const IbstatPort* p;
  };
  std::vector<Used> used;
  double fastest = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& name : report.nodes[i].hca.ports) {
      const size_t colon = name.rfind(':');
      const std::string device = name.substr(0, colon);
      const int port = colon == std::string::npos ? 1 : std::atoi(name.c_str() + colon + 1);
      // The management port's HCA is its own finding (CheckHcas): its rate is not a fault.
      bool management = false;
      for (const RdmaPort& r : nodes[i].rdma) {
        management |= r.device == device && r.port == port && !r.netdev.empty() &&
                      r.netdev == nodes[i].DefaultRouteDevice();
      }
      if (management) continue;
      for (const IbstatCa& ca : nodes[i].ibstat) {
        if (ca.device != device) continue;
        for (const IbstatPort& p : ca.ports) {
          if (p.port != port) continue;
          used.push_back(Used{&nodes[i], name, &ca, &p});
          if (p.rate_gbps) fastest = std::max(fastest, *p.rate_gbps);
        }
      }
    }
  }
  for (const Used& u : used) {
    if (!u.p->rate_gbps || *u.p->rate_gbps >= fastest) continue;
    report.findings.push_back(Finding{
        Severity::kError, "rdma", u.node->host,
        fmt::format("{} runs at {:g} Gb/s where the fastest port NCCL uses runs at {:g} Gb/s "
                    "(ibstat): NCCL spreads its channels over every port, so each ring through "
                    "it runs at its rate",
                    u.port, *u.p->rate_gbps, fastest),
        fmt::format("reseat or replace the cable or transceiver of {} (a link that negotiated "
                    "down), or drain the node",
                    u.port)});
  }
  std::map<std::string, std::map<std::string, std::set<std::string>>> firmware;  // type -> fw
  for (const Used& u : used) {
    if (!u.ca->firmware.empty())
      firmware[u.ca->type][u.ca->firmware].insert(u.node->host + " " + u.ca->device);
  }
  for (const auto& [type, versions] : firmware) {
    if (versions.size() < 2) continue;
    // The most common version is "the other N ports"; the rest are named port by port.
    std::string common;
    for (const auto& [fw, where] : versions) {
      if (common.empty() || where.size() > versions.at(common).size()) common = fw;
    }
    std::string list;
    for (const auto& [fw, where] : versions) {
      if (fw == common) continue;
      std::vector<std::string> names(where.begin(), where.end());
      list += fmt::format("{}{} on {}", list.empty() ? "" : "; ", fw, Join(names));
    }
    list += fmt::format("; {} on the other {} ports", common, versions.at(common).size());
    report.findings.push_back(
        Finding{Severity::kWarning, "rdma", "",
                fmt::format("the adapters NCCL uses{} run different firmware: {}",
                            type.empty() ? "" : " (" + type + ")", list),
                "update the adapters to one firmware version (mlxfwmanager) before a long run"});
  }
}

}  // namespace

void CheckNetwork(const std::vector<NodeState>& nodes, PreflightReport& report) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeState& node = nodes[i];
    NodeSummary& summary = report.nodes[i];
    const std::map<std::string, std::string> env =
        ValuesOf(EffectiveEnvWithOrigin(node, &summary.env_source));
    summary.hca = PredictIbPorts(node.rdma, env);
    summary.rdma_read = node.Has("rdma") || node.Has("rdma_link");
    if (!node.Has("interfaces")) continue;
    summary.socket = PredictSocketInterfaces(node.interfaces, env);
    CheckSocket(node, env, summary, report);
    if (node.Has("rdma") || node.Has("rdma_link")) CheckHcas(node, env, summary, report);
  }
  CompareNodes(report.nodes, report);
  CheckPortRates(nodes, report);
}

}  // namespace strata::preflight

// NCCL's interface, HCA and GID selection, case by case against its documentation. The rules
// quoted are from docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html:
//
// NCCL_SOCKET_IFNAME: "Define to a list of prefixes to filter interfaces to be used by NCCL.
//   Multiple prefixes can be provided, separated by the , symbol. Using the ^ symbol, NCCL will
//   exclude interfaces starting with any prefix in that list. To match (or not) an exact
//   interface name, begin the prefix string with the = character. Examples: eth : Use all
//   interfaces starting with eth, e.g. eth0, eth1, ... =eth0 : Use only interface eth0
//   =eth0,eth1 : Use only interfaces eth0 and eth1 ^docker : Do not use any interface starting
//   with docker ^=docker0 : Do not use interface docker0. Note: By default, the loopback
//   interface (lo) and docker interfaces (docker*) would not be selected unless there are no
//   other interfaces available. [...] The default algorithm will also favor interfaces starting
//   with ib over others. Setting NCCL_SOCKET_IFNAME will bypass the automatic interface
//   selection algorithm and may use all interfaces matching the manual selection."
// NCCL_IB_HCA: "The list is comma-separated; port numbers can be specified using the : symbol.
//   An optional prefix ^ indicates the list is an exclude list. A second optional prefix =
//   indicates that the tokens are exact names, otherwise by default NCCL would treat each token
//   as a prefix. Examples: mlx5 : Use all ports of all cards starting with mlx5
//   =mlx5_0:1,mlx5_1:1 : Use ports 1 of cards mlx5_0 and mlx5_1. ^=mlx5_1,mlx5_4 : Do not use
//   cards mlx5_1 and mlx5_4."
// What the docs leave out is taken from NCCL's source as restated in the formats reference 3.1:
// only running interfaces with an address count; a one-character value is ignored; the automatic
// order is ib*, then NCCL_COMM_ID's subnet, then anything but docker/lo/virbr, then docker, lo.
#include "strata/preflight/nccl_select.h"

#include <gtest/gtest.h>

namespace strata::preflight {
namespace {

NetInterface If(const std::string& name, const std::string& ip, bool running = true,
                const std::string& family = "inet") {
  NetInterface n;
  n.name = name;
  n.flags = running ? std::vector<std::string>{"BROADCAST", "MULTICAST", "UP", "LOWER_UP"}
                    : std::vector<std::string>{"NO-CARRIER", "BROADCAST", "MULTICAST", "UP"};
  n.operstate = running ? "UP" : "DOWN";
  if (!ip.empty()) n.addresses.push_back({family, ip, family == "inet" ? 24 : 64, "global"});
  return n;
}

// In ifindex order, as `ip -j addr` prints them.
std::vector<NetInterface> Node() {
  NetInterface lo = If("lo", "127.0.0.1");
  lo.flags = {"LOOPBACK", "UP", "LOWER_UP"};
  lo.addresses[0].prefixlen = 8;
  return {lo,
          If("eth0", "10.0.0.11"),
          If("eth1", "10.0.1.11"),
          If("eth10", "10.0.10.11"),
          If("ens1np0", "192.168.1.11"),
          If("docker0", "172.17.0.1")};
}

using Env = std::map<std::string, std::string>;

struct SocketCase {
  const char* name;
  std::vector<NetInterface> interfaces;
  Env env;
  std::vector<std::string> expected;
};

TEST(NcclSelect, SocketInterfacesFollowTheDocumentedRules) {
  NetInterface ib0 = If("ib0", "192.168.100.11");
  std::vector<NetInterface> with_ib = Node();
  with_ib.insert(with_ib.begin() + 2, ib0);
  std::vector<NetInterface> only_local = {Node()[0], Node()[5]};
  std::vector<NetInterface> carrier_lost = Node();
  carrier_lost[1] = If("eth0", "10.0.0.11", /*running=*/false);
  std::vector<NetInterface> no_address = Node();
  no_address[1] = If("eth0", "");
  std::vector<NetInterface> v6 = Node();
  v6[4].addresses.push_back({"inet6", "fd00::11", 64, "global"});
  const std::vector<SocketCase> cases = {
      // "eth : Use all interfaces starting with eth" (eth10 too: a prefix, not a name).
      {"prefix", Node(), {{"NCCL_SOCKET_IFNAME", "eth"}}, {"eth0", "eth1", "eth10"}},
      {"prefix_trap", Node(), {{"NCCL_SOCKET_IFNAME", "eth1"}}, {"eth1", "eth10"}},
      // "=eth0 : Use only interface eth0"
      {"exact", Node(), {{"NCCL_SOCKET_IFNAME", "=eth0"}}, {"eth0"}},
      // "=eth0,eth1 : Use only interfaces eth0 and eth1"
      {"exact_list", Node(), {{"NCCL_SOCKET_IFNAME", "=eth0,eth1"}}, {"eth0", "eth1"}},
      // "^docker : Do not use any interface starting with docker"; a manual selection bypasses
      // the automatic one, so lo is selected too.
      {"exclude_prefix",
       Node(),
       {{"NCCL_SOCKET_IFNAME", "^docker"}},
       {"lo", "eth0", "eth1", "eth10", "ens1np0"}},
      // "^=docker0 : Do not use interface docker0."
      {"exclude_exact",
       Node(),
       {{"NCCL_SOCKET_IFNAME", "^=docker0"}},
       {"lo", "eth0", "eth1", "eth10", "ens1np0"}},
      {"exclude_list", Node(), {{"NCCL_SOCKET_IFNAME", "^eth,lo"}}, {"ens1np0", "docker0"}},
      // A name that matches nothing selects nothing (NCCL: "no socket interface found").
      {"no_match", Node(), {{"NCCL_SOCKET_IFNAME", "=eth9"}}, {}},
      // Unset: lo and docker* are not selected while others are available.
      {"auto_no_ib", Node(), {}, {"eth0", "eth1", "eth10", "ens1np0"}},
      // "The default algorithm will also favor interfaces starting with ib over others."
      {"auto_ib_first", with_ib, {}, {"ib0"}},
      // "...unless there are no other interfaces available": docker before lo.
      {"auto_last_resort", only_local, {}, {"docker0"}},
      // One character is ignored (strlen > 1 in the source): automatic selection.
      {"one_character",
       Node(),
       {{"NCCL_SOCKET_IFNAME", "e"}},
       {"eth0", "eth1", "eth10", "ens1np0"}},
      // Only running interfaces with an address.
      {"not_running", carrier_lost, {{"NCCL_SOCKET_IFNAME", "eth"}}, {"eth1", "eth10"}},
      {"no_address", no_address, {{"NCCL_SOCKET_IFNAME", "=eth0"}}, {}},
      // NCCL_SOCKET_FAMILY restricts the address family.
      {"family", v6, {{"NCCL_SOCKET_FAMILY", "AF_INET6"}}, {"ens1np0"}},
      // NCCL_COMM_ID's subnet wins over the generic order when there is no ib interface.
      {"comm_id_subnet", Node(), {{"NCCL_COMM_ID", "192.168.1.5:29500"}}, {"ens1np0"}},
  };
  for (const SocketCase& c : cases) {
    const SocketChoice choice = PredictSocketInterfaces(c.interfaces, c.env);
    EXPECT_EQ(choice.interfaces, c.expected) << c.name << " (" << choice.rule << ")";
  }
}

TEST(NcclSelect, SocketAddressesAndRuleAreReported) {
  const SocketChoice c = PredictSocketInterfaces(Node(), {{"NCCL_SOCKET_IFNAME", "=ens1np0"}});
  EXPECT_EQ(c.addresses, std::vector<std::string>{"192.168.1.11/24"});
  EXPECT_EQ(c.rule, "NCCL_SOCKET_IFNAME==ens1np0");
  EXPECT_EQ(PredictSocketInterfaces(Node(), {}).rule,
            "automatic: no 'ib' interface, so every running interface except docker*, lo*, virbr* "
            "in address order");
}

std::vector<RdmaPort> Hcas() {
  return {{"mlx5_0", 1, "eth0", true, true},
          {"mlx5_1", 1, "ens1np0", true, true},
          {"mlx5_4", 1, "ens4np0", false, false},
          {"mlx5_10", 1, "ens10np0", true, true},
          {"mlx5_10", 2, "ens10np1", true, true}};
}

TEST(NcclSelect, IbHcaListFollowsTheDocumentedRules) {
  struct Case {
    const char* name;
    Env env;
    std::vector<std::string> ports;
  };
  const std::vector<Case> cases = {
      // Unset: every active port (mlx5_4 is down).
      {"unset", {}, {"mlx5_0:1", "mlx5_1:1", "mlx5_10:1", "mlx5_10:2"}},
      // "mlx5 : Use all ports of all cards starting with mlx5"
      {"prefix", {{"NCCL_IB_HCA", "mlx5"}}, {"mlx5_0:1", "mlx5_1:1", "mlx5_10:1", "mlx5_10:2"}},
      // Without '=' a token is a prefix: mlx5_1 also selects mlx5_10.
      {"prefix_trap", {{"NCCL_IB_HCA", "mlx5_1"}}, {"mlx5_1:1", "mlx5_10:1", "mlx5_10:2"}},
      // "=mlx5_0:1,mlx5_1:1 : Use ports 1 of cards mlx5_0 and mlx5_1."
      {"exact_ports", {{"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"}}, {"mlx5_0:1", "mlx5_1:1"}},
      {"port_filter", {{"NCCL_IB_HCA", "=mlx5_10:2"}}, {"mlx5_10:2"}},
      // "^=mlx5_1,mlx5_4 : Do not use cards mlx5_1 and mlx5_4."
      {"exclude_exact",
       {{"NCCL_IB_HCA", "^=mlx5_1,mlx5_4"}},
       {"mlx5_0:1", "mlx5_10:1", "mlx5_10:2"}},
  };
  for (const Case& c : cases) EXPECT_EQ(PredictIbPorts(Hcas(), c.env).ports, c.ports) << c.name;
  const HcaChoice named_down = PredictIbPorts(Hcas(), {{"NCCL_IB_HCA", "=mlx5_4"}});
  EXPECT_TRUE(named_down.ports.empty());
  EXPECT_EQ(named_down.ignored_down, std::vector<std::string>{"mlx5_4:1"});
  const HcaChoice disabled = PredictIbPorts(Hcas(), {{"NCCL_IB_DISABLE", "1"}});
  EXPECT_TRUE(disabled.disabled);
  EXPECT_TRUE(disabled.ports.empty());
  EXPECT_EQ(disabled.disabled_by, "NCCL_IB_DISABLE=1");
  // NCCL_NET selects the network module by name, case-insensitively (NCCL src/net.cc,
  // strcasecmp): "socket" is the TCP module, so no RDMA port is NCCL's (audit52 K4: they were
  // listed as NCCL's); "IB" leaves the choice to NCCL_IB_HCA.
  for (const char* net : {"Socket", "socket", "SOCKET"}) {
    const HcaChoice sockets = PredictIbPorts(Hcas(), {{"NCCL_NET", net}});
    EXPECT_TRUE(sockets.disabled) << net;
    EXPECT_TRUE(sockets.ports.empty()) << net;
    EXPECT_EQ(sockets.disabled_by, std::string("NCCL_NET=") + net);
  }
  EXPECT_FALSE(PredictIbPorts(Hcas(), {{"NCCL_NET", "IB"}}).disabled);
  EXPECT_FALSE(PredictIbPorts(Hcas(), {{"NCCL_NET", "IB"}}).ports.empty());
}

// The GID table of NVIDIA/nccl #1131 (show_gids, mlx5_0 on ens3np0): per address one RoCE v1
// and one v2 entry; 0/1 link-local, 2/3 the IPv4-mapped 11.0.0.72.
std::vector<GidEntry> Gids1131() {
  return {
      {"mlx5_0", 1, 0, "fe80:0000:0000:0000:a288:c2ff:fe5b:03ec", "", "v1", "ens3np0"},
      {"mlx5_0", 1, 1, "fe80:0000:0000:0000:a288:c2ff:fe5b:03ec", "", "v2", "ens3np0"},
      {"mlx5_0", 1, 2, "0000:0000:0000:0000:0000:ffff:0b00:0048", "11.0.0.72", "v1", "ens3np0"},
      {"mlx5_0", 1, 3, "0000:0000:0000:0000:0000:ffff:0b00:0048", "11.0.0.72", "v2", "ens3np0"}};
}

TEST(NcclSelect, GidIndexIsTheSetOneOrTheRoceV2Ipv4Entry) {
  // Unset (or -1): NCCL >= 2.21 picks the RoCE v2 GID of an IPv4 address: index 3.
  ASSERT_NE(ChooseGid(Gids1131(), "mlx5_0", 1, {}), nullptr);
  EXPECT_EQ(ChooseGid(Gids1131(), "mlx5_0", 1, {})->index, 3);
  EXPECT_EQ(ChooseGid(Gids1131(), "mlx5_0", 1, {{"NCCL_IB_GID_INDEX", "-1"}})->index, 3);
  // Set: exactly that entry, even the link-local v2 one that #1131 could not use. ChooseGid
  // points into the table, so the table must outlive the pointer.
  const auto gids = Gids1131();
  const GidEntry* one = ChooseGid(gids, "mlx5_0", 1, {{"NCCL_IB_GID_INDEX", "1"}});
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->version, "v2");
  EXPECT_TRUE(one->ipv4.empty());
  EXPECT_EQ(ChooseGid(Gids1131(), "mlx5_0", 1, {{"NCCL_IB_GID_INDEX", "7"}}), nullptr);
  EXPECT_EQ(ChooseGid(Gids1131(), "mlx5_1", 1, {}), nullptr);
}

TEST(NcclSelect, ListParsingAndSubnets) {
  const NcclList l = ParseNcclList("^=mlx5_0:1,mlx5_1");
  EXPECT_TRUE(l.exclude);
  EXPECT_TRUE(l.exact);
  ASSERT_EQ(l.entries.size(), 2u);
  EXPECT_EQ(l.entries[0].prefix, "mlx5_0");
  EXPECT_EQ(l.entries[0].port, 1);
  EXPECT_EQ(l.entries[1].port, -1);
  EXPECT_EQ(SubnetOf({"inet", "192.168.1.11", 24, ""}), "192.168.1.0/24");
  EXPECT_EQ(SubnetOf({"inet", "10.0.0.13", 16, ""}), "10.0.0.0/16");
  EXPECT_EQ(SubnetOf({"inet", "10.1.2.3", 0, ""}), "0.0.0.0/0");
}

}  // namespace
}  // namespace strata::preflight

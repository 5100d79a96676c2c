// The node-state parsers: real command outputs (cited) read right; truncated and malformed input
// give an error naming the file, the line or field, and what was expected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "strata/preflight/bundle.h"
#include "strata/preflight/env_parse.h"
#include "strata/preflight/net_parse.h"
#include "strata/preflight/smi_parse.h"

namespace strata::preflight {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The header our collector asks for, with units as nvidia-smi prints them; the first row is the
// real H20 idle row of the formats reference 2.1 (28 MiB used of 97871 MiB).
constexpr const char* kGpuCsv =
    "index, uuid, name, memory.used [MiB], memory.total [MiB], utilization.gpu [%], "
    "clocks_throttle_reasons.active, "
    "ecc.errors.uncorrected.volatile.total, retired_pages.pending\n"
    "0, GPU-3f1a2b7c-0d4e-5f60-7182-93a4b5c6d7e0, NVIDIA H20, 28 MiB, 97871 MiB, 0 %, "
    "0x0000000000000001, 0, No\n"
    "5, GPU-8e6f70c1-5293-a4b5-c6d7-e8f90a1b2c35, NVIDIA H20, 81922 MiB, 97871 MiB, [N/A], "
    "0x0000000000000040, 2, Yes\n";

TEST(SmiParse, GpuCsvByHeaderName) {
  auto gpus = ParseGpuCsv(kGpuCsv, "gpus.csv");
  ASSERT_TRUE(gpus.ok()) << gpus.error().Format();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].index, 0);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA H20");
  EXPECT_DOUBLE_EQ(*(*gpus)[0].memory_used_mib, 28);
  EXPECT_DOUBLE_EQ(*(*gpus)[0].memory_total_mib, 97871);
  EXPECT_EQ((*gpus)[0].throttle_reasons, 0x1u);
  EXPECT_EQ((*gpus)[1].index, 5);
  EXPECT_FALSE((*gpus)[1].utilization_pct.has_value());  // [N/A]
  EXPECT_EQ((*gpus)[1].throttle_reasons, 0x40u);
  EXPECT_EQ((*gpus)[1].ecc_uncorrected, 2);
  EXPECT_EQ((*gpus)[1].retired_pages_pending, true);
  EXPECT_TRUE((*gpus)[1].query_errors.empty());  // [N/A] is a field without a value, not an error
  // A failed NVML query is kept with its column (audit52 K9), a [Not Supported] field is not.
  auto failed = ParseGpuCsv(
      "index, uuid, memory.used [MiB], utilization.gpu [%]\n"
      "3, GPU-043f, [GPU requires reset], [Not Supported]\n",
      "gpus.csv");
  ASSERT_TRUE(failed.ok()) << failed.error().Format();
  EXPECT_FALSE((*failed)[0].memory_used_mib.has_value());
  EXPECT_EQ((*failed)[0].query_errors,
            (std::map<std::string, std::string>{{"memory.used", "GPU requires reset"}}));
  // The reference's real shorter query reads too (column order is free).
  auto short_query = ParseGpuCsv(
      "index, name, memory.total [MiB], memory.used [MiB], utilization.gpu [%]\n"
      "0, NVIDIA H20, 97871 MiB, 28 MiB, 0 %\n",
      "g.csv");
  ASSERT_TRUE(short_query.ok());
  EXPECT_DOUBLE_EQ(*(*short_query)[0].memory_used_mib, 28);
}

TEST(SmiParse, GpuCsvErrors) {
  struct Case {
    const char* name;
    std::string input;
    std::string error;
  };
  const std::string header = "index, uuid, memory.used [MiB]\n";
  const std::vector<Case> cases = {
      {"truncated_row", header + "0, GPU-a, 28 MiB\n1, GPU-b",
       "gpus.csv:3: expected 3 cells as in the header, found 2 (a truncated file?)"},
      {"bad_number", header + "0, GPU-a, lots MiB\n",
       "gpus.csv:2: memory.used: 'lots MiB' is not a number (expected e.g. '97871 MiB' or "
       "'[N/A]')"},
      {"bad_index", header + "x, GPU-a, 1 MiB\n",
       "gpus.csv:2: index: GPU index 'x' is not an integer"},
      {"no_header", "0, GPU-a, 28 MiB\n",
       "gpus.csv:1: the header has no 'index' column (expected the header line of nvidia-smi "
       "--query-gpu)"},
      {"bad_bitmask", "index, memory.used [MiB], clocks_throttle_reasons.active\n0, 1 MiB, 4\n",
       "gpus.csv:2: clocks_throttle_reasons.active: '4' is not a hexadecimal bitmask such as "
       "0x0000000000000004"},
  };
  for (const Case& c : cases) {
    auto r = ParseGpuCsv(c.input, "gpus.csv");
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().Format(), c.error) << c.name;
  }
  auto empty = ParseGpuCsv("", "gpus.csv");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(SmiParse, ComputeApps) {
  // The header of `nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid
  // --format=csv`; a pid the driver lists without a visible process reads "[Not Found]".
  auto apps = ParseComputeAppsCsv(
      "pid, process_name, used_gpu_memory [MiB], gpu_uuid\n"
      "2291734, /usr/bin/python3.10, 81920 MiB, GPU-8e6f\n"
      "2291802, [Not Found], [N/A], GPU-9f70\n",
      "apps.csv");
  ASSERT_TRUE(apps.ok()) << apps.error().Format();
  ASSERT_EQ(apps->size(), 2u);
  EXPECT_EQ((*apps)[0].pid, 2291734);
  EXPECT_DOUBLE_EQ(*(*apps)[0].used_mib, 81920);
  EXPECT_EQ((*apps)[1].process_name, "[Not Found]");
  EXPECT_FALSE((*apps)[1].used_mib.has_value());
  // With noheader and no process the output is empty: no process.
  EXPECT_TRUE(ParseComputeAppsCsv("", "a.csv")->empty());
  EXPECT_TRUE(ParseComputeAppsCsv("pid, process_name, used_gpu_memory [MiB], gpu_uuid\n", "a.csv")
                  ->empty());
  auto cut = ParseComputeAppsCsv(
      "pid, process_name, used_gpu_memory [MiB], gpu_uuid\n2291734, /usr/bin/py", "a.csv");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().Format(),
            "a.csv:2: expected 4 cells as in the header, found 2 (a truncated file?)");
  auto bad = ParseComputeAppsCsv("pid, gpu_uuid\nabc, GPU-1\n", "a.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().Format(), "a.csv:2: pid: pid 'abc' is not an integer");
}

TEST(SmiParse, DriverBanner) {
  // speaches-ai/speaches PR #438 (verbatim banner line).
  auto classic = ParseDriverBanner(
      "| NVIDIA-SMI 570.133.20             Driver Version: 570.133.20     CUDA Version: 12.8     "
      "|\n",
      "smi.txt");
  ASSERT_TRUE(classic.ok());
  EXPECT_EQ(classic->driver_version, "570.133.20");
  EXPECT_EQ(classic->cuda_version, "12.8");
  // nvidia-smi -q (NVIDIA/nvidia-docker #1724): "Driver Version : 525.78.01 / CUDA Version : 12.0".
  auto q = ParseDriverBanner(
      "Driver Version                            : 525.78.01\n"
      "CUDA Version                              : 12.0\n",
      "q.txt");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->driver_version, "525.78.01");
  EXPECT_EQ(q->cuda_version, "12.0");
  // Driver 610+ renamed the fields (formats reference 2.4).
  auto renamed = ParseDriverBanner(
      "| NVIDIA-SMI 610.57.04              KMD Version: 610.57.04     CUDA UMD Version: 13.3     "
      "|\n",
      "n.txt");
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(renamed->driver_version, "610.57.04");
  EXPECT_EQ(renamed->cuda_version, "13.3");
  auto cut =
      ParseDriverBanner("| NVIDIA-SMI 570.133.20             Driver Version: 570.1", "smi.txt");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().Format(),
            "smi.txt: no 'Driver Version: X ... CUDA Version: Y' (or 'KMD Version' / 'CUDA UMD "
            "Version') found "
            "(expected the output of nvidia-smi or nvidia-smi -q)");
}

TEST(SmiParse, XidLines) {
  // The NVRM Xid line layout ("NVRM: Xid (PCI:<bus>): <code>, pid=..."); other lines ignored,
  // and a line cut before its code is skipped rather than misread.
  const auto xids = ParseXidLines(
      "[  123.456] NVRM: Xid (PCI:0000:3b:00): 79, pid=2291734, name=python3, GPU has fallen off "
      "the bus.\n"
      "[  124.000] eth0: link up\n"
      "[  125.000] NVRM: Xid (PCI:0000:86:00): ");
  ASSERT_EQ(xids.size(), 1u);
  EXPECT_EQ(xids[0].pci, "PCI:0000:3b:00");
  EXPECT_EQ(xids[0].code, 79);
}

TEST(NetParse, IpAddrAndRoute) {
  // The eth0 object of devlawey/filar PR #457 (real `ip -j` output) plus an address.
  auto ifs = ParseIpAddrJson(
      R"([{"ifindex":2,"ifname":"eth0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1500,"qdisc":"pfifo_fast","operstate":"UP","linkmode":"DEFAULT","group":"default","txqlen":1000,"link_type":"ether","address":"08:00:27:db:31:88","broadcast":"ff:ff:ff:ff:ff:ff","addr_info":[{"family":"inet","local":"10.0.0.11","prefixlen":24,"scope":"global"},{}]},
          {"ifindex":3,"ifname":"swp1","flags":["BROADCAST","MULTICAST"],"mtu":1500,"qdisc":"noop","operstate":"DOWN"}])",
      "ip-addr.json");
  ASSERT_TRUE(ifs.ok()) << ifs.error().Format();
  ASSERT_EQ(ifs->size(), 2u);
  EXPECT_TRUE((*ifs)[0].Running());
  EXPECT_FALSE((*ifs)[1].Running());
  ASSERT_EQ((*ifs)[0].addresses.size(), 1u);
  EXPECT_EQ((*ifs)[0].addresses[0].local, "10.0.0.11");
  auto routes = ParseIpRouteJson(
      R"([{"dst":"default","gateway":"10.0.0.1","dev":"eth0","protocol":"static","metric":100,"flags":[]}])",
      "ip-route.json");
  ASSERT_TRUE(routes.ok());
  EXPECT_EQ((*routes)[0].dev, "eth0");

  struct Case {
    const char* name;
    std::string input;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"not_array", R"({"ifname":"eth0"})",
       "ip-addr.json: expected a JSON array (the output of ip -j addr)"},
      {"no_name", R"([{"ifindex":1}])",
       "ip-addr.json: [0].ifname: missing (expected the output of ip -j)"},
      {"bad_flags", R"([{"ifname":"eth0","flags":"UP"}])",
       "ip-addr.json: [0].flags: expected an array of strings"},
      {"bad_prefix",
       R"([{"ifname":"eth0","addr_info":[{"family":"inet","local":"1.2.3.4","prefixlen":"24"}]}])",
       "ip-addr.json: [0].addr_info[0].prefixlen: expected an integer from 0 to 128"},
      // Fuzz finding 13: an IPv4 prefix of 48 reached the netmask shift (32 - 48: undefined).
      {"ipv4_prefix_over_32",
       R"([{"ifname":"eth0","addr_info":[{"family":"inet","local":"10.0.0.13","prefixlen":48}]}])",
       "ip-addr.json: [0].addr_info[0].prefixlen: expected an integer from 0 to 32 for an IPv4 "
       "(inet) address, got 48"},
  };
  for (const Case& c : cases) {
    auto r = ParseIpAddrJson(c.input, "ip-addr.json");
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().Format(), c.error) << c.name;
  }
  auto cut = ParseIpAddrJson(R"([{"ifindex":2,"ifname":"eth0","fla)", "ip-addr.json");
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(cut.error().Format(), StartsWith("ip-addr.json: byte "));
  EXPECT_THAT(cut.error().Format(), HasSubstr("not valid JSON"));
  auto bad_route = ParseIpRouteJson(R"([{"dev":"eth0"}])", "ip-route.json");
  ASSERT_FALSE(bad_route.ok());
  EXPECT_EQ(bad_route.error().Format(),
            "ip-route.json: [0].dst: missing (expected the output of ip -j)");
}

TEST(NetParse, RdmaDevices) {
  // imbue-ai/cluster-health #4 (verbatim spacing).
  auto ports = ParseIbdev2netdev(
      "mlx5_0   port  1  ==>  ibp26s0        (Down)\n"
      "mlx5_1   port  1  ==>  enp27s0f0np0   (Up)\n",
      "ibdev2netdev.txt");
  ASSERT_TRUE(ports.ok()) << ports.error().Format();
  ASSERT_EQ(ports->size(), 2u);
  EXPECT_EQ((*ports)[1].netdev, "enp27s0f0np0");
  EXPECT_EQ((*ports)[0].netdev_up, false);
  // deepseek-ai/3FS PR #283 (RoCE, trailing space) and ROCm/rccl #1423 (IB, no netdev).
  ASSERT_TRUE(
      MergeRdmaLink(
          "link mlx5_1/1 state ACTIVE physical_state LINK_UP netdev enp27s0f0np0 \n"
          "link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state DOWN "
          "physical_state POLLING\n",
          "rdma-link.txt", *ports)
          .ok());
  ASSERT_EQ(ports->size(), 3u);
  EXPECT_EQ((*ports)[1].port_active, true);
  EXPECT_EQ((*ports)[2].device, "mlx5_7");
  EXPECT_EQ((*ports)[2].port_active, false);

  auto bad = ParseIbdev2netdev("mlx5_0 port 1 ==> eth0\n", "i.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().Format(),
            "i.txt:1: 'mlx5_0 port 1 ==> eth0' is not '<ibdev> port <n> ==> <netdev> (Up|Down)'");
  auto bad_state = ParseIbdev2netdev("mlx5_0 port 1 ==> eth0 (Maybe)\n", "i.txt");
  ASSERT_FALSE(bad_state.ok());
  EXPECT_EQ(bad_state.error().Format(), "i.txt:1: state 'Maybe' is neither Up nor Down");
  std::vector<RdmaPort> none;
  auto bad_link = MergeRdmaLink("link mlx5_1 state ACTIVE\n", "r.txt", none);
  ASSERT_FALSE(bad_link.ok());
  EXPECT_EQ(bad_link.error().Format(),
            "r.txt:1: 'link mlx5_1 state ACTIVE' is not 'link <dev>/<port> state <STATE> ...'");
  auto cut_link =
      MergeRdmaLink("link mlx5_1/1 physical_state LINK_UP netdev e\nlink mlx5_2/", "r.txt", none);
  ASSERT_FALSE(cut_link.ok());
  EXPECT_EQ(cut_link.error().Format(), "r.txt:1: no 'state <STATE>' on the line");
}

TEST(NetParse, ShowGids) {
  // NVIDIA/nccl #1131 (spaces) and NVIDIA/nccl #1573 (tabs), verbatim rows.
  auto gids = ParseShowGids(
      "DEV     PORT    INDEX   GID                                     IPv4            VER     "
      "DEV\n"
      "---     ----    -----   ---                                     ------------    ---     "
      "---\n"
      "mlx5_0  1       0       fe80:0000:0000:0000:a288:c2ff:fe5b:03ec                 v1      "
      "ens3np0\n"
      "mlx5_0  1       3       0000:0000:0000:0000:0000:ffff:0b00:0048 11.0.0.72       v2      "
      "ens3np0\n"
      "mlx5_0\t1\t7\t0000:0000:0000:0000:0000:ffff:0a98:000c\t10.152.0.12  \tv2\tnet1\n"
      "n_gids_found=3\n",
      "gids.txt");
  ASSERT_TRUE(gids.ok()) << gids.error().Format();
  ASSERT_EQ(gids->size(), 3u);
  EXPECT_EQ((*gids)[0].ipv4, "");
  EXPECT_EQ((*gids)[0].version, "v1");
  EXPECT_EQ((*gids)[1].index, 3);
  EXPECT_EQ((*gids)[1].ipv4, "11.0.0.72");
  EXPECT_EQ((*gids)[2].netdev, "net1");
  auto cut = ParseShowGids("mlx5_0  1       3       0000:0000:0000:0000:0000:ffff:0b00:0048 11.0.0",
                           "g.txt");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().Format(),
            "g.txt:1: 'mlx5_0  1       3       0000:0000:0000:0000:0000:ffff:0b00:0048 11.0.0' is "
            "not a show_gids row "
            "(DEV PORT INDEX GID IPv4 VER DEV)");
  auto bad = ParseShowGids("mlx5_0 1 3 fe80::1 v3 eth0\n", "g.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().Format(), "g.txt:1: version 'v3' is neither v1 nor v2");
}

TEST(EnvParse, ShellEnvAttributesEachVariableToTheFileThatSetIt) {
  // Incident 6: the node's global bashrc overrides what /etc/profile exported.
  auto shells = ParseShellEnv(
      "== login (start)\n"
      "NCCL_DEBUG=WARN\n"
      "== login /etc/profile\n"
      "NCCL_DEBUG=WARN\n"
      "NCCL_SOCKET_IFNAME==ens1np0\n"
      "== non-interactive (start)\n"
      "== non-interactive /etc/bash.bashrc\n"
      "NCCL_SOCKET_IFNAME=eth0\n"
      "NCCL_DEBUG_SUBSYS=ALL\n"
      "== non-interactive ~/.bashrc\n"
      "NCCL_SOCKET_IFNAME=eth0\n"
      "NCCL_DEBUG_SUBSYS=INIT=x\n",
      "shell-env.txt");
  ASSERT_TRUE(shells.ok()) << shells.error().Format();
  ASSERT_EQ(shells->size(), 2u);
  const ShellEnv& login = (*shells)[0];
  EXPECT_EQ(login.files, std::vector<std::string>{"/etc/profile"});
  EXPECT_EQ(login.vars.at("NCCL_DEBUG").file, "(inherited)");  // unchanged since the start
  EXPECT_EQ(login.vars.at("NCCL_SOCKET_IFNAME").file, "/etc/profile");
  const ShellEnv& batch = (*shells)[1];
  EXPECT_EQ(batch.vars.at("NCCL_SOCKET_IFNAME").value, "eth0");
  EXPECT_EQ(batch.vars.at("NCCL_SOCKET_IFNAME").file, "/etc/bash.bashrc");  // ~/.bashrc kept it
  EXPECT_EQ(batch.vars.at("NCCL_DEBUG_SUBSYS").value, "INIT=x");  // split on the first '='
  EXPECT_EQ(batch.vars.at("NCCL_DEBUG_SUBSYS").file, "~/.bashrc");
  EXPECT_EQ(batch.vars.count("NCCL_DEBUG"), 0u);

  struct Case {
    const char* name;
    std::string input;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"empty", "", "s.txt: no '== <shell> (start)' section (a truncated file?)"},
      {"var_first", "NCCL_DEBUG=INFO\n",
       "s.txt:1: a variable before the first '== <shell> (start)' line"},
      {"no_equals", "== login (start)\nNCCL_DEBUG\n", "s.txt:2: 'NCCL_DEBUG' is not KEY=VALUE"},
      {"bad_key", "== login (start)\n1X=2\n", "s.txt:2: '1X=2' is not KEY=VALUE"},
      {"no_start", "== login /etc/profile\n",
       "s.txt:1: section '== login /etc/profile' comes before '== login (start)'"},
      {"cut_header", "== login (start)\n==", "s.txt:2: '==' is not KEY=VALUE"},
  };
  for (const Case& c : cases) {
    auto r = ParseShellEnv(c.input, "s.txt");
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().Format(), c.error) << c.name;
  }
}

TEST(EnvParse, NcclConfAndVersions) {
  // The NCCL docs' own /etc/nccl.conf example.
  auto conf =
      ParseNcclConf("# site defaults\nNCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME==ens1f0\n", "nccl.conf");
  ASSERT_TRUE(conf.ok());
  EXPECT_EQ(conf->at("NCCL_SOCKET_IFNAME"), "=ens1f0");
  auto bad = ParseNcclConf("NCCL_DEBUG WARN\n", "nccl.conf");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().Format(), "nccl.conf:1: 'NCCL_DEBUG WARN' is not KEY=VALUE");
  auto v = ParseVersions("torch 2.11.0+cu128\nvllm 0.19.1\nsglang -\n", "versions.txt");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->at("torch"), "2.11.0+cu128");
  EXPECT_EQ(v->count("sglang"), 0u);
  auto cut = ParseVersions("torch 2.11.0\nvllm", "versions.txt");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().Format(),
            "versions.txt:2: 'vllm' is not '<package> <version>' (or '<package> -')");
}

TEST(Bundle, ManifestIsStrict) {
  NodeState s;
  auto ok = ParseManifestInto(R"({"schema_version":1,"kind":"node_state","host":"n1","uid":1000,
    "processes":[{"pid":5,"exists":false,"state":"","cmdline":"","env":{"RANK":"3"}}],"notes":["x"]})",
                              "m.json", s);
  ASSERT_TRUE(ok.ok()) << ok.error().Format();
  EXPECT_EQ(s.host, "n1");
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_FALSE(s.processes[0].exists);
  EXPECT_TRUE(s.processes[0].trainer());
  struct Case {
    const char* name;
    std::string input;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"kind", R"({"schema_version":1,"kind":"hang_bundle","host":"n"})",
       "m.json: kind: expected \"kind\": \"node_state\" (is this a node-state bundle?)"},
      {"unknown", R"({"schema_version":1,"kind":"node_state","host":"n","hosts":1})",
       "m.json: hosts: unknown key 'hosts' (expected one of: schema_version, kind, strata_version, "
       "host, time_utc, uid, "
       "processes, notes)"},
      {"pid_type",
       R"({"schema_version":1,"kind":"node_state","host":"n","processes":[{"pid":"5"}]})",
       "m.json: processes[0].pid: expected an integer"},
      {"version", R"({"schema_version":9,"kind":"node_state","host":"n"})",
       "m.json: schema_version: unsupported schema_version (this strata reads 1)"},
  };
  for (const Case& c : cases) {
    NodeState t;
    auto r = ParseManifestInto(c.input, "m.json", t);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().Format(), c.error) << c.name;
  }
  NodeState t;
  auto cut = ParseManifestInto(R"({"schema_version":1,"kind":"node_st)", "m.json", t);
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(cut.error().Format(), StartsWith("m.json: byte "));
}

// ibstat as rdma-core prints it (formats reference 2.6, linux-rdma/rdma-core#847's layout).
TEST(NetParse, Ibstat) {
  auto cas = ParseIbstat(
      "CA 'mlx4_0'\n\tCA type: MT4099\n\tNumber of ports: 2\n\tFirmware version: 2.42.5000\n"
      "\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tRate: 10\n"
      "\tPort 2:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 56\n"
      "\t\tBase lid: 0\n\t\tLink layer: InfiniBand\n",
      "ibstat.txt");
  ASSERT_TRUE(cas.ok()) << cas.error().Format();
  ASSERT_EQ(cas->size(), 1u);
  EXPECT_EQ((*cas)[0].firmware, "2.42.5000");
  ASSERT_EQ((*cas)[0].ports.size(), 2u);
  EXPECT_EQ((*cas)[0].ports[1].port, 2);
  EXPECT_EQ((*cas)[0].ports[1].state, "Active");
  EXPECT_EQ((*cas)[0].ports[1].rate_gbps, 56.0);
  EXPECT_EQ((*cas)[0].ports[1].link_layer, "InfiniBand");
  // Truncated and malformed input: a clear error with the line, never a crash.
  auto truncated = ParseIbstat("CA 'mlx5_1\n", "ibstat.txt");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().Format().find("ibstat.txt:1"), std::string::npos)
      << truncated.error().Format();
  auto bad_rate = ParseIbstat("CA 'mlx5_1'\n\tPort 1:\n\t\tRate: fast\n", "ibstat.txt");
  ASSERT_FALSE(bad_rate.ok());
  EXPECT_NE(bad_rate.error().Format().find("Rate"), std::string::npos);
  EXPECT_FALSE(ParseIbstat("\tState: Active\n", "ibstat.txt").ok());  // a key before any CA
  EXPECT_TRUE(ParseIbstat("", "ibstat.txt")->empty());
}

// gpu-repair.csv merged into gpus.csv's rows by index; an index gpus.csv does not have, or a
// value that is neither Yes nor No, is an error naming the field.
TEST(SmiParse, GpuRepairCsvMerges) {
  auto gpus = ParseGpuCsv(kGpuCsv, "gpus.csv");
  ASSERT_TRUE(gpus.ok());
  ASSERT_TRUE(MergeGpuRepairCsv("index, remapped_rows.pending, remapped_rows.failure, "
                                "gpu_recovery_action\n5, Yes, No, Reset\n",
                                "gpu-repair.csv", *gpus)
                  .ok());
  EXPECT_EQ((*gpus)[1].remap_pending, true);
  EXPECT_EQ((*gpus)[1].remap_failure, false);
  EXPECT_EQ((*gpus)[1].recovery_action, "Reset");
  EXPECT_FALSE((*gpus)[0].remap_pending.has_value());
  EXPECT_FALSE(MergeGpuRepairCsv("index, remapped_rows.pending\n9, No\n", "r.csv", *gpus).ok());
  auto bad = MergeGpuRepairCsv("index, remapped_rows.pending\n0, Maybe\n", "r.csv", *gpus);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("remapped_rows.pending"), std::string::npos);
  EXPECT_FALSE(MergeGpuRepairCsv("index, remapped_rows.pending\n0\n", "r.csv", *gpus).ok());
}

}  // namespace
}  // namespace strata::preflight

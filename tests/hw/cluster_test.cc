#include "strata/hw/cluster.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::cluster_test {
namespace {

TEST(Cluster, ReferenceClusterLoadsByName) {
  auto c = LoadCluster("h20-5x8");
  ASSERT_TRUE(c.ok()) << c.error().Format();
  EXPECT_EQ(c->nodes, 5);
  EXPECT_EQ(c->gpus_per_node, 8);
  EXPECT_EQ(c->world_size(), 40);
  EXPECT_EQ(c->gpu.name, "H20");
  EXPECT_EQ(c->fabric, IntraNodeFabric::kNvSwitch);
  EXPECT_EQ(c->DataTransport(), NicTransport::kRoce);
  // 4 x 200 Gb/s = 800 Gb/s = 100 GB/s per node; / 8 GPUs = 12.5 GB/s per GPU.
  EXPECT_NEAR(c->DataNicBandwidthPerNode().gb_per_s(), 100.0, 1e-9);
  EXPECT_NEAR(c->DataNicBandwidthPerGpu().gb_per_s(), 12.5, 1e-9);
  // 1 x 25 Gb/s management = 3.125 GB/s.
  EXPECT_NEAR(c->ManagementBandwidthPerNode().gb_per_s(), 3.125, 1e-9);
  ASSERT_EQ(c->storage.size(), 1u);
  EXPECT_EQ(c->storage[0].kind, StorageKind::kNfs);
  EXPECT_TRUE(c->storage[0].shared);
}

TEST(Cluster, ShippedClustersAllLoad) {
  struct Case {
    const char* name;
    const char* gpu;
    double data_gb_per_s_per_node;  // count x speed / 8
  };
  const Case cases[] = {
      {"h20-5x8", "H20", 4 * 200 / 8.0},
      {"h100-8x8-ib400", "H100 SXM", 8 * 400 / 8.0},  // 400 GB/s
      {"a100-8x200g", "A100 80GB", 8 * 200 / 8.0},    // 200 GB/s
      // NVL72 racks: 72 NICs, one per GPU; 72 x 400 Gb/s / 8 = 3,600 GB/s, 72 x 800 = 7,200.
      {"gb200-nvl72", "GB200", 72 * 400 / 8.0},
      {"gb300-nvl72", "GB300", 72 * 800 / 8.0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto cluster = LoadCluster(c.name);
    ASSERT_TRUE(cluster.ok()) << cluster.error().Format();
    EXPECT_EQ(cluster->gpu.name, c.gpu);
    EXPECT_NEAR(cluster->DataNicBandwidthPerNode().gb_per_s(), c.data_gb_per_s_per_node, 1e-9);
  }
}

TEST(Cluster, UnknownNameSuggests) {
  auto c = LoadCluster("h20-5x9");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().Format(),
            "unknown cluster 'h20-5x9' (not a file, and not a name under data/clusters/)\n"
            "  hint: did you mean 'h20-5x8'?");
  auto missing = LoadCluster("/nonexistent/dir/c.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().Format().find("/nonexistent/dir/c.yaml"), std::string::npos);
}

// A valid file; each bad case replaces one line.
constexpr const char* kGood =
    "name: t\n"                         // 1
    "nodes: 2\n"                        // 2
    "gpus_per_node: 8\n"                // 3
    "gpu: H20\n"                        // 4
    "intra_node_fabric: nvswitch\n"     // 5
    "pcie_generation: 5\n"              // 6
    "nics:\n"                           // 7
    "  - name: roce\n"                  // 8
    "    count: 4\n"                    // 9
    "    speed: 200Gb/s\n"              // 10
    "    transport: roce\n"             // 11
    "    role: data\n"                  // 12
    "storage:\n"                        // 13
    "  - name: nfs\n"                   // 14
    "    kind: nfs\n"                   // 15
    "    bandwidth_per_node: 1GB/s\n";  // 16

std::string Replace(const std::string& from, const std::string& to) {
  std::string text = kGood;
  const size_t at = text.find(from);
  if (at == std::string::npos) return "MISSING " + from;
  text.replace(at, from.size(), to);
  return text;
}

struct BadCase {
  const char* name;
  std::string text;
  const char* expected;  // Error::Format(), "" = must parse
};

TEST(Cluster, BadFilesNameTheField) {
  const BadCase cases[] = {
      {"baseline parses", kGood, ""},
      {"empty", "", "c.yaml: the file is empty, expected a YAML mapping"},
      {"not a mapping", "- 1\n- 2\n", "c.yaml:1: expected a mapping of key: value"},
      {"truncated after gpu", "name: t\nnodes: 2\ngpus_per_node: 8\ngpu: H20\n",
       "c.yaml:1: intra_node_fabric: missing required field"},
      {"zero nodes", Replace("nodes: 2", "nodes: 0"),
       "c.yaml:2: nodes: expected a positive integer, got 0"},
      {"gpus per node not a number", Replace("gpus_per_node: 8", "gpus_per_node: eight"),
       "c.yaml:3: gpus_per_node: expected an integer, got 'eight'"},
      {"unknown gpu", Replace("gpu: H20", "gpu: H2O"),
       "c.yaml:4: gpu: unknown GPU 'H2O'\n  hint: did you mean 'H20'?"},
      {"unknown fabric", Replace("nvswitch", "nvswich"),
       "c.yaml:5: intra_node_fabric: unknown intra_node_fabric 'nvswich' (expected one of: "
       "nvswitch, nvlink_mesh, pcie)\n  hint: did you mean 'nvswitch'?"},
      {"nvswitch on a PCIe-only part", Replace("gpu: H20", "gpu: L40S"),
       "c.yaml:5: intra_node_fabric: 'nvswitch' needs a GPU with NVLink, but L40S has none\n"
       "  hint: use intra_node_fabric: pcie"},
      {"pcie generation out of range", Replace("pcie_generation: 5", "pcie_generation: 9"),
       "c.yaml:6: pcie_generation: expected a PCIe generation from 3 to 6, got 9"},
      {"nic speed without unit", Replace("200Gb/s", "200"),
       "c.yaml:10: nics[0].speed: '200' has no unit (expected one of: B/s, KB/s, MB/s, GB/s, "
       "TB/s, Kb/s, Mb/s, Gb/s, Tb/s, Mbps, Gbps, GiB/s)\n  hint: write the unit with its rate: "
       "400Gb/s (bits) or 50GB/s (bytes)"},
      {"nic speed bare G", Replace("200Gb/s", "200G"),
       "c.yaml:10: nics[0].speed: unknown unit 'G' in '200G' (expected one of: B/s, KB/s, MB/s, "
       "GB/s, TB/s, Kb/s, Mb/s, Gb/s, Tb/s, Mbps, Gbps, GiB/s)\n  hint: write the unit with its "
       "rate: 400Gb/s (bits) or 50GB/s (bytes)"},
      // Bytes written for bits: a 400 Gb/s NIC as "400GB/s" is 3,200 Gb/s, more than the
      // 63 GB/s per direction of the PCIe Gen5 x16 slot it sits in (data/interconnects.yaml).
      {"nic faster than its pcie slot", Replace("200Gb/s", "400GB/s"),
       "c.yaml:10: nics[0].speed: NIC 'roce' at 400 GB/s (3200 Gb/s) is faster than its PCIe "
       "Gen5 x16 slot (63.00 GB/s per direction): no such NIC exists\n  hint: NIC speeds are "
       "quoted in bits: did you mean 400Gb/s?"},
      {"nic zero count", Replace("count: 4", "count: 0"),
       "c.yaml:9: nics[0].count: expected a positive integer, got 0"},
      {"unknown transport", Replace("transport: roce", "transport: rocev2"),
       "c.yaml:11: nics[0].transport: unknown transport 'rocev2' (expected one of: roce, "
       "infiniband, ethernet)\n  hint: did you mean 'roce'?"},
      {"unknown role", Replace("role: data", "role: compute"),
       "c.yaml:12: nics[0].role: unknown role 'compute' (expected one of: data, management)"},
      {"misspelt nic key", Replace("    role: data\n", "    role: data\n    sped: 1Gb/s\n"),
       "c.yaml:13: nics[0].sped: unknown field 'sped'\n  hint: did you mean 'speed'?"},
      {"no data nic on a multi-node cluster", Replace("role: data", "role: management"),
       "c.yaml:8: nics: 2 nodes but no NIC with role: data; collectives between nodes need a "
       "data network\n  hint: add the RoCE/InfiniBand NICs with role: data"},
      {"empty nic list",
       Replace("nics:\n  - name: roce\n    count: 4\n    speed: 200Gb/s\n"
               "    transport: roce\n    role: data\n",
               "nics: []\n"),
       "c.yaml:7: nics: expected a non-empty list"},
      {"storage without unit", Replace("1GB/s", "fast"),
       "c.yaml:16: storage[0].bandwidth_per_node: expected a bandwidth with a unit, got 'fast'"},
      {"unknown storage kind", Replace("kind: nfs", "kind: nfs4"),
       "c.yaml:15: storage[0].kind: unknown kind 'nfs4' (expected one of: nfs, lustre, "
       "local_nvme)\n  hint: did you mean 'nfs'?"},
      {"misspelt top-level key", Replace("nodes: 2", "nodes: 2\nnodez: 2"),
       "c.yaml:3: nodez: unknown field 'nodez'\n  hint: did you mean 'nodes'?"},
      {"unknown source key", std::string(kGood) + "sources:\n  nicks: x\n",
       "c.yaml:18: sources.nicks: unknown field 'nicks'\n  hint: did you mean 'nics'?"},
      {"malformed yaml", Replace("nics:\n", "nics: [\n"), ""},
      // A node used in part keeps its GPUs' NICs only when each GPU has its own: 4 NICs for 8
      // GPUs cannot be split.
      {"partial nodes without a NIC per GPU", std::string(kGood) + "partial_nodes: true\n",
       "c.yaml:17: partial_nodes: a node used in part keeps one data NIC per GPU, but data NIC "
       "'roce' has 4 per node for 8 GPUs\n  hint: describe one data NIC per GPU, or drop "
       "partial_nodes"},
      {"partial nodes not a bool", Replace("count: 4", "count: 8") + "partial_nodes: maybe\n",
       "c.yaml:17: partial_nodes: expected true or false, got 'maybe'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto cluster = ParseCluster(c.text, "c.yaml");
    if (std::string(c.name) == "malformed yaml") {
      ASSERT_FALSE(cluster.ok());
      EXPECT_EQ(cluster.error().file, "c.yaml");
      EXPECT_GT(cluster.error().line, 0);
      EXPECT_EQ(cluster.error().message.rfind("malformed YAML", 0), 0u);
      continue;
    }
    if (std::string(c.expected).empty()) {
      EXPECT_TRUE(cluster.ok()) << cluster.error().Format();
      continue;
    }
    ASSERT_FALSE(cluster.ok());
    EXPECT_EQ(cluster.error().Format(), c.expected);
  }
}

// A GB200 NVL72 rack used in part: 8 of its 72 GPUs (an 8-GPU recipe) or 64 of each rack.
TEST(Cluster, RackUsedInPartKeepsOneNicPerGpu) {
  auto rack = LoadCluster("gb200-nvl72");
  ASSERT_TRUE(rack.ok()) << rack.error().Format();
  EXPECT_TRUE(rack->partial_nodes);
  auto part = WithGpusPerNode(*rack, 8);
  ASSERT_TRUE(part.ok()) << part.error().Format();
  EXPECT_EQ(part->gpus_per_node, 8);
  // 8 ConnectX-7 at 400 Gb/s = 400 GB/s for the 8 GPUs: 50 GB/s each, as on the whole rack.
  EXPECT_NEAR(part->DataNicBandwidthPerNode().gb_per_s(), 400.0, 1e-9);
  EXPECT_NEAR(part->DataNicBandwidthPerGpu().gb_per_s(), 50.0, 1e-9);
  EXPECT_NEAR(rack->DataNicBandwidthPerGpu().gb_per_s(), 50.0, 1e-9);
  // The management port is the rack's, not split.
  EXPECT_NEAR(part->ManagementBandwidthPerNode().gb_per_s(), 12.5, 1e-9);
  // More GPUs than the rack has, or part of a node whose NICs are not one per GPU: refused.
  EXPECT_FALSE(WithGpusPerNode(*rack, 73).ok());
  auto pod = LoadCluster("h100-8x8-ib400");
  ASSERT_TRUE(pod.ok());
  auto half = WithGpusPerNode(*pod, 4);
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.error().message,
            "cluster h100-8x8-ib400 has 8 GPUs per node and its NICs are wired to them; 4 GPUs "
            "per node is another node");
}

// An RL split that shares each h20-5x8 node (4 x 200 Gb/s = 4 x 25 GB/s RoCE, one NIC per GPU
// pair) between rollout and trainer: the trainer's GPUs keep the node's 100 GB/s / 8 = 12.5 GB/s
// each. 6 GPUs take 4 x 6 / 8 = 3 NICs: 75 GB/s. 3 GPUs would take 1.5 NICs, so the 4 NICs' speed
// scales instead: 200 x 3 / 8 = 75 Gb/s each, 4 x 9.375 = 37.5 GB/s. The management port stays.
// Before, a node of a cluster without partial_nodes could not be used in part at all.
TEST(Cluster, SharedNodesKeepTheDataBandwidthPerGpu) {
  auto c = LoadCluster("h20-5x8");
  ASSERT_TRUE(c.ok()) << c.error().Format();
  EXPECT_FALSE(c->partial_nodes);
  auto six = SharedNodes(*c, 6);
  ASSERT_TRUE(six.ok()) << six.error().Format();
  EXPECT_EQ(six->gpus_per_node, 6);
  EXPECT_NEAR(six->DataNicBandwidthPerNode().gb_per_s(), 75.0, 1e-9);
  EXPECT_NEAR(six->DataNicBandwidthPerGpu().gb_per_s(), 12.5, 1e-9);
  auto three = SharedNodes(*c, 3);
  ASSERT_TRUE(three.ok()) << three.error().Format();
  EXPECT_NEAR(three->DataNicBandwidthPerNode().gb_per_s(), 37.5, 1e-9);
  EXPECT_NEAR(three->DataNicBandwidthPerGpu().gb_per_s(), 12.5, 1e-9);
  EXPECT_NEAR(three->ManagementBandwidthPerNode().gb_per_s(),
              c->ManagementBandwidthPerNode().gb_per_s(), 1e-9);
  EXPECT_FALSE(SharedNodes(*c, 9).ok());
  EXPECT_FALSE(SharedNodes(*c, 0).ok());
}

TEST(Cluster, DuplicateNicNameNamesTheEntry) {
  std::string text = kGood;
  text.replace(text.find("storage:"), 0,
               "  - name: roce\n    count: 1\n    speed: 25Gb/s\n    transport: ethernet\n"
               "    role: management\n");
  auto cluster = ParseCluster(text, "c.yaml");
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.error().message, "NIC name 'roce' appears twice");
  EXPECT_EQ(cluster.error().field, "nics[1].name");
}

}  // namespace
}  // namespace strata::cluster_test

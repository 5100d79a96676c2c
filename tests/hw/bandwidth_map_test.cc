#include "strata/hw/bandwidth_map.h"

#include <gtest/gtest.h>

#include <string>

#include "support/golden.h"

namespace strata {
namespace {

// The reference cluster's map, by hand from the datasheets and the cluster file:
//   HBM 4.0 TB/s per GPU, x 8 = 32 TB/s per node
//   NVLink 900 GB/s bidirectional = 450 GB/s per direction; x 8 = 3.6 TB/s      4000/450 = 8.89x
//   PCIe Gen5 x16 63 GB/s per direction; x 8 = 504 GB/s                           450/63 = 7.14x
//   RoCE 4 x 200 Gb/s = 100 GB/s per node, / 8 = 12.5 GB/s per GPU              63/12.5 = 5.04x
//   eth0 25 Gb/s = 3.125 GB/s per node, / 8 = 0.390625 GB/s per GPU       12.5/0.390625 = 32x
//   NFS 1 GB/s per node, / 8 = 0.125 GB/s per GPU                         0.390625/0.125 = 3.125x
TEST(BandwidthMap, ReferenceCluster) {
  auto cluster = LoadCluster("h20-5x8");
  ASSERT_TRUE(cluster.ok());
  auto links = LoadInterconnects();
  ASSERT_TRUE(links.ok()) << links.error().Format();
  auto map = BuildBandwidthMap(*cluster, *links);
  ASSERT_TRUE(map.ok());
  struct Row {
    MapLevelKind kind;
    const char* name;
    double per_gpu_gbps, per_node_gbps, slower;
  };
  const Row rows[] = {
      {MapLevelKind::kHbm, "HBM", 4000, 32000, 0},
      {MapLevelKind::kGpuFabric, "NVSwitch (NVLink4)", 450, 3600, 4000.0 / 450},
      {MapLevelKind::kPcie, "PCIe Gen5 x16", 63, 504, 450.0 / 63},
      {MapLevelKind::kDataNic, "RoCE 4 x 200Gb/s", 12.5, 100, 63 / 12.5},
      {MapLevelKind::kManagementNic, "management 1 x 25Gb/s (eth0)", 0.390625, 3.125, 32},
      {MapLevelKind::kStorage, "NFS (nfs)", 0.125, 1, 3.125},
  };
  ASSERT_EQ(map->levels.size(), std::size(rows));
  for (size_t i = 0; i < std::size(rows); ++i) {
    SCOPED_TRACE(rows[i].name);
    const MapLevel& l = map->levels[i];
    EXPECT_EQ(l.kind, rows[i].kind);
    EXPECT_EQ(l.name, rows[i].name);
    EXPECT_NEAR(l.per_gpu.gb_per_s(), rows[i].per_gpu_gbps, 1e-9);
    EXPECT_NEAR(l.per_node.gb_per_s(), rows[i].per_node_gbps, 1e-9);
    EXPECT_NEAR(l.slower_than_above, rows[i].slower, 1e-9);
  }
  EXPECT_EQ(map->levels[1].note, "900 GB/s bidirectional per GPU");
}

TEST(BandwidthMap, PcieOnlyNodeHasNoFabricLevel) {
  const char* text =
      "name: l40s\nnodes: 1\ngpus_per_node: 4\ngpu: L40S\nintra_node_fabric: pcie\n"
      "pcie_generation: 4\nnics:\n  - name: eth0\n    count: 1\n    speed: 10Gb/s\n"
      "    transport: ethernet\n    role: management\n";
  auto cluster = ParseCluster(text, "l40s.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.error().Format();
  auto map = BuildBandwidthMap(*cluster, *LoadInterconnects());
  ASSERT_TRUE(map.ok());
  ASSERT_EQ(map->levels.size(), 3u);  // HBM (GDDR), PCIe, management
  EXPECT_EQ(map->levels[1].kind, MapLevelKind::kPcie);
  // 864 GB/s GDDR6 over 31.5 GB/s PCIe Gen4 x16: 27.4x.
  EXPECT_NEAR(map->levels[1].slower_than_above, 864 / 31.5, 1e-9);
}

TEST(Interconnects, ShippedCalibrationHasEveryLevelAndSource) {
  auto links = LoadInterconnects();
  ASSERT_TRUE(links.ok()) << links.error().Format();
  for (const auto& name : RequiredLevelNames()) {
    SCOPED_TRACE(name);
    const LinkCalibration& l = links->Level(name);
    EXPECT_GT(l.latency.s(), 0);
    EXPECT_FALSE(l.sources.at("latency").empty());
    if (l.busbw_fraction) {
      EXPECT_FALSE(l.sources.at("busbw_fraction").empty());
    }
  }
  // NCCL maintainer, NVIDIA/nccl-tests#212: 370 of 450 GB/s effective on NVLink4.
  EXPECT_NEAR(*links->Level("nvswitch").busbw_fraction, 370.0 / 450, 1e-3);
  EXPECT_TRUE(links->SupportsNvls("NVLink4"));
  EXPECT_FALSE(links->SupportsNvls("NVLink3"));
  EXPECT_NEAR(links->pcie_x16_per_direction.at(5).gb_per_s(), 63.0, 1e-9);
}

TEST(Interconnects, BadCalibrationNamesTheField) {
  auto missing = ParseInterconnects("nccl_base_latency: 8.4\n", "i.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().Format(),
            "i.yaml:1: nccl_base_latency: '8.4' has no unit (expected one of: s, ms, us, ns, min, "
            "h)");
  auto truncated = ParseInterconnects(
      "nccl_base_latency: 8.4us\nnccl_base_latency_source: x\nnvls_nvlink_generations: []\n"
      "nvls_source: x\nlevels:\n  hbm:\n    latency: 1us\n",
      "i.yaml");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().Format(), "i.yaml:7: levels.hbm.sources: missing required field");
  // The protocol table: a bandwidth fraction above 1 and a latency without its unit are named.
  auto text = testing::ReadTestFile("../data/interconnects.yaml");
  const std::string good = "bandwidth: {ring: 0.25, tree: 0.263}";
  ASSERT_NE(text.find(good), std::string::npos);
  std::string bad = text;
  bad.replace(bad.find(good), good.size(), "bandwidth: {ring: 1.5, tree: 0.263}");
  auto over = ParseInterconnects(bad, "i.yaml");
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().Format().find("nccl_protocols.ll.bandwidth.ring: expected a fraction in "
                                       "(0, 1], got 1.5"),
            std::string::npos)
      << over.error().Format();
  bad = text;
  bad.replace(bad.find("base: {ring: 6.6us"), 18, "base: {ring: 6.6");
  // A zero Simple ring hop would divide the other protocols' hops by zero (NaN costs, exit 0).
  std::string zero = text;
  const std::string net = "net: {ring: 14us, tree: 14us}";
  ASSERT_NE(zero.find(net), std::string::npos);
  zero.replace(zero.find(net), net.size(), "net: {ring: 0us, tree: 14us}");
  auto zero_hop = ParseInterconnects(zero, "i.yaml");
  ASSERT_FALSE(zero_hop.ok());
  EXPECT_NE(zero_hop.error().Format().find("nccl_protocols.simple.hop.net.ring"), std::string::npos)
      << zero_hop.error().Format();
  auto unitless = ParseInterconnects(bad, "i.yaml");
  ASSERT_FALSE(unitless.ok());
  EXPECT_NE(unitless.error().Format().find("nccl_protocols.ll.base.ring: '6.6' has no unit"),
            std::string::npos)
      << unitless.error().Format();
}

}  // namespace
}  // namespace strata

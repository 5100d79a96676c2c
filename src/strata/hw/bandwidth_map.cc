#include "strata/hw/bandwidth_map.h"

#include <fmt/format.h>

namespace strata {
namespace {

std::string FabricName(const Cluster& c) {
  switch (c.fabric) {
    case IntraNodeFabric::kNvSwitch:
      return fmt::format("NVSwitch ({})", c.gpu.nvlink_generation);
    case IntraNodeFabric::kNvLinkMesh:
      return fmt::format("GPU mesh ({})", c.gpu.nvlink_generation);
    case IntraNodeFabric::kPcieOnly:
      return "PCIe";
  }
  return "?";
}

std::string TransportName(NicTransport t) {
  switch (t) {
    case NicTransport::kRoce:
      return "RoCE";
    case NicTransport::kInfiniBand:
      return "InfiniBand";
    case NicTransport::kEthernet:
      return "Ethernet";
  }
  return "?";
}

std::string StorageName(StorageKind k) {
  switch (k) {
    case StorageKind::kNfs:
      return "NFS";
    case StorageKind::kLustre:
      return "Lustre";
    case StorageKind::kLocalNvme:
      return "local NVMe";
  }
  return "?";
}

// "4 x 200Gb/s": the NICs of one role as a person would say them.
std::string NicSummary(const Cluster& c, NicRole role) {
  std::string out;
  for (const auto& nic : c.nics) {
    if (nic.role != role) continue;
    if (!out.empty()) out += " + ";
    out += fmt::format("{} x {:g}Gb/s", nic.count, nic.speed.gbit_per_s());
  }
  return out;
}

}  // namespace

std::string ToString(MapLevelKind kind) {
  switch (kind) {
    case MapLevelKind::kHbm:
      return "hbm";
    case MapLevelKind::kGpuFabric:
      return "gpu_fabric";
    case MapLevelKind::kPcie:
      return "pcie";
    case MapLevelKind::kDataNic:
      return "data_nic";
    case MapLevelKind::kManagementNic:
      return "management_nic";
    case MapLevelKind::kStorage:
      return "storage";
  }
  return "?";
}

Result<BandwidthMap> BuildBandwidthMap(const Cluster& c, const Interconnects& links) {
  BandwidthMap map;
  map.cluster = c.name;
  const double gpus = static_cast<double>(c.gpus_per_node);

  map.levels.push_back({MapLevelKind::kHbm, "HBM", "hbm", c.gpu.hbm_bandwidth,
                        c.gpu.hbm_bandwidth * gpus, links.Level("hbm").latency, 0,
                        fmt::format("{:g} GB per GPU", c.gpu.memory.gb())});

  if (c.fabric != IntraNodeFabric::kPcieOnly) {
    const std::string key = c.fabric == IntraNodeFabric::kNvSwitch ? "nvswitch" : "nvlink_mesh";
    const BytesPerSecond one_way = c.gpu.nvlink_bandwidth_per_direction();
    map.levels.push_back(
        {MapLevelKind::kGpuFabric, FabricName(c), key, one_way, one_way * gpus,
         links.Level(key).latency, 0,
         fmt::format("{:g} GB/s bidirectional per GPU", c.gpu.nvlink_bandwidth.gb_per_s())});
  }

  auto pcie = links.pcie_x16_per_direction.find(c.pcie_generation);
  if (pcie == links.pcie_x16_per_direction.end()) {
    if (c.pcie_generation == 0) {
      // An inline cluster (cluster.gpu / gpus_per_node / nodes) takes the GPU's host link from
      // the catalog; a part the catalog gives none for needs a cluster file.
      return InvalidInput(
                 fmt::format(
                     "neither the cluster nor the GPU catalog gives a PCIe generation for {}, and "
                     "the bandwidth map needs the host link: name a cluster file (data/clusters/, "
                     "e.g. `--set cluster.file=h100-8x8-ib400`) that sets pcie_generation",
                     c.gpu.name))
          .InField("pcie_generation");
    }
    return InvalidInput(fmt::format("no PCIe x16 bandwidth for generation {} in the calibration",
                                    c.pcie_generation))
        .InField("pcie_generation");
  }
  map.levels.push_back({MapLevelKind::kPcie, fmt::format("PCIe Gen{} x16", c.pcie_generation),
                        "pcie", pcie->second, pcie->second * gpus, links.Level("pcie").latency, 0,
                        "GPU <-> host and NIC"});

  const BytesPerSecond data_node = c.DataNicBandwidthPerNode();
  if (data_node.value() > 0) {
    const std::string key = ToString(c.DataTransport());
    int64_t data_nics = 0;
    for (const auto& nic : c.nics) {
      if (nic.role == NicRole::kData) data_nics += nic.count;
    }
    const double nics_per_gpu = static_cast<double>(data_nics) / gpus;
    std::string note = nics_per_gpu >= 1 ? fmt::format("{:.3g} NIC(s) per GPU", nics_per_gpu)
                                         : fmt::format("1 NIC per {:.3g} GPUs", 1 / nics_per_gpu);
    map.levels.push_back(
        {MapLevelKind::kDataNic,
         fmt::format("{} {}", TransportName(c.DataTransport()), NicSummary(c, NicRole::kData)), key,
         data_node / gpus, data_node, links.Level(key).latency, 0, note});
  }
  const BytesPerSecond mgmt_node = c.ManagementBandwidthPerNode();
  if (mgmt_node.value() > 0) {
    std::string names;
    for (const auto& nic : c.nics) {
      if (nic.role == NicRole::kManagement) names += (names.empty() ? "" : ", ") + nic.name;
    }
    map.levels.push_back(
        {MapLevelKind::kManagementNic,
         fmt::format("management {} ({})", NicSummary(c, NicRole::kManagement), names), "ethernet",
         mgmt_node / gpus, mgmt_node, links.Level("ethernet").latency, 0,
         "TCP; NCCL must not pick it (NCCL_SOCKET_IFNAME)"});
  }
  for (const auto& s : c.storage) {
    map.levels.push_back({MapLevelKind::kStorage,
                          fmt::format("{} ({})", StorageName(s.kind), s.name), ToString(s.kind),
                          s.bandwidth_per_node / gpus, s.bandwidth_per_node,
                          links.Level(ToString(s.kind)).latency, 0,
                          s.shared ? "shared by all nodes" : "local to each node"});
  }
  for (size_t i = 1; i < map.levels.size(); ++i) {
    map.levels[i].slower_than_above = map.levels[i - 1].per_gpu / map.levels[i].per_gpu;
  }
  return map;
}

}  // namespace strata

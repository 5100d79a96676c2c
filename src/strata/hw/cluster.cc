#include "strata/hw/cluster.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"
#include "strata/hw/custom_gpu.h"
#include "strata/hw/interconnects.h"

namespace strata {
namespace {

const std::vector<std::string> kTopKeys = {
    "name",    "description",       "nodes",           "gpus_per_node",
    "gpu",     "intra_node_fabric", "pcie_generation", "nics",
    "storage", "partial_nodes"};

// Reads a string field that must be one of `allowed` (the enum's spellings in the file).
template <class Enum>
Result<Enum> ReadEnum(YamlMap& map, const std::string& key,
                      const std::vector<std::pair<std::string, Enum>>& allowed) {
  STRATA_ASSIGN_OR_RETURN(std::string text, map.String(key));
  std::vector<std::string> names;
  for (const auto& [name, value] : allowed) {
    if (text == name) return value;
    names.push_back(name);
  }
  Error e = map.ErrorAt(key, fmt::format("unknown {} '{}' (expected one of: {})", key, text,
                                         fmt::format("{}", fmt::join(names, ", "))));
  const std::string close = ClosestMatch(text, names);
  if (!close.empty()) e.hint = fmt::format("did you mean '{}'?", close);
  return e;
}

const std::vector<std::pair<std::string, IntraNodeFabric>> kFabrics = {
    {"nvswitch", IntraNodeFabric::kNvSwitch},
    {"nvlink_mesh", IntraNodeFabric::kNvLinkMesh},
    {"pcie", IntraNodeFabric::kPcieOnly}};
const std::vector<std::pair<std::string, NicTransport>> kTransports = {
    {"roce", NicTransport::kRoce},
    {"infiniband", NicTransport::kInfiniBand},
    {"ethernet", NicTransport::kEthernet}};
const std::vector<std::pair<std::string, NicRole>> kRoles = {{"data", NicRole::kData},
                                                             {"management", NicRole::kManagement}};
const std::vector<std::pair<std::string, StorageKind>> kStorageKinds = {
    {"nfs", StorageKind::kNfs},
    {"lustre", StorageKind::kLustre},
    {"local_nvme", StorageKind::kLocalNvme}};

template <class Enum>
std::string NameOf(Enum value, const std::vector<std::pair<std::string, Enum>>& table) {
  for (const auto& [name, v] : table) {
    if (v == value) return name;
  }
  return "?";
}

Result<YAML::Node> ReadList(YamlMap& map, const std::string& key) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, map.Node(key));
  if (!list.IsSequence() || list.size() == 0) {
    return map.ErrorAt(key, "expected a non-empty list");
  }
  return list;
}

Result<NicGroup> ParseNic(const YAML::Node& node, const std::string& file,
                          const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Of(node, file, path));
  NicGroup nic;
  STRATA_ASSIGN_OR_RETURN(nic.name, map.String("name"));
  STRATA_ASSIGN_OR_RETURN(nic.count, map.PositiveInt("count"));
  STRATA_ASSIGN_OR_RETURN(nic.speed, map.Bandwidth("speed"));
  if (nic.speed.value() <= 0) return map.ErrorAt("speed", "expected a positive link speed");
  STRATA_ASSIGN_OR_RETURN(nic.transport, ReadEnum(map, "transport", kTransports));
  STRATA_ASSIGN_OR_RETURN(nic.role, ReadEnum(map, "role", kRoles));
  STRATA_RETURN_IF_ERROR(map.CheckNoUnknownKeys());
  return nic;
}

Result<Storage> ParseStorage(const YAML::Node& node, const std::string& file,
                             const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Of(node, file, path));
  Storage storage;
  STRATA_ASSIGN_OR_RETURN(storage.name, map.String("name"));
  STRATA_ASSIGN_OR_RETURN(storage.kind, ReadEnum(map, "kind", kStorageKinds));
  STRATA_ASSIGN_OR_RETURN(storage.bandwidth_per_node, map.Bandwidth("bandwidth_per_node"));
  if (storage.bandwidth_per_node.value() <= 0)
    return map.ErrorAt("bandwidth_per_node", "expected a positive bandwidth");
  storage.shared = storage.kind != StorageKind::kLocalNvme;
  STRATA_RETURN_IF_ERROR(map.CheckNoUnknownKeys());
  return storage;
}

}  // namespace

std::string ToString(IntraNodeFabric fabric) { return NameOf(fabric, kFabrics); }
std::string ToString(NicTransport transport) { return NameOf(transport, kTransports); }
std::string ToString(NicRole role) { return NameOf(role, kRoles); }
std::string ToString(StorageKind kind) { return NameOf(kind, kStorageKinds); }

BytesPerSecond Cluster::DataNicBandwidthPerNode() const {
  BytesPerSecond total;
  for (const auto& nic : nics) {
    if (nic.role == NicRole::kData) total += nic.speed * static_cast<double>(nic.count);
  }
  return total;
}

Result<Cluster> WithGpusPerNode(Cluster cluster, int64_t gpus_per_node) {
  if (gpus_per_node == cluster.gpus_per_node) return cluster;
  if (!cluster.partial_nodes || gpus_per_node < 1 || gpus_per_node > cluster.gpus_per_node) {
    return InvalidInput(fmt::format(
        "cluster {} has {} GPUs per node and its NICs are wired to them; {} GPUs per node is "
        "another node",
        cluster.name, cluster.gpus_per_node, gpus_per_node));
  }
  // One data NIC per GPU (checked on load): the share of the NICs is one per GPU used.
  return SharedNodes(std::move(cluster), gpus_per_node);
}

Result<Cluster> SharedNodes(Cluster cluster, int64_t gpus_per_node) {
  if (gpus_per_node == cluster.gpus_per_node) return cluster;
  if (gpus_per_node < 1 || gpus_per_node > cluster.gpus_per_node) {
    return InvalidInput(fmt::format("cluster {} has {} GPUs per node: {} of them cannot be used",
                                    cluster.name, cluster.gpus_per_node, gpus_per_node));
  }
  const int64_t all = cluster.gpus_per_node;
  for (NicGroup& nic : cluster.nics) {
    if (nic.role != NicRole::kData) continue;
    if (nic.count * gpus_per_node % all == 0) {
      nic.count = nic.count * gpus_per_node / all;
    } else {
      nic.speed = nic.speed * (static_cast<double>(gpus_per_node) / static_cast<double>(all));
    }
  }
  cluster.gpus_per_node = gpus_per_node;
  return cluster;
}

BytesPerSecond Cluster::DataNicBandwidthPerGpu() const {
  return DataNicBandwidthPerNode() / static_cast<double>(gpus_per_node);
}

BytesPerSecond Cluster::ManagementBandwidthPerNode() const {
  BytesPerSecond total;
  for (const auto& nic : nics) {
    if (nic.role == NicRole::kManagement) total += nic.speed * static_cast<double>(nic.count);
  }
  return total;
}

NicTransport Cluster::DataTransport() const {
  for (const auto& nic : nics) {
    if (nic.role == NicRole::kData) return nic.transport;
  }
  return NicTransport::kEthernet;
}

Result<Cluster> ParseCluster(const std::string& text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Of(root, file, ""));
  Cluster c;
  STRATA_ASSIGN_OR_RETURN(c.name, map.String("name"));
  if (map.Has("description")) {
    STRATA_ASSIGN_OR_RETURN(c.description, map.String("description"));
  }
  STRATA_ASSIGN_OR_RETURN(c.nodes, map.PositiveInt("nodes"));
  STRATA_ASSIGN_OR_RETURN(c.gpus_per_node, map.PositiveInt("gpus_per_node"));
  // A catalog name, or a variant derived from one ({base: H100-SXM, memory: 96GB}).
  STRATA_ASSIGN_OR_RETURN(c.gpu, ReadGpuField(map, "gpu"));
  STRATA_ASSIGN_OR_RETURN(c.fabric, ReadEnum(map, "intra_node_fabric", kFabrics));
  if (c.fabric != IntraNodeFabric::kPcieOnly && !c.gpu.has_gpu_fabric()) {
    return map
        .ErrorAt("intra_node_fabric", fmt::format("'{}' needs a GPU with NVLink, but {} has none",
                                                  ToString(c.fabric), c.gpu.name))
        .WithHint("use intra_node_fabric: pcie");
  }
  STRATA_ASSIGN_OR_RETURN(c.pcie_generation, map.Int("pcie_generation"));
  if (c.pcie_generation < 3 || c.pcie_generation > 6) {
    return map.ErrorAt(
        "pcie_generation",
        fmt::format("expected a PCIe generation from 3 to 6, got {}", c.pcie_generation));
  }

  STRATA_ASSIGN_OR_RETURN(YAML::Node nics, ReadList(map, "nics"));
  std::set<std::string> nic_names;
  for (size_t i = 0; i < nics.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(NicGroup nic, ParseNic(nics[i], file, fmt::format("nics[{}]", i)));
    if (!nic_names.insert(nic.name).second) {
      Error e = map.ErrorAt("nics", fmt::format("NIC name '{}' appears twice", nic.name));
      e.field = fmt::format("nics[{}].name", i);
      e.line = nics[i].Mark().line + 1;
      return e;
    }
    c.nics.push_back(std::move(nic));
  }
  // A NIC cannot move more than the PCIe x16 slot it sits in (data/interconnects.yaml). The
  // usual cause is bytes written for bits: "400GB/s" for a 400 Gb/s NIC is 3,200 Gb/s.
  if (auto links = LoadInterconnects(); links.ok()) {
    auto slot = links->pcie_x16_per_direction.find(c.pcie_generation);
    for (size_t i = 0; slot != links->pcie_x16_per_direction.end() && i < c.nics.size(); ++i) {
      const NicGroup& nic = c.nics[i];
      if (nic.speed.value() <= slot->second.value()) continue;
      Error e = map.ErrorAt(
          "nics", fmt::format("NIC '{}' at {:.0f} GB/s ({:.0f} Gb/s) is faster than its PCIe Gen{} "
                              "x16 slot ({:.2f} GB/s per direction): no such NIC exists",
                              nic.name, nic.speed.value() / 1e9, nic.speed.value() * 8 / 1e9,
                              c.pcie_generation, slot->second.value() / 1e9));
      e.field = fmt::format("nics[{}].speed", i);
      e.line = nics[i]["speed"] ? nics[i]["speed"].Mark().line + 1 : nics[i].Mark().line + 1;
      e.hint = fmt::format("NIC speeds are quoted in bits: did you mean {:.0f}Gb/s?",
                           nic.speed.value() / 1e9);
      return e;
    }
  }
  if (map.Has("partial_nodes")) {
    STRATA_ASSIGN_OR_RETURN(c.partial_nodes, map.Bool("partial_nodes"));
  }
  if (c.partial_nodes) {
    // Part of a node keeps its GPUs' own NICs only when every data NIC belongs to one GPU.
    for (size_t i = 0; i < c.nics.size(); ++i) {
      const NicGroup& nic = c.nics[i];
      if (nic.role != NicRole::kData || nic.count == c.gpus_per_node) continue;
      Error e = map.ErrorAt(
          "partial_nodes",
          fmt::format("a node used in part keeps one data NIC per GPU, but data NIC '{}' has {} "
                      "per node for {} GPUs",
                      nic.name, nic.count, c.gpus_per_node));
      e.hint = "describe one data NIC per GPU, or drop partial_nodes";
      return e;
    }
  }
  if (c.nodes > 1 && c.DataNicBandwidthPerNode().value() <= 0) {
    return map
        .ErrorAt("nics", fmt::format("{} nodes but no NIC with role: data; collectives "
                                     "between nodes need a data network",
                                     c.nodes))
        .WithHint("add the RoCE/InfiniBand NICs with role: data");
  }
  if (map.Has("storage")) {
    STRATA_ASSIGN_OR_RETURN(YAML::Node storage, ReadList(map, "storage"));
    for (size_t i = 0; i < storage.size(); ++i) {
      STRATA_ASSIGN_OR_RETURN(Storage s,
                              ParseStorage(storage[i], file, fmt::format("storage[{}]", i)));
      c.storage.push_back(std::move(s));
    }
  }
  if (map.Has("sources")) {
    STRATA_ASSIGN_OR_RETURN(YamlMap sources, map.Map("sources"));
    for (const auto& key : kTopKeys) {
      if (!sources.Has(key)) continue;
      STRATA_ASSIGN_OR_RETURN(c.sources[key], sources.String(key));
    }
    STRATA_RETURN_IF_ERROR(sources.CheckNoUnknownKeys());
  }
  STRATA_RETURN_IF_ERROR(map.CheckNoUnknownKeys());
  return c;
}

std::vector<std::string> ShippedClusterNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(DataDir() + "/clusters", ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<Cluster> LoadCluster(const std::string& path_or_name) {
  std::string path = path_or_name;
  const bool looks_like_path = path_or_name.find('/') != std::string::npos ||
                               path_or_name.ends_with(".yaml") || path_or_name.ends_with(".yml");
  if (!looks_like_path) {
    path = DataDir() + "/clusters/" + path_or_name + ".yaml";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      const auto names = ShippedClusterNames();
      return InvalidInput(fmt::format("unknown cluster '{}' (not a file, and not a name under "
                                      "data/clusters/)",
                                      path_or_name))
          .WithHint(DidYouMeanHint(path_or_name, names));
    }
  }
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseCluster(text, path);
}

}  // namespace strata

// A cluster description (data/clusters/<name>.yaml): nodes of identical GPUs, the fabric inside a
// node, the NICs between nodes and the storage they share. Units are required in the file.
//
//   node 0                         node 1
//   +---------------------------+  +---------------------------+
//   | GPU0..GPU7  <- NVSwitch -> |  | GPU0..GPU7                |
//   |   |  PCIe                  |  |   |                       |
//   | data NICs (RoCE/IB) ------ switch ------ data NICs         |
//   | mgmt NIC (eth0) ---------- mgmt net ---- mgmt NIC          |
//   +---------------------------+  +---------------------------+
//                 \______ shared storage (NFS / Lustre) ______/
#ifndef STRATA_HW_CLUSTER_H_
#define STRATA_HW_CLUSTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/hw/gpu_catalog.h"

namespace strata {

enum class IntraNodeFabric { kNvSwitch, kNvLinkMesh, kPcieOnly };
enum class NicTransport { kRoce, kInfiniBand, kEthernet };
enum class NicRole { kData, kManagement };
enum class StorageKind { kNfs, kLustre, kLocalNvme };

/// One kind of NIC in every node ("4 x 200Gb/s RoCE, data").
struct NicGroup {
  std::string name;      // "roce", "eth0"
  int64_t count = 0;     // per node
  BytesPerSecond speed;  // per NIC, per direction (link rates are quoted per direction)
  NicTransport transport = NicTransport::kRoce;
  NicRole role = NicRole::kData;
};

struct Storage {
  std::string name;  // "nfs"
  StorageKind kind = StorageKind::kNfs;
  BytesPerSecond bandwidth_per_node;  // what one client node can read
  bool shared = true;                 // seen by every node (NFS, Lustre) or local to one
};

struct Cluster {
  std::string name;
  std::string description;
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  GpuSpec gpu;
  IntraNodeFabric fabric = IntraNodeFabric::kNvSwitch;
  int64_t pcie_generation = 0;  // of the GPU and NIC slots
  /// A rack-scale NVLink domain (GB200 / GB300 NVL72): a job may use part of each node (64 of
  /// a rack's 72 GPUs, or 8 of them), and the data NICs, one per GPU, go with the GPUs used.
  bool partial_nodes = false;
  std::vector<NicGroup> nics;
  std::vector<Storage> storage;
  std::map<std::string, std::string> sources;  // field -> where the value came from, or
                                               // "assumption: ..." when nobody measured it

  int64_t world_size() const { return nodes * gpus_per_node; }
  /// Sum over the data NICs of one node (per direction); zero when the node has none.
  BytesPerSecond DataNicBandwidthPerNode() const;
  /// The node's data NIC bandwidth shared evenly by its GPUs.
  BytesPerSecond DataNicBandwidthPerGpu() const;
  /// Sum over the management NICs of one node.
  BytesPerSecond ManagementBandwidthPerNode() const;
  /// The transport of the data NICs (the first group); kEthernet when there is none.
  NicTransport DataTransport() const;
};

/// The cluster with `gpus_per_node` of each node in use: the same cluster when that is all of
/// them; on a partial_nodes cluster, fewer GPUs with their data NICs (one per GPU, so the count
/// scales with them). Fails when the cluster's nodes cannot be split.
Result<Cluster> WithGpusPerNode(Cluster cluster, int64_t gpus_per_node);

/// The cluster with `gpus_per_node` of each node in use while the node's other GPUs run
/// another part of the same work (an RL split's rollout beside its trainer, as verl's
/// trainer.n_gpus_per_node + rollout.n_gpus_per_node of one node): any cluster's node may be
/// shared so. The data NICs go with the GPUs used (NCCL takes each GPU's nearest NIC): the node's
/// data bandwidth per GPU is kept, scaled by count when it divides, else by speed. Fails when
/// `gpus_per_node` is not between 1 and the node's.
Result<Cluster> SharedNodes(Cluster cluster, int64_t gpus_per_node);

/// `path_or_name` is a file path, or a name under data/clusters/ ("h20-5x8").
Result<Cluster> LoadCluster(const std::string& path_or_name);
/// Parses cluster text; `file` names it in errors.
Result<Cluster> ParseCluster(const std::string& text, const std::string& file);
/// The clusters shipped under data/clusters/, sorted by name.
std::vector<std::string> ShippedClusterNames();

std::string ToString(IntraNodeFabric fabric);  // "nvswitch", "nvlink_mesh", "pcie"
std::string ToString(NicTransport transport);  // "roce", "infiniband", "ethernet"
std::string ToString(NicRole role);            // "data", "management"
std::string ToString(StorageKind kind);        // "nfs", "lustre", "local_nvme"

}  // namespace strata

#endif  // STRATA_HW_CLUSTER_H_

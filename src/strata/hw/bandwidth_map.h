// The bandwidth map of a cluster: from HBM down to storage, each level with its bandwidth per GPU
// and per node, the latency of one step, and how much slower it is than the level above. The
// course's frame: each level loses about an order of magnitude, so parallel design puts the
// high-frequency traffic on the high-bandwidth levels. Formulas: docs/formulas.md, "Bandwidth map".
#ifndef STRATA_HW_BANDWIDTH_MAP_H_
#define STRATA_HW_BANDWIDTH_MAP_H_

#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"
#include "strata/hw/cluster.h"
#include "strata/hw/interconnects.h"

namespace strata {

enum class MapLevelKind { kHbm, kGpuFabric, kPcie, kDataNic, kManagementNic, kStorage };

struct MapLevel {
  MapLevelKind kind = MapLevelKind::kHbm;
  std::string name;         // as printed: "NVSwitch (NVLink4)", "RoCE 4 x 200Gb/s"
  std::string calibration;  // key in Interconnects::levels ("nvswitch", "roce", "nfs")
  /// Links: one direction (what nccl-tests' busbw compares with). HBM and storage: total.
  BytesPerSecond per_gpu;
  BytesPerSecond per_node;
  Seconds latency;
  double slower_than_above = 0;  // previous level's per_gpu / this per_gpu; 0 for the first
  std::string note;              // "900 GB/s bidirectional", "1 NIC per 2 GPUs"
};

struct BandwidthMap {
  std::string cluster;
  std::vector<MapLevel> levels;  // fastest first
};

/// Fails only when the calibration lacks the cluster's PCIe generation.
Result<BandwidthMap> BuildBandwidthMap(const Cluster& cluster, const Interconnects& links);

std::string ToString(MapLevelKind kind);  // "hbm", "gpu_fabric", "pcie", "data_nic", ...

}  // namespace strata

#endif  // STRATA_HW_BANDWIDTH_MAP_H_

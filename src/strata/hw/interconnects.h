// Calibration of the links (data/interconnects.yaml): per level the latency of one collective
// step and the fraction of the per-direction line rate NCCL achieves as busbw; PCIe x16 rates.
#ifndef STRATA_HW_INTERCONNECTS_H_
#define STRATA_HW_INTERCONNECTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"

namespace strata {

struct LinkCalibration {
  Seconds latency;                       // alpha: one step of a collective on this level
  std::optional<double> busbw_fraction;  // beta / line rate; absent for storage and HBM
  std::map<std::string, std::string> sources;
};

struct Interconnects {
  Seconds nccl_base_latency;  // paid once per collective
  std::vector<std::string> nvls_nvlink_generations;
  /// "hbm", "nvswitch", "nvswitch_nvls", "nvlink_mesh", "pcie", "infiniband", "roce",
  /// "ethernet", "nfs", "lustre", "local_nvme".
  std::map<std::string, LinkCalibration> levels;
  std::map<int64_t, BytesPerSecond> pcie_x16_per_direction;  // by generation

  /// The level's calibration; a missing level is an internal error (the shipped file has all).
  const LinkCalibration& Level(const std::string& name) const;
  bool SupportsNvls(const std::string& nvlink_generation) const;
};

/// The level names the file must define (the code asks for each of them).
const std::vector<std::string>& RequiredLevelNames();

Result<Interconnects> ParseInterconnects(const std::string& text, const std::string& file);
/// data/interconnects.yaml via DataDir().
Result<Interconnects> LoadInterconnects();

}  // namespace strata

#endif  // STRATA_HW_INTERCONNECTS_H_

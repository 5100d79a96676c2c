// Calibration of the links (data/interconnects.yaml): per level the latency of one collective
// step and the fraction of the per-direction line rate NCCL achieves as busbw; PCIe x16 rates.
#ifndef STRATA_HW_INTERCONNECTS_H_
#define STRATA_HW_INTERCONNECTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"

namespace strata {

struct LinkCalibration {
  Seconds latency;                       // alpha: one step of a collective on this level
  std::optional<double> busbw_fraction;  // beta / line rate; absent for storage and HBM
  std::map<std::string, std::string> sources;
};

/// NCCL's protocols (NCCL_PROTO), in the order data/interconnects.yaml lists them.
enum class NcclProto { kSimple, kLl128, kLl };
inline constexpr NcclProto kNcclProtos[] = {NcclProto::kSimple, NcclProto::kLl128, NcclProto::kLl};

/// How a protocol's name is written: kKey as data/interconnects.yaml keys it and JSON output
/// prints it ("simple", "ll128", "ll"); kNccl as NCCL's NCCL_PROTO and logs spell it, and the
/// text output prints it ("Simple", "LL128", "LL").
enum class ProtoSpelling { kKey, kNccl };
/// The one name of each protocol, for the parser and every printer.
std::string_view NcclProtoName(NcclProto proto, ProtoSpelling spelling = ProtoSpelling::kKey);

/// One NCCL protocol's tuning constants (data/interconnects.yaml, nccl_protocols).
struct NcclProtocol {
  NcclProto proto = NcclProto::kSimple;
  Seconds base_ring, base_tree;
  /// Per hop kind ("nvlink", "pci", "net"): one step's latency, ring and tree.
  std::map<std::string, std::pair<Seconds, Seconds>> hop;
  double bandwidth_ring = 1, bandwidth_tree = 1;  // fraction of Simple's busbw
};

struct Interconnects {
  Seconds nccl_base_latency;            // paid once per collective
  std::vector<NcclProtocol> protocols;  // simple first
  std::vector<std::string> nvls_nvlink_generations;
  /// "hbm", "nvswitch", "nvswitch_nvls", "nvlink_mesh", "pcie", "infiniband", "roce",
  /// "ethernet", "nfs", "lustre", "local_nvme".
  std::map<std::string, LinkCalibration> levels;
  std::map<int64_t, BytesPerSecond> pcie_x16_per_direction;  // by generation

  /// The level's calibration; a missing level is an internal error (the shipped file has all).
  const LinkCalibration& Level(const std::string& name) const;
  bool SupportsNvls(const std::string& nvlink_generation) const;
};

/// The kind of hop a level's steps are in NCCL's tuning table: "nvlink", "pci" or "net"; "" for
/// storage and HBM.
std::string HopKindOf(const std::string& level);

/// The level names the file must define (the code asks for each of them).
const std::vector<std::string>& RequiredLevelNames();

Result<Interconnects> ParseInterconnects(const std::string& text, const std::string& file);
/// data/interconnects.yaml via DataDir().
Result<Interconnects> LoadInterconnects();

}  // namespace strata

#endif  // STRATA_HW_INTERCONNECTS_H_

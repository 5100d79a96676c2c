// The GPU catalog (data/gpus.yaml): memory, bandwidth, dense peaks and fabric of each part, each
// value with its source. Every model that needs a GPU number asks FindGpu; no peak lives in code.
#ifndef STRATA_HW_GPU_CATALOG_H_
#define STRATA_HW_GPU_CATALOG_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"

namespace strata {

/// How a part's GPU fabric joins the GPUs of a node: NVLink switches (SXM boards), a direct
/// point-to-point mesh (AMD's xGMI: seven links from each MI300X to the other seven), or a
/// bridge between two cards (H100 PCIe's NVLink bridge).
enum class GpuFabricTopology { kSwitch, kMesh, kBridge };

struct GpuSpec {
  std::string name;                  // canonical, as printed: "H20", "H100 SXM"
  std::vector<std::string> aliases;  // lower-case spellings users and tools write: "h100-sxm"
  Bytes memory;                      // device memory (HBM, or GDDR on L40S)
  BytesPerSecond hbm_bandwidth;
  // Dense tensor-core peaks (never the 2:4 sparsity figures).
  FlopPerSecond bf16_dense;
  FlopPerSecond fp16_dense;
  FlopPerSecond fp8_dense;  // zero where the part has no FP8 tensor cores (A100, A800)
  FlopPerSecond tf32_dense;
  std::string nvlink_generation;    // "NVLink4", "NVLink3", "InfinityFabric", "none"
  BytesPerSecond nvlink_bandwidth;  // bidirectional, per GPU; zero when there is no GPU fabric
  // data/gpus.yaml's optional `fabric_topology` (switch when absent).
  GpuFabricTopology fabric_topology = GpuFabricTopology::kSwitch;
  double tdp_watts = 0;
  /// The catalog entry this part is, or derives from (`base:`), and that entry's power limit:
  /// per-GPU calibration (data/kernel_efficiency.yaml) is keyed by it and was measured at it.
  /// Empty and 0 for a part defined without a base.
  std::string catalog_name;
  double catalog_tdp_watts = 0;
  int64_t pcie_generation = 0;  // the host link (PCIe GenN x16); 0 where the catalog does not say
  std::map<std::string, std::string> sources;  // value name -> datasheet name or URL

  bool has_fp8() const { return fp8_dense.value() > 0; }
  bool has_gpu_fabric() const { return nvlink_bandwidth.value() > 0; }
  /// A PCIe card whose NVLink is a bridge between two cards (H100 PCIe): a group wider than the
  /// bridged pair crosses PCIe.
  bool nvlink_bridge_only() const {
    return has_gpu_fabric() && fabric_topology == GpuFabricTopology::kBridge;
  }
  /// What one direction of the fabric carries, the figure nccl-tests' busbw compares with.
  BytesPerSecond nvlink_bandwidth_per_direction() const { return nvlink_bandwidth / 2.0; }
};

/// Reads and validates a catalog file: every value needs a unit and a source; names and aliases
/// must be unique; unknown keys are errors with "did you mean".
Result<std::vector<GpuSpec>> LoadGpuCatalog(const std::string& path);
/// The same, from text already read (`file` names it in errors).
Result<std::vector<GpuSpec>> ParseGpuCatalog(const std::string& text, const std::string& file);

/// Looks a name up in data/gpus.yaml (via DataDir()): case-insensitive, by name or alias, with
/// spaces, '-' and '_' treated alike ("H100 SXM" == "h100-sxm"); "did you mean" on a miss.
Result<GpuSpec> FindGpu(std::string_view name);
/// The same lookup in a catalog already loaded.
Result<GpuSpec> FindGpuIn(const std::vector<GpuSpec>& catalog, std::string_view name);

/// "148TFLOP/s", "2.25PFLOP/s": a FLOP rate with its unit (TFLOP/s, PFLOP/s, GFLOP/s).
Result<FlopPerSecond> ParseFlopRate(std::string_view text);

}  // namespace strata

#endif  // STRATA_HW_GPU_CATALOG_H_

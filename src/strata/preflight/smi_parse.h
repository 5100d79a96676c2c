// Parsers for nvidia-smi's outputs (formats: ../shared/reference/formats/logs-and-node-state.md
// sections 2.1, 2.2, 2.4) and the kernel's Xid lines. CSV columns are matched by header name, so
// a different --query order reads the same; "[N/A]"-style cells are "no value".
#ifndef STRATA_PREFLIGHT_SMI_PARSE_H_
#define STRATA_PREFLIGHT_SMI_PARSE_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/preflight/node_state.h"

namespace strata::preflight {

/// `nvidia-smi --query-gpu=index,uuid,... --format=csv` (with its header line). `index` and
/// `memory.used` are required columns; the others are read when present.
Result<std::vector<GpuRow>> ParseGpuCsv(std::string_view text, const std::string& file);

/// The collector's gpu-repair.csv (`nvidia-smi --query-gpu=index,remapped_rows.pending,
/// remapped_rows.failure,gpu_recovery_action --format=csv`, or any subset with `index`): its
/// columns are merged into the GPUs of gpus.csv with the same index.
Status MergeGpuRepairCsv(std::string_view text, const std::string& file, std::vector<GpuRow>& gpus);

/// `nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid --format=csv`.
/// Only a header (or nothing at all, with noheader) means no process.
Result<std::vector<ComputeApp>> ParseComputeAppsCsv(std::string_view text, const std::string& file);

struct DriverInfo {
  std::string driver_version;  // "570.133.20"
  std::string cuda_version;    // "12.8": the highest CUDA this driver runs
};

/// The `nvidia-smi` banner or `nvidia-smi -q` header: "Driver Version: X ... CUDA Version: Y",
/// or the 610+ spelling "KMD Version: X ... CUDA UMD Version: Y".
Result<DriverInfo> ParseDriverBanner(std::string_view text, const std::string& file);

/// Kernel log lines "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., ..."; other lines are skipped.
std::vector<XidEvent> ParseXidLines(std::string_view text);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_SMI_PARSE_H_

// The node-state bundle: one directory per node, written by `strata collect --node-state` and
// read by `strata preflight`. Raw command outputs are kept verbatim, so a bundle can be read by
// eye and fixtures can be made from real outputs:
//
//   <out>/<host>/node-state.json   host, time, uid, the processes looked at, collector notes
//                nvidia-smi.txt    `nvidia-smi` (driver and CUDA version banner)
//                gpus.csv          `nvidia-smi --query-gpu=<kGpuQuery> --format=csv`
//                gpu-repair.csv    `nvidia-smi --query-gpu=<kGpuRepairQuery> --format=csv`
//                compute-apps.csv  `nvidia-smi --query-compute-apps=... --format=csv`
//                xid.txt           NVRM Xid lines from the kernel log
//                ip-addr.json      `ip -j addr`        ip-route.json  `ip -j route`
//                ibdev2netdev.txt  rdma-link.txt  gids.txt (show_gids layout)  ibstat.txt
//                shell-env.txt     env_parse.h     nccl.conf   versions.txt
//                nccl-user.conf    $NCCL_CONF_FILE or ~/.nccl.conf, its path on the first line
//
// A missing file is not an error: the part is listed in NodeState::unread. A file that is there
// but malformed is an error naming the file and line.
#ifndef STRATA_PREFLIGHT_BUNDLE_H_
#define STRATA_PREFLIGHT_BUNDLE_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/json_output.h"
#include "strata/core/result.h"
#include "strata/preflight/node_state.h"

namespace strata::preflight {

/// The first line of nccl-user.conf: "# read from " and the file NCCL would read (the
/// NCCL_CONF_FILE of the non-interactive shell, else the collecting user's ~/.nccl.conf).
inline constexpr const char* kUserNcclConfHeader = "# read from ";
inline constexpr const char* kNodeStateManifest = "node-state.json";
inline constexpr const char* kNodeStateKind = "node_state";
inline constexpr const char* kGpuQuery =
    "index,uuid,name,memory.used,memory.total,utilization.gpu,clocks_throttle_reasons.active,"
    "ecc.errors.uncorrected.volatile.total,retired_pages.pending";
/// gpu-repair.csv: row remapping (NVML nvmlDeviceGetRemappedRows, A100 and later) and the
/// driver's recovery action (R575 and later; a driver without the field refuses the whole query,
/// so the collector retries with kGpuRemapQuery alone).
inline constexpr const char* kGpuRepairQuery =
    "index,remapped_rows.pending,remapped_rows.failure,gpu_recovery_action";
inline constexpr const char* kGpuRemapQuery = "index,remapped_rows.pending,remapped_rows.failure";

/// The manifest's fields (host, time, uid, processes, notes) as JSON.
Json ManifestToJson(const NodeState& state);

/// Reads node-state.json into `state` (strict: unknown keys and wrong types are errors).
Status ParseManifestInto(std::string_view text, const std::string& file, NodeState& state);

/// Reads one bundle directory.
Result<NodeState> LoadNodeState(const std::string& dir);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_BUNDLE_H_

// The preflight checks over a set of node snapshots (one per node). Each check turns evidence
// into findings that say which node, what, by how much, and the setting or command that fixes
// it. Nothing here prints: the CLI renders a PreflightReport.
#ifndef STRATA_PREFLIGHT_CHECKS_H_
#define STRATA_PREFLIGHT_CHECKS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/units.h"
#include "strata/hang/analysis/framework_timeouts.h"
#include "strata/preflight/nccl_select.h"
#include "strata/preflight/node_state.h"
#include "strata/preflight/rules.h"

namespace strata::preflight {

struct Finding {
  Severity severity = Severity::kWarning;
  std::string check;    // "gpu-memory", "env-divergence", "dangerous-setting", "nic", "rdma", ...
  std::string node;     // "" when it concerns the whole set
  std::string message;  // what is wrong, with the numbers and where each value came from
  std::string fix;      // the setting or command that fixes it
};

/// What each node will do, as predicted: for the report even when nothing is wrong.
struct NodeSummary {
  std::string host;
  std::string driver_version;
  std::string cuda_version;
  SocketChoice socket;
  HcaChoice hca;
  std::vector<std::string> gids;  // "mlx5_1:1 GID 3 (v2, 192.168.1.11)"
  bool rdma_read = false;         // ibdev2netdev or rdma link was collected
  std::string
      env_source;  // whose environment was judged: "trainer pid N" or "non-interactive shell"
  std::vector<std::string> unread;
};

struct CompatSummary {
  std::string cuda;                           // the highest CUDA every node's driver supports
  std::map<std::string, std::string> newest;  // package -> newest release that runs ("none")
  std::map<std::string, std::string> sources;
};

struct TimeoutSummary {
  std::string framework;  // "ms-swift"
  Seconds collective_timeout;
  std::string from;         // "--ddp_timeout in the --launch command" or "ms-swift's default, ..."
  std::string source;       // where the framework's default comes from
  Seconds ib_retry_window;  // NCCL_IB_TIMEOUT/RETRY_CNT: time before an RDMA error surfaces
  std::string ib_formula;
};

struct PreflightOptions {
  std::string launch;  // the launch command line (for framework timeouts); "" = trainers' cmdlines
  /// GPUs the job expects on every node (--gpus-per-node, e.g. the cluster's or torchrun's
  /// --nproc-per-node); 0: the count most nodes show is the expected one.
  int64_t gpus_per_node = 0;
};

struct PreflightReport {
  std::vector<NodeSummary> nodes;
  std::vector<Finding> findings;
  std::optional<CompatSummary> compat;
  std::optional<TimeoutSummary> timeout;
  bool understood_anything = false;  // at least one node had GPU, network or env evidence

  size_t Count(Severity s) const;
};

PreflightReport RunPreflight(const std::vector<NodeState>& nodes, const Rules& rules,
                             const CudaCompat& compat,
                             const std::vector<hang::FrameworkTimeout>& timeouts,
                             const PreflightOptions& options);

// The checks, one family each (checks_*.cc); RunPreflight calls them in this order.
void CheckGpus(const std::vector<NodeState>& nodes, const Rules& rules, PreflightReport& report);
void CheckGpuCount(const std::vector<NodeState>& nodes, const PreflightOptions& options,
                   PreflightReport& report);
void CheckEnv(const std::vector<NodeState>& nodes, const Rules& rules, PreflightReport& report);
void CheckNetwork(const std::vector<NodeState>& nodes, PreflightReport& report);
void CheckSoftware(const std::vector<NodeState>& nodes, const CudaCompat& compat,
                   PreflightReport& report);
void CheckTimeouts(const std::vector<NodeState>& nodes, const Rules& rules,
                   const std::vector<hang::FrameworkTimeout>& timeouts,
                   const PreflightOptions& options, PreflightReport& report);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_CHECKS_H_

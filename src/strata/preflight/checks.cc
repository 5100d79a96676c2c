#include "strata/preflight/checks.h"

#include <algorithm>

namespace strata::preflight {

size_t PreflightReport::Count(Severity s) const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(),
                                           [s](const Finding& f) { return f.severity == s; }));
}

PreflightReport RunPreflight(const std::vector<NodeState>& nodes, const Rules& rules,
                             const CudaCompat& compat,
                             const std::vector<hang::FrameworkTimeout>& timeouts,
                             const PreflightOptions& options) {
  PreflightReport report;
  for (const NodeState& n : nodes) {
    NodeSummary s;
    s.host = n.host;
    s.driver_version = n.driver_version;
    s.cuda_version = n.cuda_version;
    s.unread = n.unread;
    report.nodes.push_back(std::move(s));
    for (const char* part : {"gpus", "compute_apps", "interfaces", "shells", "rdma", "driver"}) {
      report.understood_anything |= n.Has(part);
    }
  }
  CheckGpus(nodes, rules, report);
  CheckGpuCount(nodes, options, report);
  CheckEnv(nodes, rules, report);
  CheckNetwork(nodes, report);
  CheckSoftware(nodes, compat, report);
  CheckTimeouts(nodes, rules, timeouts, options, report);
  // Errors first, then by node, keeping each check's own order.
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity < b.severity; });
  return report;
}

}  // namespace strata::preflight

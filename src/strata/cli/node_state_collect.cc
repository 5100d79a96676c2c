#include "strata/cli/node_state_collect.h"

#include <fmt/format.h>

#include "strata/cli/cli_common.h"
#include "strata/preflight/collect_node.h"

namespace strata::cli {

int RunCollectNodeState(const std::string& out_dir, const std::string& host,
                        const std::string& proc_root, const std::string& timeout_text) {
  preflight::NodeStateOptions options;
  options.out_dir = out_dir;
  options.host = host;
  options.proc_root = proc_root;
  auto timeout = ParseSeconds(timeout_text);
  if (!timeout.ok()) return ReportError(Error(timeout.error()).InField("--timeout"));
  options.timeout = *timeout;
  auto result = preflight::CollectNodeState(options);
  if (!result.ok()) return ReportError(result.error());
  for (const std::string& note : result->state.notes) Warn(note);
  size_t trainers = 0;
  for (const auto& p : result->state.processes) trainers += p.trainer() ? 1u : 0u;
  fmt::print(
      "{}: node state ({} trainer process{}, {} other GPU process{}, {} part{} not collected); "
      "check with "
      "'strata preflight {}/*'\n",
      result->bundle_dir, trainers, trainers == 1 ? "" : "es",
      result->state.processes.size() - trainers,
      result->state.processes.size() - trainers == 1 ? "" : "es", result->state.notes.size(),
      result->state.notes.size() == 1 ? "" : "s", out_dir);
  return kExitOk;
}

}  // namespace strata::cli

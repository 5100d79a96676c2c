// strata preflight BUNDLE_DIR...: before a launch, read the node-state bundles that
// `strata collect --node-state` wrote on every node and report dirty GPUs, diverging or
// dangerous NCCL/CUDA settings, the interfaces and RDMA ports NCCL will pick, driver/framework
// mismatches and timeouts. Exit 1 when a check finds an error (or a warning, with --strict).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/core/json_output.h"
#include "strata/preflight/bundle.h"
#include "strata/preflight/checks.h"
#include "strata/preflight/report_json.h"
#include "strata/report/preflight_text.h"

namespace strata::cli {

int RunPreflight(int argc, char** argv) {
  CLI::App app{
      "Check nodes before a launch: reads the bundles 'strata collect --node-state' wrote (one "
      "directory per "
      "node) and reports GPU memory held by dead or foreign processes, NCCL/CUDA variables that "
      "differ across "
      "nodes or shells (with the file that set each), dangerous settings, the interface and RDMA "
      "ports NCCL will "
      "pick on each node, driver/CUDA/framework mismatches, collective timeouts, "
      "Xid/ECC/throttling.\n"
      "Exit codes: 0 ready, 1 errors found (or warnings, with --strict), 2 bad usage or nothing "
      "readable.",
      "strata preflight"};
  std::vector<std::string> dirs;
  OutputOptions out;
  bool strict = false;
  preflight::PreflightOptions options;
  app.add_option("bundles", dirs, "node-state bundle directories (e.g. preflight/*)")->required();
  app.add_option("--launch", options.launch,
                 "the launch command line, to read its collective timeout (e.g. \"megatron sft ... "
                 "--ddp_timeout 1800\")");
  app.add_option("--gpus-per-node", options.gpus_per_node,
                 "GPUs every node must show (default: the count most nodes show)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--strict", strict, "exit 1 on warnings too");
  AddOutputOptions(app, out, kJsonFlag, "", "the report");
  if (auto code = ParseArgs(app, argc, argv)) return *code;

  std::vector<preflight::NodeState> nodes;
  for (const std::string& dir : dirs) {
    auto node = preflight::LoadNodeState(dir);
    if (!node.ok()) return ReportError(node.error());
    nodes.push_back(std::move(*node));
  }
  auto rules = preflight::LoadRules();
  if (!rules.ok()) return ReportError(rules.error());
  auto compat = preflight::LoadCudaCompat();
  if (!compat.ok()) return ReportError(compat.error());
  auto timeouts = hang::LoadFrameworkTimeouts();
  if (!timeouts.ok()) return ReportError(timeouts.error());

  const preflight::PreflightReport report =
      preflight::RunPreflight(nodes, *rules, *compat, *timeouts, options);
  if (!report.understood_anything) {
    return ReportError(
        InvalidInput(fmt::format("nothing to check: none of the {} bundle{} holds GPU, network, "
                                 "driver or shell evidence",
                                 dirs.size(), dirs.size() == 1 ? "" : "s"))
            .WithHint("collect with 'strata collect --node-state --out DIR' on every node"));
  }
  const std::string text =
      out.json ? DumpJson(preflight::ReportToJson(report)) : RenderPreflightText(report);
  if (int rc = EmitOutputs(out, text); rc != kExitOk) return rc;
  const bool failed = report.Count(preflight::Severity::kError) > 0 ||
                      (strict && report.Count(preflight::Severity::kWarning) > 0);
  return failed ? kExitCheckFailed : kExitOk;
}

}  // namespace strata::cli

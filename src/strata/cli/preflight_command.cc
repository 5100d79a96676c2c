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
#include "strata/core/table.h"
#include "strata/preflight/bundle.h"
#include "strata/preflight/checks.h"
#include "strata/preflight/report_json.h"

namespace strata::cli {
namespace {

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string RenderText(const preflight::PreflightReport& r) {
  using preflight::Severity;
  std::string out =
      fmt::format("preflight of {} node{}\n\n", r.nodes.size(), r.nodes.size() == 1 ? "" : "s");
  Table nodes({{"node", Align::kLeft},
               {"driver (CUDA)", Align::kLeft},
               {"NCCL socket interface", Align::kLeft},
               {"RDMA ports", Align::kLeft},
               {"env judged", Align::kLeft}});
  for (const auto& n : r.nodes) {
    const std::string driver =
        n.driver_version.empty() ? "?" : fmt::format("{} ({})", n.driver_version, n.cuda_version);
    const std::string socket =
        n.socket.interfaces.empty()
            ? "none"
            : fmt::format("{} {}", n.socket.interfaces[0], n.socket.addresses[0]);
    std::string rdma = n.hca.disabled        ? "disabled"
                       : n.hca.ports.empty() ? "none"
                                             : Join(n.hca.ports, ",");
    nodes.AddRow({n.host, driver, socket, rdma, n.env_source});
  }
  out += nodes.Render();
  for (const auto& n : r.nodes) {
    if (!n.socket.rule.empty()) {
      out += fmt::format("\n{}: socket interface by {}", n.host, n.socket.rule);
      if (!n.gids.empty()) out += fmt::format("; {}", Join(n.gids, ", "));
      break;  // one line as an example; --json has every node
    }
  }
  out += "\n";
  if (r.compat) {
    std::string newest;
    for (const auto& [package, version] : r.compat->newest) {
      newest += fmt::format("{}{} {}", newest.empty() ? "" : ", ", package, version);
    }
    out += fmt::format("software: the drivers support CUDA {} -> newest that runs: {}\n",
                       r.compat->cuda, newest);
  }
  if (r.timeout) {
    if (r.timeout->framework.empty()) {
      out += fmt::format("timeouts: {}; an RDMA error surfaces after {}\n", r.timeout->from,
                         r.timeout->ib_formula);
    } else {
      out += fmt::format(
          "timeouts: {} collective timeout {:.0f} s ({}): a hang is reported after that long; an "
          "RDMA error surfaces after {}\n",
          r.timeout->framework, r.timeout->collective_timeout.s(), r.timeout->from,
          r.timeout->ib_formula);
    }
  }
  for (const Severity s : {Severity::kError, Severity::kWarning}) {
    const size_t count = r.Count(s);
    if (count == 0) continue;
    out += fmt::format("\n{}s ({}):\n", preflight::SeverityName(s), count);
    for (const auto& f : r.findings) {
      if (f.severity != s) continue;
      out += fmt::format("  [{}] {}{}\n", f.check, f.node.empty() ? "" : f.node + ": ", f.message);
      out += fmt::format("      fix: {}\n", f.fix);
    }
  }
  std::string unread;
  for (const auto& n : r.nodes) {
    for (const std::string& u : n.unread) unread += fmt::format("  {}: {}\n", n.host, u);
  }
  if (!unread.empty()) out += "\nnot checked (not in the bundle):\n" + unread;
  const size_t errors = r.Count(Severity::kError), warnings = r.Count(Severity::kWarning);
  // Never "ready" on evidence that was not there: a missing part is a check that did not run.
  out += fmt::format("\nresult: {} error{}, {} warning{}: {}\n", errors, errors == 1 ? "" : "s",
                     warnings, warnings == 1 ? "" : "s",
                     errors > 0 ? "fix the errors before launching"
                     : unread.empty()
                         ? "ready to launch"
                         : "no error in what was read, but the parts above were not checked");
  return out;
}

}  // namespace

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
  bool json = false;
  bool strict = false;
  std::string output;
  preflight::PreflightOptions options;
  app.add_option("bundles", dirs, "node-state bundle directories (e.g. preflight/*)")->required();
  app.add_option("--launch", options.launch,
                 "the launch command line, to read its collective timeout (e.g. \"megatron sft ... "
                 "--ddp_timeout 1800\")");
  app.add_flag("--strict", strict, "exit 1 on warnings too");
  app.add_flag("--json", json, "print the report as JSON (with a schema_version)");
  app.add_option("-o,--output", output,
                 "write the report to this file (atomically) instead of stdout");
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
  const std::string text = json ? DumpJson(preflight::ReportToJson(report)) : RenderText(report);
  if (int rc = EmitOutput(text, output); rc != kExitOk) return rc;
  const bool failed = report.Count(preflight::Severity::kError) > 0 ||
                      (strict && report.Count(preflight::Severity::kWarning) > 0);
  return failed ? kExitCheckFailed : kExitOk;
}

}  // namespace strata::cli

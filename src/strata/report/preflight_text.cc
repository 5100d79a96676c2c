#include "strata/report/preflight_text.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "strata/core/table.h"

namespace strata {
namespace {

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

std::string RenderPreflightText(const preflight::PreflightReport& r) {
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
    std::string rdma = n.hca.disabled        ? "none (" + n.hca.disabled_by + ")"
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

}  // namespace strata

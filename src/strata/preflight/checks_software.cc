// Software checks: driver -> highest CUDA -> the newest torch / vLLM / SGLang that can run
// (data/preflight/cuda_compat.yaml) against what each node has installed; and the watchdog and
// timeout settings of the launch with the time to detection they imply (incident 2).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "strata/preflight/checks.h"
#include "strata/preflight/effective_env.h"

namespace strata::preflight {
namespace {

// "2.11.0+cu128" -> "12.8"; "" without a +cuXYZ tag.
std::string WheelCuda(const std::string& version) {
  const size_t at = version.find("+cu");
  if (at == std::string::npos) return "";
  const std::string digits = version.substr(at + 3);
  if (digits.size() < 3 || digits.find_first_not_of("0123456789") != std::string::npos) return "";
  return digits.substr(0, digits.size() - 1) + "." + digits.substr(digits.size() - 1);
}

int Major(const std::string& v) { return std::atoi(v.c_str()); }

// "18000000 s = 208.3 days", "1800 s = 30 min": timeouts span seconds to months.
std::string Duration(Seconds t) {
  const double s = t.s();
  if (s >= 86400) return fmt::format("{:.0f} s = {:.1f} days", s, s / 86400);
  if (s >= 3600) return fmt::format("{:.0f} s = {:.1f} h", s, s / 3600);
  if (s >= 60) return fmt::format("{:.0f} s = {:.0f} min", s, s / 60);
  return FormatSeconds(t);
}

bool RunsOn(const std::vector<std::string>& wheels, const std::string& cuda) {
  return std::any_of(wheels.begin(), wheels.end(),
                     [&](const std::string& c) { return CompareVersions(c, cuda) <= 0; });
}

// The release entry for an installed version: "0.20" covers "0.20.1"; "any" covers all.
const std::pair<std::string, std::vector<std::string>>* ReleaseOf(const PackageReleases& p,
                                                                  const std::string& version) {
  const std::string plain = version.substr(0, version.find('+'));
  for (const auto& r : p.releases) {
    if (r.first == "any" || plain == r.first || plain.rfind(r.first + ".", 0) == 0) return &r;
  }
  return nullptr;
}

std::string NewestRunnable(const PackageReleases& p, const std::string& cuda) {
  std::string best;
  for (const auto& [version, wheels] : p.releases) {
    if (!RunsOn(wheels, cuda)) continue;
    if (version == "any") return "any release";
    if (best.empty() || CompareVersions(version, best) > 0) best = version;
  }
  return best.empty() ? "none" : best;
}

}  // namespace

void CheckSoftware(const std::vector<NodeState>& nodes, const CudaCompat& compat,
                   PreflightReport& report) {
  std::map<std::string, std::vector<std::string>> drivers;
  std::string cuda;  // the lowest "highest CUDA" over the nodes
  for (const NodeState& n : nodes) {
    if (n.driver_version.empty()) continue;
    drivers[n.driver_version].push_back(n.host);
    if (cuda.empty() || CompareVersions(n.cuda_version, cuda) < 0) cuda = n.cuda_version;
  }
  if (drivers.size() > 1) {
    std::string parts;
    for (const auto& [d, hosts] : drivers) {
      std::string list;
      for (const std::string& h : hosts) list += (list.empty() ? "" : ", ") + h;
      parts += fmt::format("{}{} on {}", parts.empty() ? "" : "; ", d, list);
    }
    report.findings.push_back(Finding{Severity::kWarning, "driver", "",
                                      "driver versions differ across nodes: " + parts,
                                      "install the same driver on every node"});
  }
  if (cuda.empty()) return;
  CompatSummary summary;
  summary.cuda = cuda;
  for (const auto& [name, releases] : compat.packages) {
    summary.newest[name] = NewestRunnable(releases, cuda);
    summary.sources[name] = releases.source;
  }
  report.compat = summary;
  for (const NodeState& n : nodes) {
    if (n.cuda_version.empty()) continue;
    for (const auto& [name, version] : n.versions) {
      auto p = compat.packages.find(name);
      const std::string tag = WheelCuda(version);
      if (!tag.empty()) {
        if (CompareVersions(tag, n.cuda_version) <= 0) continue;
        const bool major = Major(tag) > Major(n.cuda_version);
        report.findings.push_back(Finding{
            major ? Severity::kError : Severity::kWarning, "cuda-compat", n.host,
            major ? fmt::format("{} {} is built for CUDA {}; driver {} supports CUDA {}: a newer "
                                "major version, it "
                                "cannot run",
                                name, version, tag, n.driver_version, n.cuda_version)
                  : fmt::format(
                        "{} {} is built for CUDA {}; driver {} supports CUDA {}: it runs only "
                        "through "
                        "minor-version compatibility (anything that JIT-compiles newer PTX fails)",
                        name, version, tag, n.driver_version, n.cuda_version),
            fmt::format(
                "install a +cu{} build, or a driver that supports CUDA {}",
                [&] {
                  std::string c = n.cuda_version;
                  c.erase(std::remove(c.begin(), c.end(), '.'), c.end());
                  return c;
                }(),
                tag)});
        continue;
      }
      if (p == compat.packages.end()) continue;
      const auto* release = ReleaseOf(p->second, version);
      if (!release || RunsOn(release->second, n.cuda_version)) continue;
      std::string wheels;
      for (const std::string& c : release->second) wheels += (wheels.empty() ? "" : " or ") + c;
      report.findings.push_back(Finding{
          Severity::kError, "cuda-compat", n.host,
          fmt::format("{} {} needs CUDA {}; driver {} supports CUDA {} "
                      "(data/preflight/cuda_compat.yaml, with its source)",
                      name, version, wheels, n.driver_version, n.cuda_version),
          NewestRunnable(p->second, n.cuda_version) == "none"
              ? fmt::format("no {} release runs on this driver: upgrade the driver", name)
              : fmt::format(
                    "install {} {} (the newest that runs on CUDA {}), or upgrade the driver", name,
                    NewestRunnable(p->second, n.cuda_version), n.cuda_version)});
    }
  }
}

void CheckTimeouts(const std::vector<NodeState>& nodes, const Rules& rules,
                   const std::vector<hang::FrameworkTimeout>& timeouts,
                   const PreflightOptions& options, PreflightReport& report) {
  std::string cmdline = options.launch;
  std::string whose = "the --launch command";
  std::map<std::string, std::string> env;
  for (const NodeState& n : nodes) {
    for (const ProcessInfo& p : n.processes) {
      if (!p.trainer() || !p.exists || !cmdline.empty()) continue;
      cmdline = p.cmdline;
      whose = fmt::format("the command line of trainer pid {} on {}", p.pid, n.host);
    }
  }
  if (!nodes.empty()) env = ValuesOf(EffectiveEnvWithOrigin(nodes[0]));
  TimeoutSummary t;
  // NCCL's IB transport: each attempt waits 4.096 us x 2^NCCL_IB_TIMEOUT, and it retries
  // NCCL_IB_RETRY_CNT times (defaults 20 and 7; NCCL docs, env.html) before the error surfaces.
  const int ib_timeout =
      env.count("NCCL_IB_TIMEOUT") ? std::atoi(env["NCCL_IB_TIMEOUT"].c_str()) : 20;
  const int retry =
      env.count("NCCL_IB_RETRY_CNT") ? std::atoi(env["NCCL_IB_RETRY_CNT"].c_str()) : 7;
  const Seconds attempt = Seconds::Us(4.096 * std::pow(2.0, ib_timeout));
  t.ib_retry_window = attempt * (retry + 1);
  t.ib_formula = fmt::format("4.096 us x 2^{} x ({} retries + 1) = {}", ib_timeout, retry,
                             FormatSeconds(t.ib_retry_window));
  if (cmdline.empty()) {
    t.framework = "";
    t.from = "no launch command (pass --launch '<command>') and no running trainer";
    report.timeout = t;
    return;
  }
  const hang::FrameworkTimeout* f = hang::FindFramework(timeouts, cmdline);
  if (!f) return;
  t.framework = f->name;
  if (auto flag = hang::TimeoutFromCommandLine(*f, cmdline)) {
    t.collective_timeout = *flag;
    t.from = fmt::format("{} in {}", f->flag, whose);
  } else {
    t.collective_timeout = f->default_timeout;
    t.from = fmt::format("{}'s default, no {} in {}", f->name,
                         f->flag.empty() ? "timeout" : f->flag, whose);
  }
  t.source = f->source;
  report.timeout = t;
  if (t.collective_timeout > rules.max_collective_timeout) {
    const double in_units = rules.max_collective_timeout / f->flag_unit;
    report.findings.push_back(Finding{
        Severity::kWarning, "timeout", "",
        fmt::format("the collective timeout is {} ({}): a rank that dies or OOMs leaves the others "
                    "waiting that "
                    "long before the NCCL watchdog reports anything",
                    Duration(t.collective_timeout), t.from),
        f->flag.empty() ? "pass timeout=datetime.timedelta(minutes=30) to init_process_group"
                        : fmt::format("{} {:.0f} ({})", f->flag, in_units,
                                      Duration(rules.max_collective_timeout))});
  }
}

}  // namespace strata::preflight

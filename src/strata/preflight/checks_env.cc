// Environment checks: NCCL/CUDA/torch variables that differ across nodes or between a node's
// login and non-interactive shells (incident 6: a node's global bashrc exported its own NCCL
// debug variables), naming the file that set each; and settings known to be dangerous.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/preflight/checks.h"
#include "strata/preflight/effective_env.h"
#include "strata/preflight/nccl_select.h"

namespace strata::preflight {
namespace {

std::string Describe(const std::optional<EnvValue>& v) {
  if (!v) return "unset";
  return fmt::format("'{}' (set by {})", v->value, v->origin);
}

std::string JoinHosts(const std::vector<std::string>& hosts) {
  std::string out;
  for (const std::string& h : hosts) out += (out.empty() ? "" : ", ") + h;
  return out;
}

// For the variables that select devices (NCCL_SOCKET_IFNAME, NCCL_IB_HCA): what NCCL selects
// on each node with that node's value, when it is the same non-empty choice everywhere ("the
// interfaces ens1np0"); nothing otherwise, or when a node's devices were not collected.
std::optional<std::string> SameSelection(const std::vector<NodeState>& nodes,
                                         const std::vector<std::map<std::string, EnvValue>>& envs,
                                         const std::string& key) {
  const bool socket = key == "NCCL_SOCKET_IFNAME";
  if (!socket && key != "NCCL_IB_HCA") return std::nullopt;
  std::optional<std::vector<std::string>> first;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].Has(socket ? "interfaces" : "rdma")) return std::nullopt;
    const std::map<std::string, std::string> env = ValuesOf(envs[i]);
    const std::vector<std::string> chosen =
        socket ? PredictSocketInterfaces(nodes[i].interfaces, env).interfaces
               : PredictIbPorts(nodes[i].rdma, env).ports;
    if (chosen.empty() || (first && *first != chosen)) return std::nullopt;
    first = chosen;
  }
  if (!first) return std::nullopt;
  std::string list;
  for (const std::string& d : *first) list += (list.empty() ? "" : ", ") + d;
  return fmt::format("{} {}",
                     socket ? (first->size() == 1 ? "interface" : "interfaces")
                            : (first->size() == 1 ? "RDMA port" : "RDMA ports"),
                     list);
}

void CheckAcrossNodes(const std::vector<NodeState>& nodes,
                      const std::vector<std::map<std::string, EnvValue>>& envs,
                      PreflightReport& report) {
  if (nodes.size() < 2) return;
  std::set<std::string> keys;
  for (const auto& env : envs) {
    for (const auto& [k, v] : env) {
      if (IsComparedVariable(k)) keys.insert(k);
    }
  }
  for (const std::string& key : keys) {
    // value ("" = unset) -> hosts, and one example of where it was set
    std::map<std::string, std::vector<std::string>> groups;
    std::map<std::string, std::optional<EnvValue>> example;
    for (size_t i = 0; i < nodes.size(); ++i) {
      auto it = envs[i].find(key);
      const std::string value = it == envs[i].end() ? std::string("\x01unset") : it->second.value;
      groups[value].push_back(nodes[i].host);
      if (!example.count(value)) {
        example[value] = it == envs[i].end() ? std::nullopt : std::optional<EnvValue>(it->second);
      }
    }
    if (groups.size() < 2) continue;
    // The majority value first: the odd nodes out are the ones to fix.
    std::vector<std::pair<std::string, std::vector<std::string>>> ordered(groups.begin(),
                                                                          groups.end());
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
      return a.second.size() > b.second.size();
    });
    std::string parts;
    for (const auto& [value, hosts] : ordered) {
      parts += fmt::format("{}{} on {}", parts.empty() ? "" : "; ", Describe(example[value]),
                           JoinHosts(hosts));
    }
    std::string fix;
    for (size_t g = 1; g < ordered.size(); ++g) {
      const auto& ex = example[ordered[g].first];
      fix += fmt::format("{}on {}: {}", fix.empty() ? "" : "; ", JoinHosts(ordered[g].second),
                         ex ? fmt::format("remove {} from {}", key, ex->origin)
                            : fmt::format("set {} as on the other nodes", key));
    }
    // Two spellings of one choice ("ens1np0" and "==ens1np0" on nodes that have no other
    // interface starting with ens1np0): NCCL selects the same thing on every node, so the
    // difference is textual, a warning, not a fault.
    if (const std::optional<std::string> same = SameSelection(nodes, envs, key)) {
      report.findings.push_back(Finding{
          Severity::kWarning, "env-divergence", "",
          fmt::format("{} is spelled differently across nodes ({}), but selects the same {} on "
                      "every node",
                      key, parts, *same),
          "keep one spelling, so that a node with more devices cannot select more"});
      continue;
    }
    report.findings.push_back(
        Finding{Severity::kError, "env-divergence", "",
                fmt::format("{} differs across nodes: {}", key, parts),
                fix + " (or set it once in the launch command, for every node)"});
  }
}

void CheckShells(const NodeState& node, PreflightReport& report) {
  const ShellEnv* login = node.Shell("login");
  const ShellEnv* batch = node.Shell("non-interactive");
  if (!login || !batch) return;
  std::set<std::string> keys;
  for (const auto& [k, v] : login->vars) keys.insert(k);
  for (const auto& [k, v] : batch->vars) keys.insert(k);
  for (const std::string& key : keys) {
    if (!IsComparedVariable(key)) continue;
    auto a = login->vars.find(key);
    auto b = batch->vars.find(key);
    const bool has_a = a != login->vars.end(), has_b = b != batch->vars.end();
    if (has_a && has_b && a->second.value == b->second.value) continue;
    auto describe = [](bool has, const auto& it) {
      return has ? fmt::format("'{}' (set by {})", it->second.value, it->second.file)
                 : std::string("unset");
    };
    report.findings.push_back(Finding{
        Severity::kWarning, "env-shells", node.host,
        fmt::format("{}: login shell {}, non-interactive shell {}: a job started over ssh, pdsh or "
                    "srun gets the "
                    "non-interactive value, an interactive test run the login one",
                    key, describe(has_a, a), describe(has_b, b)),
        fmt::format("set {} in one place that both shells read (or in the launch command)", key)});
  }
}

void CheckDangerous(const std::vector<NodeState>& nodes,
                    const std::vector<std::map<std::string, EnvValue>>& envs, const Rules& rules,
                    PreflightReport& report) {
  for (const DangerousSetting& d : rules.dangerous) {
    // "value (origin)" -> hosts
    std::map<std::string, std::vector<std::string>> hits;
    for (size_t i = 0; i < nodes.size(); ++i) {
      auto it = envs[i].find(d.variable);
      if (it == envs[i].end()) continue;
      const bool bad = d.values.empty() ||
                       std::any_of(d.values.begin(), d.values.end(), [&](const std::string& v) {
                         return d.ignore_case ? AsciiLower(v) == AsciiLower(it->second.value)
                                              : v == it->second.value;
                       });
      if (bad)
        hits[fmt::format("{}={} (set by {})", d.variable, it->second.value, it->second.origin)]
            .push_back(nodes[i].host);
    }
    for (const auto& [what, hosts] : hits) {
      report.findings.push_back(Finding{
          d.severity, "dangerous-setting", hosts.size() == 1 ? hosts[0] : "",
          fmt::format("{}{}: {}", what, hosts.size() == 1 ? "" : " on " + JoinHosts(hosts), d.why),
          d.fix});
    }
  }
}

// CUDA_VISIBLE_DEVICES is not compared across nodes (a scheduler sets it per job), but one
// exported by a shell file applies to every job started over ssh, pdsh or srun on that node
// (audit56 Q2: /etc/bash.bashrc with CUDA_VISIBLE_DEVICES=0,1,2,3 on 8-GPU nodes read "ready to
// launch"). CUDA then enumerates only the listed GPUs: torchrun's local ranks beyond them fail
// in torch.cuda.set_device with "invalid device ordinal", and nvidia-smi, which ignores the
// variable, still shows every GPU. A list shorter than the node's GPUs is an error; a running
// trainer's own value is its job's business and is not judged.
void CheckVisibleDevices(const std::vector<NodeState>& nodes,
                         const std::vector<std::map<std::string, EnvValue>>& envs,
                         PreflightReport& report) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto it = envs[i].find("CUDA_VISIBLE_DEVICES");
    if (it == envs[i].end() || it->second.origin.starts_with("trainer pid")) continue;
    const size_t gpus = nodes[i].gpus.size();
    if (gpus == 0) continue;
    const std::string& value = it->second.value;
    std::vector<std::string> listed;
    size_t start = 0;
    while (start <= value.size()) {
      const size_t comma = std::min(value.find(',', start), value.size());
      const std::string t(TrimSpace(std::string_view(value).substr(start, comma - start)));
      // CUDA stops at the first invalid entry ("-1", "NoDevFiles"): none after it is visible.
      if (t.empty() || t.starts_with("-") || t == "NoDevFiles") break;
      listed.push_back(t);
      start = comma + 1;
    }
    if (listed.size() >= gpus) continue;
    report.findings.push_back(Finding{
        Severity::kError, "visible-devices", nodes[i].host,
        fmt::format("CUDA_VISIBLE_DEVICES={} (set by {}) shows {} of the node's {} GPUs to every "
                    "job started over ssh, pdsh or srun: ranks placed on the others fail with "
                    "\"invalid device ordinal\" (nvidia-smi ignores the variable and lists all {})",
                    value, it->second.origin, listed.size(), gpus, gpus),
        fmt::format("remove CUDA_VISIBLE_DEVICES from {} and let the scheduler or the launch "
                    "command set it per job",
                    it->second.origin)});
  }
}

// A node whose shells point NCCL at a configuration file (NCCL_CONF_FILE) the bundle does not
// hold: NCCL applies that file's variables under the environment's, so the interface and HCA
// predicted here may not be NCCL's (audit56 Q9). Said, not guessed.
void CheckUncollectedConfFile(const std::vector<NodeState>& nodes,
                              const std::vector<std::map<std::string, EnvValue>>& envs,
                              PreflightReport& report) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto it = envs[i].find("NCCL_CONF_FILE");
    if (it == envs[i].end() || it->second.origin.starts_with("trainer pid")) continue;
    if (nodes[i].user_nccl_conf_path == it->second.value) continue;
    report.findings.push_back(Finding{
        Severity::kWarning, "env-file", nodes[i].host,
        fmt::format("NCCL_CONF_FILE={} (set by {}): the file is not in the bundle, so the NCCL "
                    "variables it sets (over /etc/nccl.conf, under the environment) were not "
                    "checked",
                    it->second.value, it->second.origin),
        "re-collect with strata collect --node-state as the job's user on the node, or put the "
        "variables in the launch environment"});
  }
}

}  // namespace

void CheckEnv(const std::vector<NodeState>& nodes, const Rules& rules, PreflightReport& report) {
  std::vector<std::map<std::string, EnvValue>> envs;
  for (const NodeState& n : nodes) envs.push_back(EffectiveEnvWithOrigin(n));
  CheckAcrossNodes(nodes, envs, report);
  for (const NodeState& n : nodes) CheckShells(n, report);
  CheckDangerous(nodes, envs, rules, report);
  CheckVisibleDevices(nodes, envs, report);
  CheckUncollectedConfFile(nodes, envs, report);
}

}  // namespace strata::preflight

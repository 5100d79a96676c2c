#include "strata/preflight/effective_env.h"

#include <fmt/format.h>

namespace strata::preflight {

std::map<std::string, EnvValue> EffectiveEnvWithOrigin(const NodeState& node, std::string* source) {
  std::map<std::string, EnvValue> env;
  for (const auto& [k, v] : node.nccl_conf) env[k] = EnvValue{v, "/etc/nccl.conf"};
  // The user's file ($NCCL_CONF_FILE or ~/.nccl.conf) is read first by NCCL, so it wins over
  // /etc/nccl.conf; the environment wins over both (nccl src/misc/param.cc initEnvFunc).
  for (const auto& [k, v] : node.user_nccl_conf) env[k] = EnvValue{v, node.user_nccl_conf_path};
  // Before a launch the shells are what a new job gets; a running trainer's environment (a
  // leftover, or the job being diagnosed) is the fallback when no shell was recorded.
  for (const char* name : {"non-interactive", "login"}) {
    if (const ShellEnv* shell = node.Shell(name)) {
      for (const auto& [k, v] : shell->vars) env[k] = EnvValue{v.value, v.file};
      if (source) *source = std::string(name) + " shell";
      return env;
    }
  }
  for (const ProcessInfo& p : node.processes) {
    if (!p.trainer() || !p.exists) continue;
    for (const auto& [k, v] : p.env) env[k] = EnvValue{v, fmt::format("trainer pid {}", p.pid)};
    if (source) *source = fmt::format("trainer pid {}", p.pid);
    return env;
  }
  if (source) {
    *source = !node.user_nccl_conf.empty() ? node.user_nccl_conf_path + " and /etc/nccl.conf only"
              : node.nccl_conf.empty()     ? "none collected"
                                           : "/etc/nccl.conf only";
  }
  return env;
}

std::map<std::string, std::string> ValuesOf(const std::map<std::string, EnvValue>& env) {
  std::map<std::string, std::string> values;
  for (const auto& [k, v] : env) values[k] = v.value;
  return values;
}

bool IsComparedVariable(const std::string& key) {
  if (key == "CUDA_VISIBLE_DEVICES") return false;
  for (const char* prefix : {"NCCL_", "CUDA_", "TORCH_"}) {
    if (key.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace strata::preflight

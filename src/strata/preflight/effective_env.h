// The variables NCCL and torch will see on a node, and where each came from.
#ifndef STRATA_PREFLIGHT_EFFECTIVE_ENV_H_
#define STRATA_PREFLIGHT_EFFECTIVE_ENV_H_

#include <map>
#include <string>

#include "strata/preflight/node_state.h"

namespace strata::preflight {

struct EnvValue {
  std::string value;
  std::string origin;  // "/etc/bash.bashrc", "/etc/nccl.conf", "trainer pid 2291734", "(inherited)"
};

/// /etc/nccl.conf, overridden by the user's NCCL file ($NCCL_CONF_FILE or ~/.nccl.conf), overridden
/// by the environment of the non-interactive shell (what srun, pdsh
/// and ssh start), else of the login shell, else of a running trainer (the lowest pid).
/// `source` receives which environment was used.
std::map<std::string, EnvValue> EffectiveEnvWithOrigin(const NodeState& node,
                                                       std::string* source = nullptr);

/// The values alone, for the selection rules.
std::map<std::string, std::string> ValuesOf(const std::map<std::string, EnvValue>& env);

/// Variables whose difference between nodes or shells matters: NCCL_*, CUDA_* (except
/// CUDA_VISIBLE_DEVICES, which schedulers set per node), TORCH_*.
bool IsComparedVariable(const std::string& key);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_EFFECTIVE_ENV_H_

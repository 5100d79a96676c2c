#include "strata/preflight/node_state.h"

#include <algorithm>

namespace strata::preflight {

bool NetInterface::HasFlag(const std::string& flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

// IFF_RUNNING is what ip prints as LOWER_UP (carrier) on an UP interface; loopback reports
// operstate UNKNOWN but is running.
bool NetInterface::Running() const {
  return HasFlag("UP") && HasFlag("LOWER_UP") && !HasFlag("NO-CARRIER");
}

bool NodeState::Has(const std::string& part) const {
  return std::find(read.begin(), read.end(), part) != read.end();
}

std::string NodeState::DefaultRouteDevice() const {
  for (const Route& r : routes) {
    if (r.dst == "default") return r.dev;
  }
  return "";
}

const ShellEnv* NodeState::Shell(const std::string& name) const {
  for (const ShellEnv& s : shells) {
    if (s.shell == name) return &s;
  }
  return nullptr;
}

}  // namespace strata::preflight

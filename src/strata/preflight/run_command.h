// Runs one read-only query command for the node-state collector: no shell, stdout to a file in
// the bundle's staging directory, stderr discarded, a hard timeout after which the command's own
// process group (and nothing else) is killed.
#ifndef STRATA_PREFLIGHT_RUN_COMMAND_H_
#define STRATA_PREFLIGHT_RUN_COMMAND_H_

#include <string>
#include <vector>

#include "strata/core/units.h"

namespace strata::preflight {

struct CommandOutcome {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;
};

/// `argv[0]` is the name shown to the command; `exe` the path run. `envp` empty: inherit.
CommandOutcome RunToFile(const std::string& exe, const std::vector<std::string>& argv,
                         const std::vector<std::string>& envp, const std::string& output,
                         Seconds timeout);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_RUN_COMMAND_H_

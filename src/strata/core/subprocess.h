// The one place strata starts another program: the node collectors run read-only queries
// (py-spy, nvidia-smi, ip, a login shell) with no shell in between, output to a file, and a hard
// timeout after which the program's own process group, and nothing else, is killed.
#ifndef STRATA_CORE_SUBPROCESS_H_
#define STRATA_CORE_SUBPROCESS_H_

#include <string>
#include <vector>

#include "strata/core/units.h"

namespace strata {

struct SubprocessSpec {
  std::string exe;                // the path run; no PATH search (FindExecutable), no shell
  std::vector<std::string> argv;  // argv[0] is the name shown to the program
  std::vector<std::string> envp;  // "KEY=value" each; empty: inherit strata's environment
  std::string output;             // stdout goes to this file, created or truncated
  bool stderr_to_output = false;  // stderr into `output` too; otherwise discarded
};

struct SubprocessOutcome {
  bool started = false;    // false: the output file could not be opened or fork failed
  bool timed_out = false;  // killed at the deadline; exit_code stays -1
  int exit_code = -1;      // 127: `exe` could not be executed; 128 + N: killed by signal N
};

/// Starts every spec at once (stdin is /dev/null) and waits for them under one deadline, so N
/// dumps of one node cost one timeout, not N. A program still running at the deadline gets
/// SIGKILL on its process group; one stuck in uninterruptible sleep is given a short grace to
/// be reaped and then left, rather than hang the caller. Outcomes are in the order of `specs`.
std::vector<SubprocessOutcome> RunSubprocesses(const std::vector<SubprocessSpec>& specs,
                                               Seconds timeout);

/// One program (RunSubprocesses with one spec).
SubprocessOutcome RunSubprocess(const SubprocessSpec& spec, Seconds timeout);

/// The first executable `name` in the ':'-separated `path` (empty: $PATH), or "" if none.
std::string FindExecutable(const std::string& name, const std::string& path);

}  // namespace strata

#endif  // STRATA_CORE_SUBPROCESS_H_

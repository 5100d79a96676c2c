// Parsers for the environment part of a node snapshot: the shell environments the collector
// recorded file by file (shell-env.txt), NCCL's config file (/etc/nccl.conf) and the installed
// framework versions (versions.txt).
//
// shell-env.txt holds, per shell, the filtered environment after each file it sources:
//   == login (start)              the environment before any file: "(inherited)"
//   NCCL_DEBUG=WARN
//   == login /etc/profile         after sourcing /etc/profile
//   NCCL_DEBUG=INFO
//   == non-interactive (start)
//   ...
// A variable is attributed to the last file whose sourcing changed it ("(inherited)" when none
// did): the file to edit.
#ifndef STRATA_PREFLIGHT_ENV_PARSE_H_
#define STRATA_PREFLIGHT_ENV_PARSE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/preflight/node_state.h"

namespace strata::preflight {

inline constexpr const char* kInherited = "(inherited)";

Result<std::vector<ShellEnv>> ParseShellEnv(std::string_view text, const std::string& file);

/// KEY=VALUE lines; '#' comments and blank lines skipped.
Result<std::map<std::string, std::string>> ParseNcclConf(std::string_view text,
                                                         const std::string& file);

/// "<package> <version>" lines; "-" for a package that is not installed (left out of the map).
Result<std::map<std::string, std::string>> ParseVersions(std::string_view text,
                                                         const std::string& file);

/// The variables a preflight compares: NCCL_*, CUDA_*, TORCH_*, UCX_*, GLOO_*, MASTER_*,
/// PYTORCH_CUDA_ALLOC_CONF and the launcher's rank variables.
bool IsTrackedVariable(std::string_view key);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_ENV_PARSE_H_

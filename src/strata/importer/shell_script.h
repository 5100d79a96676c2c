// Reads a launch script or command line the way bash would for the simple cases launch scripts
// use: comments, line continuations, quotes, VAR=value and NAME=( ... ) assignments (with
// `export`), $VAR / ${VAR} / ${NAME[@]} expansion. It never runs anything: command
// substitution and arithmetic are left as written and reported as unresolved.
#ifndef STRATA_IMPORTER_SHELL_SCRIPT_H_
#define STRATA_IMPORTER_SHELL_SCRIPT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"

namespace strata {

struct ShellWord {
  std::string text;
  int line = 0;  // 1-based line where the word was written (for array elements: where defined)
};

struct ShellCommandLine {
  std::map<std::string, std::string> env;  // assignments in force for this command
  std::vector<ShellWord> words;            // after expansion
  int line = 0;                            // where the command starts
};

/// Every command of the script, in order, with the variables assigned before it.
Result<std::vector<ShellCommandLine>> ParseShellScript(std::string_view text,
                                                       const std::string& file);

}  // namespace strata

#endif  // STRATA_IMPORTER_SHELL_SCRIPT_H_

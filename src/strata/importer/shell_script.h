// Reads a launch script or command line the way bash would for the simple cases launch scripts
// use: comments, line continuations, quotes, VAR=value and NAME=( ... ) assignments (with
// `export`), $VAR / ${VAR} / ${NAME[@]} expansion. It never runs anything: command
// substitution and arithmetic are left as written and reported as unresolved.
#ifndef STRATA_IMPORTER_SHELL_SCRIPT_H_
#define STRATA_IMPORTER_SHELL_SCRIPT_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"

namespace strata {

struct ShellWord {
  std::string text;
  int line = 0;  // 1-based line where the word was written (for array elements: where defined)
  /// Where a sourced file set what the word expanded ("$TP from cluster.sh:3"), or the sourced
  /// file the word itself is in; empty for words of the script alone.
  std::string origin;
};

struct ShellCommandLine {
  std::map<std::string, std::string> env;         // assignments in force for this command
  std::map<std::string, std::string> env_origin;  // those a sourced file set: "cluster.sh:3"
  std::vector<ShellWord> words;                   // after expansion
  int line = 0;                                   // where the command starts
};

/// A file that `source FILE` or `. FILE` names: its text and the name to quote it by.
struct ShellSource {
  std::string text;
  std::string file;
};
/// Finds the file a `source` line (or `sbatch`, the `verb`) names (`path` as expanded, at `line`
/// of `in_file`, the script or a file it sourced): its text, nullopt to leave it unread (a file
/// outside the bundle, as conda's activation script), or an error (a sibling file that is
/// missing).
using ShellSourceReader = std::function<Result<std::optional<ShellSource>>(
    const std::string& path, const std::string& in_file, int line, std::string_view verb)>;

/// For `sbatch [options] FILE.sh ...`: the index of the batch script's word (the first word after
/// sbatch that is no option and ends in .sh, .slurm or .sbatch), words.size() when it names none
/// (`--wrap`), nullopt when `words` is no sbatch command. The words before it are sbatch's own.
std::optional<size_t> SbatchScriptIndex(const std::vector<ShellWord>& words);

/// Every command of the script, in order, with the variables assigned before it. With a
/// reader, `source FILE` and `. FILE` run the file's assignments (and commands) in place, and so
/// does `sbatch ... FILE.sh` after its own command (the batch script runs with the variables the
/// submitting script set; sbatch's --export list is not applied).
Result<std::vector<ShellCommandLine>> ParseShellScript(std::string_view text,
                                                       const std::string& file,
                                                       const ShellSourceReader& reader = {});

}  // namespace strata

#endif  // STRATA_IMPORTER_SHELL_SCRIPT_H_

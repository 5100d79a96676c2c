// What every subcommand shares: argument parsing with CLI11, error reporting, output writing.
#ifndef STRATA_CLI_CLI_COMMON_H_
#define STRATA_CLI_CLI_COMMON_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>

#include "strata/cli/exit_status.h"
#include "strata/core/result.h"

namespace strata::cli {

/// Parses argv into `app`. Returns an exit code when the command must stop now (help printed:
/// 0; a usage error reported on stderr: 2), nullopt when parsing succeeded.
std::optional<int> ParseArgs(CLI::App& app, int argc, char** argv);

/// Prints "strata: error: <formatted error>" on stderr; returns 2 (or 1 for kCheckFailed).
int ReportError(const Error& error);

/// Prints "strata: warning: ..." on stderr.
void Warn(const std::string& message);

/// Writes `text` to stdout, or atomically to `path` when it is not empty.
int EmitOutput(const std::string& text, const std::string& path);

/// The output flags, declared once for every command: --json, --explain, -o/--output and --svg
/// mean the same thing (and say so in the same words) wherever they appear.
struct OutputOptions {
  bool json = false;
  bool explain = false;
  std::string output;  // -o FILE: written atomically; "" = stdout
  std::string svg;     // --svg FILE: the figure `strata report` draws for this view
};

/// Which of the optional output flags a command takes (-o/--output is always declared).
enum OutputFlag : unsigned { kJsonFlag = 1U, kExplainFlag = 2U, kSvgFlag = 4U };

/// The options created, for commands that relate them to their own (e.g. --json excludes --csv).
struct OutputFlagHandles {
  CLI::Option* json = nullptr;
  CLI::Option* explain = nullptr;
  CLI::Option* output = nullptr;
  CLI::Option* svg = nullptr;
};

/// Declares -o/--output and the flags in `flags` on `app`. `explain_help` says what --explain
/// adds for this command ("" = the formulas with the numbers substituted); `output_what` names
/// what -o writes ("" = the output).
OutputFlagHandles AddOutputOptions(CLI::App& app, OutputOptions& options, unsigned flags,
                                   const std::string& explain_help = "",
                                   const std::string& output_what = "");

/// Writes `text` where `options` says, then, when --svg was given, the figure `svg()` draws
/// (called only then). Returns an exit code (0: all written).
int EmitOutputs(const OutputOptions& options, const std::string& text,
                const std::function<std::string()>& svg = {});

}  // namespace strata::cli

#endif  // STRATA_CLI_CLI_COMMON_H_

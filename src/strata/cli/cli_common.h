// What every subcommand shares: argument parsing with CLI11, error reporting, output writing.
#ifndef STRATA_CLI_CLI_COMMON_H_
#define STRATA_CLI_CLI_COMMON_H_

#include <CLI/CLI.hpp>
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

/// `--svg FILE`: the command's figure, the one `strata report` draws (report/html_report.h).
void AddSvgOption(CLI::App& app, std::string& path);
/// Writes `svg` atomically to `path` when it is not empty; returns an exit code (0: written or
/// not asked for).
int WriteSvg(const std::string& path, const std::string& svg);

}  // namespace strata::cli

#endif  // STRATA_CLI_CLI_COMMON_H_

#include "strata/cli/cli_common.h"

#include <fmt/format.h>

#include <cstdio>

#include "strata/core/file_io.h"
#include "strata/core/utf8.h"

namespace strata::cli {

std::optional<int> ParseArgs(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "strata: error: {}\n  run '{} --help' for the options\n", e.what(),
               app.get_name());
    return kExitBadInput;
  }
  return std::nullopt;
}

int ReportError(const Error& error) {
  fmt::print(stderr, "strata: error: {}\n", SanitizeUtf8(error.Format()));
  return error.code == ErrorCode::kCheckFailed ? kExitCheckFailed : kExitBadInput;
}

void Warn(const std::string& message) {
  fmt::print(stderr, "strata: warning: {}\n", SanitizeUtf8(message));
}

int EmitOutput(const std::string& raw, const std::string& path) {
  // Names and lines copied from inputs may hold bytes that are not UTF-8: show them as U+FFFD.
  const std::string text = SanitizeUtf8(raw);
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  if (auto st = WriteFileAtomic(path, text); !st.ok()) return ReportError(st.error());
  return kExitOk;
}

OutputFlagHandles AddOutputOptions(CLI::App& app, OutputOptions& options, unsigned flags,
                                   const std::string& explain_help,
                                   const std::string& output_what) {
  OutputFlagHandles h;
  if ((flags & kJsonFlag) != 0U) {
    h.json = app.add_flag("--json", options.json, "print JSON for scripts (with a schema_version)");
  }
  if ((flags & kExplainFlag) != 0U) {
    h.explain = app.add_flag(
        "--explain", options.explain,
        explain_help.empty() ? "print each formula with the numbers substituted" : explain_help);
  }
  h.output = app.add_option("-o,--output", options.output,
                            fmt::format("write {} to this file (atomically) instead of stdout",
                                        output_what.empty() ? "the output" : output_what));
  if ((flags & kSvgFlag) != 0U) {
    h.svg = app.add_option("--svg", options.svg,
                           "also write the figure `strata report` draws for this view to FILE "
                           "(SVG, atomically)");
  }
  return h;
}

int EmitOutputs(const OutputOptions& options, const std::string& text,
                const std::function<std::string()>& svg) {
  if (int rc = EmitOutput(text, options.output); rc != kExitOk) return rc;
  if (options.svg.empty() || !svg) return kExitOk;
  if (auto st = WriteFileAtomic(options.svg, SanitizeUtf8(svg())); !st.ok()) {
    return ReportError(st.error());
  }
  return kExitOk;
}

}  // namespace strata::cli

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

void AddSvgOption(CLI::App& app, std::string& path) {
  app.add_option("--svg", path,
                 "also write the figure `strata report` draws for this view to FILE (SVG, "
                 "atomically)");
}

int WriteSvg(const std::string& path, const std::string& svg) {
  if (path.empty()) return kExitOk;
  if (auto st = WriteFileAtomic(path, SanitizeUtf8(svg)); !st.ok()) return ReportError(st.error());
  return kExitOk;
}

}  // namespace strata::cli

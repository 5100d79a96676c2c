#include "strata/cli/cli_common.h"

#include <cstdio>

#include <fmt/format.h>

#include "strata/core/file_io.h"

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
  fmt::print(stderr, "strata: error: {}\n", error.Format());
  return error.code == ErrorCode::kCheckFailed ? kExitCheckFailed : kExitBadInput;
}

void Warn(const std::string& message) { fmt::print(stderr, "strata: warning: {}\n", message); }

int EmitOutput(const std::string& text, const std::string& path) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  if (auto st = WriteFileAtomic(path, text); !st.ok()) return ReportError(st.error());
  return kExitOk;
}

}  // namespace strata::cli

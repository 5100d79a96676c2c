#include "strata/report/import_report.h"

#include <fmt/format.h>

namespace strata {

std::string RenderImportText(const ImportReport& report) {
  std::string out = report.yaml;
  out += fmt::format("\n# read {} job fields from the {}\n", report.fields.size(), report.format);
  if (!report.defaults.empty()) {
    out += "# framework defaults applied:\n";
    for (const auto& d : report.defaults) out += "#   " + d + "\n";
  }
  out += fmt::format("# read but not used by a strata job ({}):\n", report.unused.size());
  for (const auto& u : report.unused) out += "#   " + u + "\n";
  return out;
}

}  // namespace strata

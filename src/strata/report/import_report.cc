#include "strata/report/import_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

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

std::string RenderIgnoredKeys(const ImportReport& report, size_t named) {
  const std::vector<std::string>& unused = report.unused;
  if (unused.empty()) return "";
  std::string names;
  const size_t shown = std::min(named, unused.size());
  for (size_t i = 0; i < shown; ++i) {
    // "key = value (source)": the key alone.
    names += (i == 0 ? "" : ", ") + unused[i].substr(0, unused[i].find(" = "));
  }
  const std::string rest =
      shown < unused.size() ? fmt::format(" and {} more", unused.size() - shown) : "";
  return fmt::format("# {} key{} not understood, ignored: {}{} (--explain lists {} with {})\n",
                     unused.size(), unused.size() == 1 ? "" : "s", names, rest,
                     unused.size() == 1 ? "it" : "all",
                     unused.size() == 1 ? "its value and line" : "values and lines");
}

}  // namespace strata

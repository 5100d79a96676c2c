#include "strata/report/import_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace strata {

namespace {

// The key of an "unused" line ("key = value (source)").
std::string KeyOf(const std::string& line) { return line.substr(0, line.find(" = ")); }

// The keys of `report.unused_no_step_cost` ("key: group").
std::set<std::string> NoStepCostKeys(const ImportReport& report) {
  std::set<std::string> keys;
  for (const std::string& k : report.unused_no_step_cost) keys.insert(k.substr(0, k.find(": ")));
  return keys;
}

// The kinds of the launch's settings that left keys unread, as the summary names them, only those
// that applied: "; settings of what the launch turns off: a dynamic batching and a critic pass",
// then "; settings the actor's training strategy does not read" (FSDP2's keys under FSDP1).
std::string UnreadKindsPart(const std::vector<UnreadBecause>& kinds) {
  std::vector<std::string> off;
  bool strategy = false;
  for (const UnreadBecause k : kinds) {
    switch (k) {
      case UnreadBecause::kDynamicBatchingOff:
        off.emplace_back("a dynamic batching");
        break;
      case UnreadBecause::kNoReferencePass:
        off.emplace_back("a reference pass");
        break;
      case UnreadBecause::kNoCriticPass:
        off.emplace_back("a critic pass");
        break;
      case UnreadBecause::kStrategyDoesNotRead:
        strategy = true;
        break;
    }
  }
  std::string out;
  if (!off.empty()) {
    std::string joined;
    for (size_t i = 0; i < off.size(); ++i) {
      joined += (i == 0 ? "" : i + 1 == off.size() ? " and " : ", ") + off[i];
    }
    out += "; settings of what the launch turns off: " + joined;
  }
  if (strategy) out += "; settings the actor's training strategy does not read";
  return out;
}

}  // namespace

std::string RenderImportText(const ImportReport& report) {
  std::string out = report.yaml;
  out += fmt::format("\n# read {} job fields from the {}\n", report.fields.size(), report.format);
  if (!report.defaults.empty()) {
    out += "# framework defaults applied:\n";
    for (const auto& d : report.defaults) out += "#   " + d + "\n";
  }
  out += fmt::format("# read but not used by a strata job ({}):\n", report.unused.size());
  std::map<std::string, std::string> group;
  for (const std::string& k : report.unused_no_step_cost) {
    const size_t colon = k.find(": ");
    group[k.substr(0, colon)] = k.substr(colon + 2);
  }
  std::map<std::string, std::string> not_modelled;
  for (const std::string& k : report.unused_not_modelled) {
    const size_t colon = k.find(": ");
    not_modelled[k.substr(0, colon)] = k.substr(colon + 2);
  }
  for (const auto& u : report.unused) {
    auto it = group.find(KeyOf(u));
    auto nm = not_modelled.find(KeyOf(u));
    out += "#   " + u +
           (it != group.end() ? " [no effect on a step's time or memory: " + it->second + "]"
            : nm != not_modelled.end() ? " [may change a step, not modelled: " + nm->second + "]"
                                       : "") +
           "\n";
  }
  return out;
}

std::string RenderIgnoredKeys(const ImportReport& report, size_t named) {
  if (report.unused.empty()) return "";
  // The keys that may change a step are named first; those with no effect on a step's time or
  // memory (data/import_cost_neutral_keys.yaml: learning rates, loss coefficients, logging) are
  // counted apart, so the five names shown are what the prediction may miss.
  const std::set<std::string> neutral = NoStepCostKeys(report);
  std::vector<std::string> may_matter;
  for (const std::string& u : report.unused) {
    if (!neutral.count(KeyOf(u))) may_matter.push_back(KeyOf(u));
  }
  const size_t all = report.unused.size();
  const std::string explain = fmt::format("(--explain lists {} with {})", all == 1 ? "it" : "all",
                                          all == 1 ? "its value and line" : "values and lines");
  const size_t quiet = all - may_matter.size();
  // A key the launch itself turns off is named by its kind; --explain gives each one's reason.
  const std::string why = fmt::format(
      "no effect on a step's time or memory (loss and optimiser settings, sampling, logging, "
      "paths, run length: data/import_cost_neutral_keys.yaml{})",
      UnreadKindsPart(report.unused_unread_kinds));
  if (may_matter.empty()) {
    return fmt::format("# {} key{} ignored, with {} {}\n", all, all == 1 ? "" : "s", why, explain);
  }
  std::string names;
  const size_t shown = std::min(named, may_matter.size());
  for (size_t i = 0; i < shown; ++i) names += (i == 0 ? "" : ", ") + may_matter[i];
  const std::string rest =
      shown < may_matter.size() ? fmt::format(" and {} more", may_matter.size() - shown) : "";
  const std::string quiet_part =
      quiet == 0 ? "" : fmt::format("; {} more ignored, with {}", quiet, why);
  return fmt::format("# {} key{} not understood, ignored: {}{}{} {}\n", may_matter.size(),
                     may_matter.size() == 1 ? "" : "s", names, rest, quiet_part, explain);
}

}  // namespace strata

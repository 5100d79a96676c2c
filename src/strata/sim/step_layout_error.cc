#include "strata/sim/step_layout_error.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

#include "strata/core/file_io.h"
#include "strata/core/sourced_yaml.h"
#include "strata/job/placement.h"

namespace strata {
namespace {

constexpr std::string_view kInNode = "_in_node";
constexpr std::string_view kCrossNode = "_cross_node";

// The EP degree of "ep<N>_in_node" / "ep<N>_cross_node" and whether it is the in-node one;
// EP 0 when `family` is not of that form.
std::pair<int64_t, bool> ParseFamily(std::string_view family) {
  if (!family.starts_with("ep")) return {0, false};
  const bool in_node = family.ends_with(kInNode);
  if (!in_node && !family.ends_with(kCrossNode)) return {0, false};
  const std::string_view digits =
      family.substr(2, family.size() - 2 - (in_node ? kInNode : kCrossNode).size());
  int64_t ep = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), ep);
  if (ec != std::errc() || end != digits.data() + digits.size() || ep < 2) return {0, false};
  return {ep, in_node};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string StepLayoutFamilyOf(const ParallelLayout& layout, int64_t gpus_per_node) {
  if (layout.ep <= 1 || gpus_per_node <= 0) return "";
  auto groups = PlaceGroups(layout, gpus_per_node);
  if (!groups.ok()) return "";
  const GroupPlacement* ep = FindGroup(*groups, GroupKind::kEp);
  if (ep == nullptr) return "";
  return fmt::format("ep{}{}", layout.ep, ep->intra_node() ? kInNode : kCrossNode);
}

std::string StepLayoutFamilyText(std::string_view family) {
  const auto [ep, in_node] = ParseFamily(family);
  if (ep == 0) return std::string(family);
  return fmt::format("EP{} {}", ep, in_node ? "inside one NVLink domain" : "across NVLink domains");
}

std::vector<StepLayoutError> DeriveStepLayoutErrors(const std::vector<StepBandRow>& rows) {
  std::map<std::string, std::vector<double>> errors;
  for (const StepBandRow& r : rows) {
    if (r.split != "fit" || r.layout.empty() || r.measured_s <= 0 || r.predicted_s <= 0) continue;
    errors[r.layout].push_back((r.predicted_s - r.measured_s) / r.measured_s);
  }
  std::vector<StepLayoutError> out;
  for (auto& [family, e] : errors) {
    if (static_cast<int64_t>(e.size()) < kMinLayoutErrorRows) continue;
    out.push_back({family, Median(e), static_cast<int64_t>(e.size())});
  }
  return out;
}

Result<std::vector<StepLayoutError>> ParseStepLayoutErrors(const std::string& text,
                                                           const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("families"));
  if (!list.IsSequence()) {
    return top.ErrorAt("families", "expected a list of {family, median_error, rows}");
  }
  std::vector<StepLayoutError> out;
  for (size_t i = 0; i < list.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(YamlMap m, YamlMap::Of(list[i], file, fmt::format("families[{}]", i)));
    StepLayoutError e;
    STRATA_ASSIGN_OR_RETURN(e.family, m.String("family"));
    if (ParseFamily(e.family).first == 0) {
      return m.ErrorAt("family", fmt::format("unknown family '{}'; expected ep<N>_in_node or "
                                             "ep<N>_cross_node with N >= 2",
                                             e.family));
    }
    if (FindStepLayoutError(out, e.family) != nullptr) {
      return m.ErrorAt("family", fmt::format("'{}' is listed twice", e.family));
    }
    STRATA_ASSIGN_OR_RETURN(e.median_error, m.Number("median_error"));
    if (!(e.median_error > -1)) {
      return m.ErrorAt(
          "median_error",
          fmt::format("expected (predicted - measured) / measured > -1, got {}", e.median_error));
    }
    STRATA_ASSIGN_OR_RETURN(e.rows, m.PositiveInt("rows"));
    if (e.rows < kMinLayoutErrorRows) {
      return m.ErrorAt("rows", fmt::format("expected at least {} fit rows, got {}",
                                           kMinLayoutErrorRows, e.rows));
    }
    STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
    out.push_back(std::move(e));
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return out;
}

Result<std::vector<StepLayoutError>> LoadStepLayoutErrors() {
  const std::string path = DataDir() + "/step_layout_error.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseStepLayoutErrors(text, path);
}

const StepLayoutError* FindStepLayoutError(const std::vector<StepLayoutError>& errors,
                                           std::string_view family) {
  for (const StepLayoutError& e : errors) {
    if (e.family == family) return &e;
  }
  return nullptr;
}

}  // namespace strata

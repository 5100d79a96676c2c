#include "strata/sim/step_error_band.h"

#include <fmt/format.h>

#include <algorithm>

#include "strata/core/file_io.h"
#include "strata/core/sourced_yaml.h"
#include "strata/job/resolved_job.h"

namespace strata {

std::string_view StepFamilyOf(bool moe, bool forced_balance) {
  if (!moe) return kStepFamilies[0];
  return forced_balance ? kStepFamilies[1] : kStepFamilies[2];
}

std::string_view StepFamily(const ResolvedJob& job) {
  const bool forced = job.spec.moe_routing_imbalance_given && job.spec.moe_routing_imbalance <= 1.0;
  return StepFamilyOf(job.model.moe.num_experts > 0, forced);
}

StepErrorBand DeriveStepErrorBand(std::string_view family, const std::vector<StepBandRow>& rows) {
  StepErrorBand band;
  band.family = std::string(family);
  for (const StepBandRow& r : rows) {
    if (r.family != family || r.split != "fit" || r.predicted_s <= 0 || r.measured_s <= 0) {
      continue;
    }
    const double ratio = r.measured_s / r.predicted_s;
    if (band.rows == 0 || ratio < band.low) {
      band.low = ratio;
      band.low_row = r.id;
    }
    if (band.rows == 0 || ratio > band.high) {
      band.high = ratio;
      band.high_row = r.id;
    }
    ++band.rows;
  }
  return band;
}

Result<std::vector<StepErrorBand>> ParseStepErrorBands(const std::string& text,
                                                       const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("bands"));
  if (!list.IsSequence() || list.size() == 0) {
    return top.ErrorAt("bands", "expected a list of {family, low, high, rows, low_row, high_row}");
  }
  std::vector<StepErrorBand> out;
  for (size_t i = 0; i < list.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(YamlMap m, YamlMap::Of(list[i], file, fmt::format("bands[{}]", i)));
    StepErrorBand b;
    STRATA_ASSIGN_OR_RETURN(b.family, m.String("family"));
    if (std::find(std::begin(kStepFamilies), std::end(kStepFamilies), b.family) ==
        std::end(kStepFamilies)) {
      return m.ErrorAt("family", fmt::format("unknown family '{}'; expected dense, "
                                             "moe_forced_balance or moe_natural_routing",
                                             b.family));
    }
    if (FindStepErrorBand(out, b.family) != nullptr) {
      return m.ErrorAt("family", fmt::format("'{}' is listed twice", b.family));
    }
    STRATA_ASSIGN_OR_RETURN(b.low, m.Number("low"));
    STRATA_ASSIGN_OR_RETURN(b.high, m.Number("high"));
    if (!(b.low > 0) || !(b.high >= b.low)) {
      return m.ErrorAt("high", fmt::format("expected 0 < low <= high (measured / predicted), got "
                                           "low {} and high {}",
                                           b.low, b.high));
    }
    STRATA_ASSIGN_OR_RETURN(b.rows, m.PositiveInt("rows"));
    STRATA_ASSIGN_OR_RETURN(b.low_row, m.String("low_row"));
    STRATA_ASSIGN_OR_RETURN(b.high_row, m.String("high_row"));
    STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
    out.push_back(std::move(b));
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return out;
}

Result<std::vector<StepErrorBand>> LoadStepErrorBands() {
  const std::string path = DataDir() + "/step_error_band.yaml";
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseStepErrorBands(text, path);
}

const StepErrorBand* FindStepErrorBand(const std::vector<StepErrorBand>& bands,
                                       std::string_view family) {
  for (const StepErrorBand& b : bands) {
    if (b.family == family) return &b;
  }
  return nullptr;
}

}  // namespace strata

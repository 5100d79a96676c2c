#include "strata/sim/step_error_band.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

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

namespace {

// Widens a range (a band or a model's record: low, high, rows and the rows that set them) to
// hold one row's measured / predicted step; rows without both steps are skipped.
template <typename Range>
void Widen(Range& range, const StepBandRow& r) {
  if (r.predicted_s <= 0 || r.measured_s <= 0) return;
  const double ratio = r.measured_s / r.predicted_s;
  if (range.rows == 0 || ratio < range.low) {
    range.low = ratio;
    range.low_row = r.id;
  }
  if (range.rows == 0 || ratio > range.high) {
    range.high = ratio;
    range.high_row = r.id;
  }
  ++range.rows;
}

// The range fields every entry of the file has: low <= high, rows, the rows that set them.
template <typename Range>
Status ParseRange(YamlMap& m, Range& out) {
  STRATA_ASSIGN_OR_RETURN(out.low, m.Number("low"));
  STRATA_ASSIGN_OR_RETURN(out.high, m.Number("high"));
  if (!(out.low > 0) || !(out.high >= out.low)) {
    return m.ErrorAt("high", fmt::format("expected 0 < low <= high (measured / predicted), got "
                                         "low {} and high {}",
                                         out.low, out.high));
  }
  STRATA_ASSIGN_OR_RETURN(out.rows, m.PositiveInt("rows"));
  STRATA_ASSIGN_OR_RETURN(out.low_row, m.String("low_row"));
  STRATA_ASSIGN_OR_RETURN(out.high_row, m.String("high_row"));
  return m.CheckNoUnknownKeys();
}

}  // namespace

StepErrorBand DeriveStepErrorBand(std::string_view family, const std::vector<StepBandRow>& rows) {
  StepErrorBand band;
  band.family = std::string(family);
  for (const StepBandRow& r : rows) {
    if (r.family == family && r.split == "fit") Widen(band, r);
  }
  return band;
}

std::vector<ModelStepRuns> DeriveModelStepRuns(const std::vector<StepBandRow>& rows) {
  std::map<std::pair<std::string, std::string>, ModelStepRuns> by_pair;
  for (const StepBandRow& r : rows) {
    if (r.model.empty() || r.gpu.empty()) continue;
    ModelStepRuns& runs = by_pair[{r.model, r.gpu}];
    runs.model = r.model;
    runs.gpu = r.gpu;
    Widen(runs, r);
  }
  std::vector<ModelStepRuns> out;
  for (auto& [pair, runs] : by_pair) {
    if (runs.rows > 0) out.push_back(std::move(runs));
  }
  return out;
}

Result<StepErrorData> ParseStepErrorBands(const std::string& text, const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  STRATA_ASSIGN_OR_RETURN(YamlMap top, YamlMap::Of(root, file, ""));
  STRATA_ASSIGN_OR_RETURN(YAML::Node list, top.Node("bands"));
  if (!list.IsSequence() || list.size() == 0) {
    return top.ErrorAt("bands", "expected a list of {family, low, high, rows, low_row, high_row}");
  }
  StepErrorData data;
  std::vector<StepErrorBand>& out = data.bands;
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
    STRATA_RETURN_IF_ERROR(ParseRange(m, b));
    out.push_back(std::move(b));
  }
  STRATA_ASSIGN_OR_RETURN(YAML::Node models, top.Node("model_runs"));
  if (!models.IsSequence()) {
    return top.ErrorAt("model_runs",
                       "expected a list of {model, gpu, low, high, rows, low_row, high_row}");
  }
  for (size_t i = 0; i < models.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(YamlMap m,
                            YamlMap::Of(models[i], file, fmt::format("model_runs[{}]", i)));
    ModelStepRuns runs;
    STRATA_ASSIGN_OR_RETURN(runs.model, m.String("model"));
    STRATA_ASSIGN_OR_RETURN(runs.gpu, m.String("gpu"));
    for (const ModelStepRuns& seen : data.model_runs) {
      if (seen.model == runs.model && seen.gpu == runs.gpu) {
        return m.ErrorAt("gpu", fmt::format("'{}' on '{}' is listed twice", runs.model, runs.gpu));
      }
    }
    STRATA_RETURN_IF_ERROR(ParseRange(m, runs));
    data.model_runs.push_back(std::move(runs));
  }
  STRATA_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return data;
}

Result<StepErrorData> LoadStepErrorBands() {
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

std::vector<ModelStepRuns> FindModelStepRuns(const std::vector<ModelStepRuns>& runs,
                                             std::string_view model, std::string_view gpu) {
  std::vector<ModelStepRuns> same_gpu, other;
  for (const ModelStepRuns& r : runs) {
    if (r.model != model) continue;
    (r.gpu == gpu ? same_gpu : other).push_back(r);
  }
  same_gpu.insert(same_gpu.end(), other.begin(), other.end());
  return same_gpu;
}

}  // namespace strata

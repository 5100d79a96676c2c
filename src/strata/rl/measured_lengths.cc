#include "strata/rl/measured_lengths.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/core/strings.h"
#include "strata/rl/response_lengths.h"

namespace strata {
namespace {

// The rows whose figure is a length the job states: priced again they would echo their input.
bool IsLengthRow(std::string_view key) {
  return key == "response_length/mean" || key == "response_length/max" ||
         key == "response length (mean)";
}

// One mean of the log taken into the job: false (with `refusal` set) when it cannot stand there.
bool TakeMean(std::string_view what, std::optional<double> measured, double cap, double& field,
              std::vector<std::string>& parts, bool& changed, std::string& refusal) {
  if (!measured) {
    parts.push_back(fmt::format("{} mean: the job's {} tokens (the log prints none)", what,
                                GroupDigits(field)));
    return true;
  }
  if (*measured <= 0) {
    refusal = fmt::format("the log's {} mean is {} tokens: no length to price", what,
                          GroupDigits(*measured, 1));
    return false;
  }
  // A mean above its cap cannot come from samples that never exceed it: the run's cap is not
  // the one the job states. A mean at the cap is every sample clipped there (the capped
  // exponential's rate 0).
  if (cap > 0 && *measured > cap) {
    refusal = fmt::format(
        "the log's {} mean, {} tokens, is above the job's {} cap of {} tokens: the run's cap "
        "is not the job's",
        what, GroupDigits(*measured, 1), what, GroupDigits(cap));
    return false;
  }
  if (field > 0 && std::fabs(*measured / field - 1) <= kSameLengthTolerance) {
    parts.push_back(fmt::format("{} mean {} tokens, the job's own", what, GroupDigits(*measured)));
    return true;
  }
  parts.push_back(fmt::format("{} mean {} tokens where the job assumes {}", what,
                              GroupDigits(*measured), GroupDigits(field)));
  field = *measured;
  changed = true;
  return true;
}

}  // namespace

LengthsRepricing RepriceAtMeasuredLengths(const Workspace& workspace, const RlSpec& spec,
                                          const MeasuredLengths& measured) {
  LengthsRepricing out;
  if (!measured.prompt_mean && !measured.response_mean) {
    out.note = "the log prints no prompt or response length: the job's assumed lengths stand";
    return out;
  }
  RlSpec at = spec;
  std::vector<std::string> parts;
  bool changed = false;
  std::string refusal;
  if (!TakeMean("response", measured.response_mean, spec.lengths.response_max,
                at.lengths.response_mean, parts, changed, refusal) ||
      !TakeMean("prompt", measured.prompt_mean, spec.lengths.prompt_max, at.lengths.prompt_mean,
                parts, changed, refusal)) {
    out.note = "not priced at the log's lengths: " + refusal;
    return out;
  }
  if (!changed) {
    out.note = fmt::format(
        "the mean lengths the log prints are the job's (within {:.0f}%): the prediction is "
        "already at them",
        100 * kSameLengthTolerance);
    return out;
  }
  const ResponseDistributionOrError shaped = MakeResponseDistribution(
      at.lengths.response_shape, at.lengths.response_mean, at.lengths.response_max);
  if (!shaped.distribution) {
    parts.push_back(fmt::format(
        "the job's {} responses cannot have that mean under the cap ({}): capped_exponential "
        "instead",
        ResponseShapeName(at.lengths.response_shape), shaped.error));
    at.lengths.response_shape = ResponseShape::kCappedExponential;
  }
  parts.push_back(
      fmt::format("the caps ({} prompt, {} response tokens) and the {} shape are the "
                  "job's",
                  GroupDigits(at.lengths.prompt_max), GroupDigits(at.lengths.response_max),
                  ResponseShapeName(at.lengths.response_shape)));
  Result<RlEvaluation> evaluated = EvaluateRl(workspace, at);
  if (!evaluated.ok()) {
    out.note = "not priced at the log's lengths: " + evaluated.error().message;
    return out;
  }
  if (!evaluated->configured.valid) {
    out.note =
        "not priced at the log's lengths: the job at those lengths cannot run as "
        "configured (" +
        evaluated->configured.reason + ")";
    return out;
  }
  out.evaluation = std::move(*evaluated);
  out.note = fmt::format("{}", fmt::join(parts, "; "));
  return out;
}

void AddMeasuredLengthsColumn(std::vector<VerlPhaseRow>& rows,
                              const std::vector<VerlPhaseRow>& at) {
  for (VerlPhaseRow& r : rows) {
    if (IsLengthRow(r.key)) continue;
    for (const VerlPhaseRow& a : at) {
      if (a.key != r.key) continue;
      r.predicted_at_measured_lengths = a.predicted;
      r.error_at_measured_lengths = a.error;
      break;
    }
  }
}

VerlComparison CompareVerlLogAtMeasuredLengths(const Workspace& workspace, const RlEvaluation& e,
                                               const VerlLog& log,
                                               std::optional<VerlVersion> version_flag) {
  VerlComparison c = CompareVerlLog(e, log, version_flag);
  const MeasuredLengths measured{.prompt_mean = c.prompt_mean_tokens,
                                 .response_mean = c.response_mean_tokens};
  LengthsRepricing repriced = RepriceAtMeasuredLengths(workspace, e.spec, measured);
  c.measured_lengths_note = std::move(repriced.note);
  if (repriced.evaluation) {
    AddMeasuredLengthsColumn(c.rows, CompareVerlLog(*repriced.evaluation, log, version_flag).rows);
  }
  return c;
}

OpenRlhfComparison CompareOpenRlhfLogAtMeasuredLengths(const Workspace& workspace,
                                                       const RlEvaluation& e,
                                                       const OpenRlhfLog& log) {
  OpenRlhfComparison c = CompareOpenRlhfLog(e, log);
  // OpenRLHF prints no prompt length; its response mean is the comparison's row of it.
  MeasuredLengths measured;
  for (const VerlPhaseRow& r : c.rows) {
    if (r.key == "response length (mean)") measured.response_mean = r.measured;
  }
  LengthsRepricing repriced = RepriceAtMeasuredLengths(workspace, e.spec, measured);
  c.measured_lengths_note = std::move(repriced.note);
  if (repriced.evaluation) {
    AddMeasuredLengthsColumn(c.rows, CompareOpenRlhfLog(*repriced.evaluation, log).rows);
  }
  return c;
}

}  // namespace strata

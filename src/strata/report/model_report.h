// Rendering of `strata model`: parameters by module kind, totals, active parameters, a
// per-layer table and FLOPs per token, as text (with --explain derivations) or JSON.
#ifndef STRATA_REPORT_MODEL_REPORT_H_
#define STRATA_REPORT_MODEL_REPORT_H_

#include <optional>
#include <string>

#include "strata/core/json_output.h"
#include "strata/model/flop_conventions.h"
#include "strata/model/model_config.h"
#include "strata/model/param_count.h"

namespace strata {

struct ModelReport {
  ModelConfig config;
  ParamBreakdown params;
  double seq_tokens = 0;  // the attention length FLOPs are given at
  ForwardFlops forward;   // causal
  std::vector<ConventionFlops> conventions;
};

ModelReport BuildModelReport(const ModelConfig& config, double seq_tokens,
                             std::optional<int64_t> nominal_active_params);

std::string RenderModelText(const ModelReport& report, bool explain);
Json ModelJson(const ModelReport& report);

}  // namespace strata

#endif  // STRATA_REPORT_MODEL_REPORT_H_

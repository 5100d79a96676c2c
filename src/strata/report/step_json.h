// The JSON form of a step prediction (strata step --json), schema_version from core.
#ifndef STRATA_REPORT_STEP_JSON_H_
#define STRATA_REPORT_STEP_JSON_H_

#include "strata/core/json_output.h"
#include "strata/eval/evaluation.h"
#include "strata/sim/step_job.h"
#include "strata/sim/step_model.h"

namespace strata {

/// Times in seconds (fields end in _s), shares as fractions of the step (0..1).
Json StepToJson(const StepSetup& setup, const StepResult& result);

/// The same with `assumption_effects`: each unstated assumption and the step under its
/// alternatives (`assumption`, `alternative`, `set`, `step_s`, `delta_s`).
Json StepToJson(const Evaluation& e);

}  // namespace strata

#endif  // STRATA_REPORT_STEP_JSON_H_

// `strata profile --job`'s comparison (text and the JSON `comparison` object) and the note a
// calibrated `strata step` prints about its calibration.
#ifndef STRATA_REPORT_TRACE_COMPARISON_REPORT_H_
#define STRATA_REPORT_TRACE_COMPARISON_REPORT_H_

#include <string>

#include "strata/calibrate/calibration.h"
#include "strata/calibrate/trace_comparison.h"
#include "strata/core/json_output.h"

namespace strata::calibrate {

/// {"job_file", "traces", "measured_step_s", "predicted_step_s", "step_ratio", "components":
/// [{"component", "measured_s", "predicted_s", "ratio", ...}], "unmapped", "slowest_rank",
/// "warnings"}; ratios are null where either side is 0.
Json ComparisonJson(const TraceComparison& c);

/// The component table (measured, predicted, ratio), the mapping, the slowest rank.
std::string ComparisonText(const TraceComparison& c);

/// The lines a calibrated evaluation prints: from what file and traces, what was scaled, what
/// does not carry over.
std::string CalibrationText(const AppliedCalibration& a);
Json CalibrationNoteJson(const AppliedCalibration& a);

}  // namespace strata::calibrate

#endif  // STRATA_REPORT_TRACE_COMPARISON_REPORT_H_

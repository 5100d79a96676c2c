// The text of `strata step`: the job's header, the predicted step and its parts, one micro batch
// by kind of kernel and, with --explain, every formula with its numbers and a timeline.
#ifndef STRATA_REPORT_STEP_TEXT_H_
#define STRATA_REPORT_STEP_TEXT_H_

#include <string>

#include "strata/eval/evaluation.h"

namespace strata {

/// `e` evaluated at least to EvalDepth::kStep. `reference`: the built-in reference job, whose
/// course-measured step time is printed beside the prediction.
std::string RenderStepText(const Evaluation& e, bool explain, bool reference);

}  // namespace strata

#endif  // STRATA_REPORT_STEP_TEXT_H_

// The step model's arithmetic written out with the job's numbers substituted (--explain), and a
// text timeline of one micro batch on the most loaded rank. Kept apart from step_model.cc so the
// planner's hot path never formats text: this re-derives the strings from a finished result.
#ifndef STRATA_REPORT_STEP_EXPLAIN_H_
#define STRATA_REPORT_STEP_EXPLAIN_H_

#include <string>
#include <vector>

#include "strata/sim/step_model.h"
#include "strata/sim/step_tables.h"

namespace strata {

struct StepFormula {
  std::string name;     // "dense GEMMs (forward, one micro batch)"
  std::string formula;  // "= 2.41e12 FLOP / (148 TFLOP/s x 0.762) = 21.4 ms"
};

std::vector<StepFormula> ExplainStep(const StepTables& tables, const StepLayout& layout,
                                     const StepResult& result);

/// One micro batch on the most loaded rank, as lines of text: each phase with its start and
/// end time and a bar to scale.
std::vector<std::string> MicroBatchTimeline(const StepLayout& layout, const StepResult& result);

}  // namespace strata

#endif  // STRATA_REPORT_STEP_EXPLAIN_H_

// What each implementation assumption of a step prediction is worth: the step evaluated again
// with the assumption replaced by its alternatives (another Gated DeltaNet kernel, balanced
// routing, samples of one length), so a user sees which unknown moves the answer and by how much.
#ifndef STRATA_EVAL_ASSUMPTION_EFFECTS_H_
#define STRATA_EVAL_ASSUMPTION_EFFECTS_H_

#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/eval/workspace.h"
#include "strata/job/resolved_job.h"
#include "strata/sim/step_job.h"
#include "strata/sim/step_model.h"

namespace strata {

struct AssumptionEffect {
  std::string assumption;   // what the prediction assumed, in words
  std::string alternative;  // what else the stack may run, in words
  std::string set;          // the --set that states the alternative ("" when none can)
  Seconds step;             // the predicted step with the alternative
  Seconds delta;            // step - the prediction
};

/// The assumptions `job`'s prediction (`setup`, `result`) rests on that the job did not state,
/// each with the step under its alternatives. Empty when the job states them all.
Result<std::vector<AssumptionEffect>> AssumptionEffects(const Workspace& workspace,
                                                        const ResolvedJob& job,
                                                        const StepSetup& setup,
                                                        const StepResult& result);

}  // namespace strata

#endif  // STRATA_EVAL_ASSUMPTION_EFFECTS_H_

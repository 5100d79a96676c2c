// The text and JSON of `strata rl`: the RL job's header, the rollout's KV cache, memory per GPU
// in each phase, where the step's time goes, colocated against every split, and --explain.
#ifndef STRATA_REPORT_RL_REPORT_H_
#define STRATA_REPORT_RL_REPORT_H_

#include <string>

#include "strata/rl/rl_step.h"

namespace strata {

std::string RenderRlText(const RlEvaluation& e, bool explain);
std::string RenderRlJson(const RlEvaluation& e);

}  // namespace strata

#endif  // STRATA_REPORT_RL_REPORT_H_

// The text and JSON of `strata rl`: the RL job's header, the rollout's KV cache, memory per GPU
// in each phase, where the step's time goes, colocated against every split, and --explain; and
// verl's measured phases beside them (--log).
#ifndef STRATA_REPORT_RL_REPORT_H_
#define STRATA_REPORT_RL_REPORT_H_

#include <string>

#include "strata/rl/rl_step.h"
#include "strata/rl/verl_log.h"

namespace strata {

std::string RenderRlText(const RlEvaluation& e, bool explain);
std::string RenderRlJson(const RlEvaluation& e);

/// `strata rl --log`: the RL job's header, then verl's measured phases beside the prediction.
std::string RenderVerlLogText(const RlEvaluation& e, const VerlLog& log, const VerlComparison& c,
                              const std::string& log_path);
std::string RenderVerlLogJson(const RlEvaluation& e, const VerlLog& log, const VerlComparison& c,
                              const std::string& log_path);

}  // namespace strata

#endif  // STRATA_REPORT_RL_REPORT_H_

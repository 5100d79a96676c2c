// The text and JSON of `strata rl`: the RL job's header, the rollout's KV cache, memory per GPU
// in each phase, where the step's time goes, colocated against every split, and --explain; and
// verl's or OpenRLHF's measured phases beside them (--log).
#ifndef STRATA_REPORT_RL_REPORT_H_
#define STRATA_REPORT_RL_REPORT_H_

#include <string>

#include "strata/rl/openrlhf_log.h"
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

/// `strata rl --log` on OpenRLHF's console log: its status dicts' timers beside the prediction.
std::string RenderOpenRlhfLogText(const RlEvaluation& e, const OpenRlhfLog& log,
                                  const OpenRlhfComparison& c, const std::string& log_path);
std::string RenderOpenRlhfLogJson(const RlEvaluation& e, const OpenRlhfLog& log,
                                  const OpenRlhfComparison& c, const std::string& log_path);

}  // namespace strata

#endif  // STRATA_REPORT_RL_REPORT_H_

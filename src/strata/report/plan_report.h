// The planner's answer as text and JSON: the search counts, the top layouts, the job's own
// layout, and why the winner beats the runner-up and the job's layout in bandwidth-map terms.
#ifndef STRATA_REPORT_PLAN_REPORT_H_
#define STRATA_REPORT_PLAN_REPORT_H_

#include <string>

#include "strata/core/json_output.h"
#include "strata/plan/planner.h"
#include "strata/sim/step_job.h"

namespace strata {

std::string PlanToText(const StepSetup& setup, const plan::PlanResult& plan, bool explain);
Json PlanToJson(const StepSetup& setup, const plan::PlanResult& plan);

}  // namespace strata

#endif  // STRATA_REPORT_PLAN_REPORT_H_

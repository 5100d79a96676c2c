// The text and JSON of `strata checkpoint`: sizes per rank and in total, write and load times on
// the storage level, the failure rate and the Young/Daly interval, and --explain.
#ifndef STRATA_REPORT_CHECKPOINT_REPORT_H_
#define STRATA_REPORT_CHECKPOINT_REPORT_H_

#include <string>

#include "strata/core/json_output.h"
#include "strata/job/resolved_job.h"
#include "strata/preflight/checkpoint.h"

namespace strata {

std::string RenderCheckpointText(const Job& job, const std::string& cluster,
                                 const preflight::CheckpointPlan& p,
                                 const preflight::FailureRate& rate, bool explain);
Json CheckpointToJson(const Job& job, const preflight::CheckpointPlan& p,
                      const preflight::FailureRate& rate);

}  // namespace strata

#endif  // STRATA_REPORT_CHECKPOINT_REPORT_H_

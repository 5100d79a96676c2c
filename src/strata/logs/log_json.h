// The JSON forms of a log analysis: one step, one anomaly, the summary, the recomputed MFU.
// Fields carry their units in their names; absent values are null, never 0.
#ifndef STRATA_LOGS_LOG_JSON_H_
#define STRATA_LOGS_LOG_JSON_H_

#include <optional>
#include <string>
#include <vector>

#include "strata/core/json_output.h"
#include "strata/logs/log_analyzer.h"
#include "strata/logs/log_mfu.h"

namespace strata {

Json StepToJson(int rank, const StepRecord& step);
Json AnomalyToJson(const Anomaly& anomaly);
Json RankSummaryToJson(const RankSummary& summary);
Json LogMfuToJson(const LogMfu& mfu, const LogJob& job);

/// The whole document `strata logs --json` prints (kind "logs").
Json LogReportToJson(const std::string& file, const LogSummary& summary, const Json& steps,
                     const std::optional<Json>& mfu, const std::string& mfu_note);

}  // namespace strata

#endif  // STRATA_LOGS_LOG_JSON_H_

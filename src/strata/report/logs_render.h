// How `strata logs` renders its results as text and CSV (the JSON lives in logs/log_json.h).
#ifndef STRATA_REPORT_LOGS_RENDER_H_
#define STRATA_REPORT_LOGS_RENDER_H_

#include <optional>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/logs/log_analyzer.h"
#include "strata/logs/log_mfu.h"

namespace strata {

struct KeptStep {
  int rank = -1;
  StepRecord step;
};

/// Tokens/s per GPU of one step: printed by the log, or recomputed with the job.
std::optional<double> StepTokensPerGpu(const StepRecord& step, const std::optional<LogJob>& job);

std::string CsvHeader();
std::string CsvRow(int rank, const StepRecord& step, const std::optional<LogJob>& job);

/// "line 123, step 30: loss_spike: loss 4.87 vs ..." (with "rank 3, " when known).
std::string FormatAnomaly(const Anomaly& anomaly);

struct LogsText {
  std::string path;
  const LogSummary* summary = nullptr;
  std::vector<KeptStep> first_rows, last_rows;
  int64_t rows_total = 0;
  const std::optional<LogJob>* job = nullptr;
  const LogMfu* mfu = nullptr;  // null when not recomputed
  std::string mfu_note;         // why not, when not
  std::string implied_peak;     // the peak the framework's own MFU divides by, when it tells
  bool explain = false;
  bool ends_mid_line = false;
  int64_t long_lines = 0;
};
std::string RenderLogsText(const LogsText& in);

}  // namespace strata

#endif  // STRATA_REPORT_LOGS_RENDER_H_

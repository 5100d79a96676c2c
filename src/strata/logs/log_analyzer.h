// Streams a training log line by line: splits it by rank, merges the lines that report one
// step, feeds each step to the anomaly checks and keeps a run summary. Memory does not grow
// with the log: a bounded window per rank, never the steps themselves (callers that want the
// per-step table keep what on_step hands them).
#ifndef STRATA_LOGS_LOG_ANALYZER_H_
#define STRATA_LOGS_LOG_ANALYZER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/logs/anomaly.h"
#include "strata/logs/log_line_parser.h"
#include "strata/logs/log_scan.h"
#include "strata/logs/rank_state.h"
#include "strata/logs/step_record.h"
#include "strata/logs/titan_header.h"
#include "strata/logs/wrapped_record.h"

namespace strata {

/// Where the log stops, for "the last line before a hang".
struct LogTail {
  int64_t lines = 0;           // lines read
  int64_t last_line = 0;       // the last non-empty line
  std::string last_text;       // its text (capped)
  int64_t last_step_line = 0;  // the last line that reported a step (any rank)
  int64_t error_line = 0;      // the last error line after that step; 0 if none
  std::string error_text;
  bool finished = false;  // the run said it finished
};

/// Anomalies kept in the summary (on_anomaly sees every one): memory stays bounded on a log
/// that goes wrong millions of times.
inline constexpr size_t kMaxKeptAnomalies = 10000;

struct LogSummary {
  int64_t lines = 0;
  int64_t recognised_lines = 0;    // lines that gave a step, a memory report, a skip or the end
  int64_t duplicate_lines = 0;     // the same step printed again (several ranks, no prefix)
  std::vector<LogFormat> formats;  // in the order first seen
  std::vector<RankSummary> ranks;  // by rank; -1 (no prefix) first
  std::vector<Anomaly> anomalies;  // in log order, the first kMaxKeptAnomalies
  int64_t anomalies_total = 0;     // including those not kept
  LogTail tail;
  TitanHeader titan;  // what torchtitan printed before its first step
};

class LogAnalyzer {
 public:
  struct Callbacks {
    std::function<void(int rank, const StepRecord&)> on_step;  // after merging and checks
    std::function<void(const Anomaly&)> on_anomaly;
  };
  explicit LogAnalyzer(Callbacks callbacks = {}, AnomalyThresholds thresholds = {});

  /// One physical line, without its '\n'.
  void FeedLine(std::string_view line);
  /// The end of the log: flushes the last step of each rank and runs the end-of-log checks.
  void Finish();
  /// For --follow: no new line for `idle_s` seconds of wall time. Flags a hang once when that
  /// exceeds the stall factor times the median step (and `min_idle_s`).
  void CheckIdle(double idle_s, double min_idle_s);

  const LogSummary& Summary() const { return summary_; }

 private:
  void Emit(Anomaly anomaly);
  RankState& Rank(int rank);
  /// Reads one line (the launcher's prefix stripped into `prefixed`); `text` is the whole line.
  void ReadLine(std::string_view text, const PrefixedLine& prefixed, int64_t line);
  /// Reads the record held for its wrapped pieces, if any.
  void FlushRecord();
  /// Reads the records the joiner gave back, in order.
  void ReadRecords();

  Callbacks callbacks_;
  AnomalyThresholds thresholds_;
  std::map<int, RankState> ranks_;
  std::vector<ParsedLine> parsed_;  // reused for every line
  std::string ansi_buffer_;
  // A verl metrics line or an OpenRLHF status dict is held until the line that shows it over, as
  // a terminal or a paste wraps it (wrapped_record.h).
  WrappedRecordJoiner joiner_;
  std::vector<WrappedRecord> records_;  // reused for every line
  LogSummary summary_;
  bool idle_flagged_ = false;
  bool finished_ = false;
};

}  // namespace strata

#endif  // STRATA_LOGS_LOG_ANALYZER_H_

// The report's picture of a training log: loss, step time and throughput per step, with the
// anomalies marked at their steps. A log of millions of steps draws a bounded number of points:
// LogSeries keeps at most kMaxLogPoints buckets, each the mean of the steps it covers, halving
// its resolution (merging neighbours) whenever it fills, so memory does not grow with the log.
#ifndef STRATA_REPORT_LOG_FIGURE_H_
#define STRATA_REPORT_LOG_FIGURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/logs/anomaly.h"
#include "strata/logs/step_record.h"
#include "strata/report/html_report.h"

namespace strata {

inline constexpr size_t kMaxLogPoints = 512;

/// One drawn point: the mean over `steps` consecutive steps of one rank's log.
struct LogPoint {
  int64_t first_step = 0;
  int64_t last_step = 0;
  int64_t steps = 0;
  double loss_sum = 0;
  int64_t loss_n = 0;
  double step_time_sum = 0;
  int64_t step_time_n = 0;
  double throughput_sum = 0;  // tokens/s per GPU as printed, else samples/s
  int64_t throughput_n = 0;
};

class LogSeries {
 public:
  /// The steps of one rank, in log order.
  void Add(const StepRecord& step);
  const std::vector<LogPoint>& points() const { return points_; }
  int64_t steps() const { return steps_; }
  /// "tokens/s per GPU" or "samples/s", as the log printed its rate.
  const std::string& throughput_unit() const { return throughput_unit_; }

 private:
  void Halve();
  std::vector<LogPoint> points_;
  int64_t per_point_ = 1;  // steps a bucket covers
  int64_t steps_ = 0;
  std::string throughput_unit_;
};

/// Three panels (loss, step time, throughput) against the step, anomalies as marks at their
/// steps (at most 200 drawn; the table lists how many there were).
ReportFigure LogFigure(const std::string& file, const LogSeries& series,
                       const std::vector<Anomaly>& anomalies, int64_t anomalies_total);

/// Reads the log at `path` (streaming, as `strata logs` does) and draws the steps of its first
/// rank. Fails naming the file when it cannot be read or holds no step strata recognises.
Result<ReportFigure> ReadLogFigure(const std::string& path);

}  // namespace strata

#endif  // STRATA_REPORT_LOG_FIGURE_H_

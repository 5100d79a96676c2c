// The analysis of one rank's stream of step records: merges the lines of one step, runs the
// anomaly checks against rolling windows, and keeps the run summary (bounded memory).
#ifndef STRATA_LOGS_RANK_STATE_H_
#define STRATA_LOGS_RANK_STATE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "strata/logs/anomaly.h"
#include "strata/logs/log_line_parser.h"
#include "strata/logs/rolling_median.h"
#include "strata/logs/step_record.h"

namespace strata {

/// A mean weighted by steps (Megatron's values are averages over the logging interval).
struct WeightedMean {
  double sum = 0;
  double weight = 0;
  void Add(double value, double w) {
    sum += value * w;
    weight += w;
  }
  std::optional<double> Mean() const {
    if (weight <= 0) return std::nullopt;
    return sum / weight;
  }
};

struct RankSummary {
  int rank = -1;
  LogFormat format = LogFormat::kUnknown;
  int64_t records = 0;
  int64_t first_step = 0;
  int64_t last_step = 0;
  int64_t first_line = 0;
  int64_t last_line = 0;
  std::optional<int64_t> total_steps;
  int64_t steps_advanced = 0;  // steps between the first and the last record, restarts excluded
  int64_t restarts = 0;
  int64_t steps_redone = 0;
  double stall_lost_s = 0;
  double restart_lost_s = 0;
  std::optional<double> first_clock_s, last_clock_s;  // timestamps or elapsed time
  std::optional<double> last_loss;
  /// Megatron's consumed samples at the first and the last record that printed them, with
  /// their steps: the samples between the two records, whatever the logging interval.
  std::optional<double> first_consumed_samples, last_consumed_samples;
  int64_t first_consumed_step = 0, last_consumed_step = 0;
  /// An RL log's sample lengths (tokens): the mean over its records, the largest maxima.
  WeightedMean sample_mean_tokens;
  double sample_max_tokens = 0;
  double response_max_tokens = 0;
  /// Records with a loss or grad norm that came before the rolling window had enough values to
  /// judge a spike, and the last step among them (0 when none).
  int64_t spike_unjudged_records = 0;
  int64_t spike_unjudged_last_step = 0;
  int64_t spike_window = 0;  // the earlier values a spike is judged against (min_window)
  /// Records that gave a loss, a grad norm, a memory figure (nan and inf included): a check
  /// with none to look at was not made, whatever the log's length.
  int64_t loss_records = 0;
  int64_t grad_norm_records = 0;
  int64_t memory_records = 0;
  /// Records the log printed no step for and no progress bar numbered (HF Trainer without its
  /// tqdm bars): numbered 1, 2, 3 by strata, so their "steps" are record numbers.
  int64_t numbered_records = 0;
  /// Records whose step time strata derived from a running average and the clock
  /// (interval_time.h), not printed as that step's own.
  int64_t interval_step_times = 0;
  /// Records that gave a step time (verl's timing_s/update_actor), warm-up included, and the
  /// last warm-up step: a log whose timed records all fall in the warm-up has step times but
  /// no steady one.
  int64_t step_time_records = 0;
  int64_t warmup_steps = 0;
  double max_memory_gib = 0;
  /// The device's memory (GiB) the records' memory shares imply (StepRecord::device_gib_min),
  /// the range all of them allow; empty when the log prints no share.
  std::optional<double> device_gib_min, device_gib_max;
  // Steady state: warm-up steps, stalls and throughput drops excluded; weighted by steps.
  WeightedMean step_time_s, printed_tflops_per_gpu, printed_tokens_per_s_per_gpu, printed_mfu,
      global_batch, tokens, samples_per_s;
  /// RL iterations (verl's timing_s/step), when the log times them apart from the step.
  WeightedMean rl_iteration_s;
  /// RL iterations that validated or saved a checkpoint inside timing_s/step (verl <= 0.5.x):
  /// not judged, not steady; their count and that time.
  int64_t validation_records = 0;
  double validation_s = 0;
  /// Every record's own step time (the RL iteration where the log gives one) times the steps it
  /// covers, warm-up, stalls and slow steps included, over the steps from the first record to
  /// the last: the wall time of a log without a clock, the whole log and not its steady part.
  double timed_wall_s = 0;
  int64_t timed_steps = 0;
  /// Time lost to steps slower than the steady median by more than the drop threshold: each
  /// one's excess over that median, times the steps it covers.
  double drop_lost_s = 0;
  /// The slowdown the log is in at its last record (empty when it is not in one): its first
  /// step and line, the records and the step and wall times since, weighted by steps.
  int64_t slow_since_step = 0;
  int64_t slow_since_line = 0;
  int64_t slow_records = 0;
  WeightedMean slow_wall_s, slow_step_time_s;
  /// Records a slowdown must last to the end of the log to be taken as the run's present rate
  /// (the thresholds' min_window): one slow last step is no new rate.
  int64_t lasting_min_records = 3;

  /// Whether the log ends in a slowdown that lasted lasting_min_records records or more.
  bool EndsSlow() const { return slow_records > 0 && slow_records >= lasting_min_records; }
  /// The run's present wall time per step: the slowdown's when the log ends in a lasting one,
  /// else the steady step's.
  std::optional<double> CurrentSecondsPerStep() const;

  /// How long one step of the run takes on the wall: the RL iteration when the log gives one
  /// (the step time is then the trainer's update alone), else the step time.
  std::optional<double> WallSecondsPerStep() const;

  /// Wall time covered by the log: the clock span when the log has one, else the records' own
  /// step times (steps without one at the steady step time).
  std::optional<double> WallSeconds() const;
  /// Time to finish at the present rate (CurrentSecondsPerStep), when the total is known.
  std::optional<double> EtaSeconds() const;
};

class RankState {
 public:
  using StepFn = std::function<void(int rank, const StepRecord&)>;
  RankState(int rank, const AnomalyThresholds& thresholds);

  /// A parsed line of this rank (kStep, kMemory, kSkip). Anomalies are appended to `out`.
  /// Returns true when the line only repeated the current step (several ranks, no prefix).
  bool Add(const ParsedLine& parsed, int64_t line, std::vector<Anomaly>& out,
           const StepFn& on_step);
  /// Checks and emits the step still waiting for lines that might complete it.
  void Flush(std::vector<Anomaly>& out, const StepFn& on_step);
  /// The end of the log: the first steps' times, when too few to judge each other, count as
  /// steady (after Flush).
  void End();

  const RankSummary& summary() const { return summary_; }
  /// The median wall time of a step over the recent window (an RL log's whole iteration, where it
  /// gives one: the time between its lines), NaN when unknown.
  double MedianStepWallTime() { return wall_time_.Median(); }
  int64_t last_step_line() const { return last_ ? last_->line : 0; }
  int64_t last_step() const { return last_ ? last_->step : 0; }

 private:
  void Check(StepRecord& r, std::vector<Anomaly>& out);
  void CheckTiming(const StepRecord& r, int64_t advanced, std::vector<Anomaly>& out, bool& steady,
                   bool& early);
  void AddSteady(const StepRecord& r, double weight);
  void JudgeEarly(std::vector<Anomaly>& out);
  void CheckValues(const StepRecord& r, std::vector<Anomaly>& out);
  Anomaly Make(AnomalyKind kind, const StepRecord& r, std::string message, double lost_s = 0) const;

  int rank_;
  AnomalyThresholds t_;
  RankSummary summary_;
  std::optional<StepRecord> pending_;
  bool pending_numbered_ = false;  // pending_'s step was made up (the record printed none)
  /// Two records without a step came with no bar between them: stdout (the records) was
  /// buffered apart from stderr (the bars), so a bar no longer follows its record. From then on
  /// bars number nothing.
  bool bars_out_of_step_ = false;
  std::optional<StepRecord> last_;
  std::optional<double> last_clock_;
  int64_t memory_step_ = -1;  // a memory report waiting for its step
  double memory_gib_ = 0;
  // wall_time_: each step's wall time as the log gives it, the RL iteration (verl's timing_s/step)
  // where there is one, else the step time: what stalls, drops, restarts and silences are judged
  // on, since an RL iteration's stall lies mostly outside the update.
  RollingMedian wall_time_, gap_per_step_, loss_, grad_norm_, printed_rate_;
  /// The first steps judged after warm-up, before the window held min_window times to judge
  /// them by: kept aside (not yet in the steady means) until it does, then judged against the
  /// median of all of them, so a stall among them is neither missed nor made the baseline.
  struct Early {
    StepRecord record;
    double weight = 1;
  };
  std::vector<Early> early_;
  std::optional<double> memory_baseline_;
  int64_t memory_baseline_step_ = 0;
  bool in_drop_ = false;
  bool overflow_seen_ = false;
};

}  // namespace strata

#endif  // STRATA_LOGS_RANK_STATE_H_

// verl's console metrics (`step:N - timing_s/gen:541.2 - ...`) read per phase, and put beside
// what `strata rl` predicts for the RL job that ran. Which phases `timing_s/gen` covers depends
// on verl's version: up to 0.7.0 it includes the weight sync; from 0.7.1 the sync is
// `timing_s/update_weights`. Formulas: docs/rl.md ("Reading verl's log").
#ifndef STRATA_RL_VERL_LOG_H_
#define STRATA_RL_VERL_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/rl/rl_job.h"
#include "strata/rl/rl_step.h"

namespace strata {

/// The metrics of one training step that the comparison reads; nullopt when the line lacks one.
struct VerlStepMetrics {
  int64_t step = 0;
  int64_t line = 0;                        // 1-based line where the step's metrics begin
  std::optional<double> gen_s;             // timing_s/gen
  std::optional<double> update_weights_s;  // timing_s/update_weights (verl >= 0.7.1)
  std::optional<double> old_log_prob_s;    // timing_s/old_log_prob
  std::optional<double> ref_s;             // timing_s/ref
  std::optional<double> update_actor_s;    // timing_s/update_actor
  std::optional<double> values_s;          // timing_s/values (PPO: the critic's forward)
  std::optional<double> update_critic_s;   // timing_s/update_critic (PPO)
  std::optional<double> step_s;            // timing_s/step
  /// timing_s/testing and timing_s/save_checkpoint: the validation and the checkpoint, which
  /// verl up to mid-2025 (v0.5.x) ran inside the step timer (volcengine/verl@f0964b665 and
  /// earlier, ray_trainer.py fit()); from 50368ae29 on they sit outside it.
  std::optional<double> testing_s;
  std::optional<double> save_checkpoint_s;
  /// A step that validated or saved a checkpoint: its timing_s/step (and throughput) may hold
  /// that time, which no RL step model prices.
  bool validated_or_saved() const {
    return testing_s.value_or(0) > 0 || save_checkpoint_s.value_or(0) > 0;
  }
  std::optional<double> throughput_tokens_per_s_per_gpu;  // perf/throughput
  std::optional<double> total_num_tokens;                 // perf/total_num_tokens: the batch's
  std::optional<double> prompt_mean_tokens;               // prompt_length/mean
  std::optional<double> response_mean_tokens;             // response_length/mean
  std::optional<double> response_max_tokens;              // response_length/max
  /// response_length/clip_ratio: the share of samples at max_response_length (verl's
  /// trainer/ppo/metric_utils.py: mean(response_length == max_response_length)).
  std::optional<double> response_clip_ratio;
};

/// verl's release: major.minor.patch (0.7.0 and 0.7.1 time generation differently).
struct VerlVersion {
  int64_t major = 0;
  int64_t minor = 0;
  int64_t patch = 0;
  /// From 0.7.1 the weight sync has its own timer (timing_s/update_weights).
  bool SeparatesSync() const;
  std::string Format() const;  // "0.7.1"
};
/// "0.7.1" (a missing patch is 0: "0.7" is 0.7.0); nullopt for anything else.
std::optional<VerlVersion> ParseVerlVersion(std::string_view text);

struct VerlLog {
  std::vector<VerlStepMetrics> steps;  // training steps, in log order (step:0 is validation)
  std::optional<VerlVersion> version;  // "verl version 0.7.1" / "verl==0.7.1" in the log
  std::vector<std::string> notes;      // lines read only in part, with their line numbers
};

/// Reads verl's console log. Wrapped lines (a metrics line broken mid-field, as when pasted into
/// an issue) are joined back. Errors: no verl metrics line at all (naming the framework whose
/// lines the text holds, when another one's), or no training step (validation lines only).
Result<VerlLog> ParseVerlLog(std::string_view text);

/// How `timing_s/gen` was read.
enum class VerlGenSemantics {
  kIncludesSync,  // verl <= 0.7.0: generation and weight sync in one timer
  kSeparateSync,  // verl >= 0.7.1: timing_s/update_weights holds the sync
};

struct VerlPhaseRow {
  std::string key;                 // verl's metric name
  std::string unit;                // "s", "tokens/s/GPU", "tokens", "fraction"
  std::optional<double> measured;  // mean over the steps that print it
  int64_t measured_steps = 0;
  double predicted = 0;
  std::optional<double> error;  // predicted / measured - 1
  std::string predicted_from;   // which strata quantity
  /// The same quantity with the job priced at the lengths the log measured (measured_lengths.h);
  /// nullopt when it was not priced again, or for the lengths themselves.
  std::optional<double> predicted_at_measured_lengths;
  std::optional<double> error_at_measured_lengths;
};

struct VerlComparison {
  VerlGenSemantics semantics = VerlGenSemantics::kSeparateSync;
  std::string semantics_source;  // "--verl-version 0.7.0", "the log (verl 0.7.1)", ...
  int64_t first_step = 0;
  int64_t last_step = 0;
  int64_t steps = 0;
  std::vector<VerlPhaseRow> rows;
  /// Set when the log's batch is not the job's: why its timers and throughput carry no error.
  std::string batch_mismatch;
  /// Steps that carry timing_s/testing or timing_s/save_checkpoint, left out of the measured
  /// step and throughput (their mean step printed apart); 0 when none.
  int64_t validation_steps = 0;
  std::optional<double> validation_step_mean_s;
  /// The log's prompt_length/mean and response_length/mean, each the mean over the steps that
  /// print it; nullopt where none does.
  std::optional<double> prompt_mean_tokens;
  std::optional<double> response_mean_tokens;
  /// What the measured-lengths column replaced in the job, or why there is no such column.
  std::string measured_lengths_note;
};

/// Samples per step the batches may differ by before the log is no longer the job's run: verl
/// prints prompt and response means rounded, so the samples read back from the tokens are not
/// exact.
inline constexpr double kVerlBatchTolerance = 0.05;

/// The log's phases beside the configured placement's prediction. The version comes from
/// `version_flag` when given, else from the log, else from the keys it prints
/// (timing_s/update_weights only exists from 0.7.1).
/// Compares against the configured placement; the caller checks that it is valid.
VerlComparison CompareVerlLog(const RlEvaluation& e, const VerlLog& log,
                              std::optional<VerlVersion> version_flag);

/// verl's perf/throughput for a predicted step: every token of every sample (prompt and
/// response, verl's total_num_tokens) over the step time and all GPUs of the job.
double PredictedVerlThroughput(const RlSpec& spec, Seconds step, int64_t gpus);

}  // namespace strata

#endif  // STRATA_RL_VERL_LOG_H_

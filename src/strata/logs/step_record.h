// One training step as a log reported it, normalised across frameworks: every field is optional
// because every format drifts (see ../shared/reference/formats/logs-and-node-state.md, section 1).
// Units are in the field names; what the framework computed itself is kept apart from what the
// log merely states, so the analyser can recompute it and say why the two differ.
#ifndef STRATA_LOGS_STEP_RECORD_H_
#define STRATA_LOGS_STEP_RECORD_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace strata {

enum class LogFormat {
  kUnknown,
  kMegatron,         // megatron training_log: "iteration N/ M | consumed samples: ... |"
  kMsSwiftMegatron,  // the same line with ms-swift's "memory(GiB): | elapsed time: |" inserted
  kDict,             // HF Trainer / ms-swift "{'loss': ...}" lines and logging.jsonl
  kDeepSpeed,        // "step=N, skipped=K, lr=[...]" and "global_step=N, ...SamplesPerSec=..."
  kTorchtitan,       // "step: N  loss: ...  memory: ...GiB(..%)  tps: ...  tflops: ...  mfu: ...%"
  kVerl,             // "step:N - key:value - key:value"
  kNemo,             // NeMo 2 "Training epoch E, iteration N/M | ..." and Lightning progress bars
  kOpenRlhf,         // OpenRLHF's PPO trainers: "Global step N: {'policy_loss': ..., ...}"
};
std::string_view LogFormatName(LogFormat format);  // "megatron", "ms-swift-megatron", ...

/// Where a running step time (StepRecord::running_step_time_s) starts counting.
enum class RunningOrigin {
  kNone,
  kStepZero,    // ms-swift v3 train_speed(iter/s) = global_step / elapsed: from step 0
  kResumeStep,  // ms-swift v4 train_speed(s/it) = elapsed / (step - the resume step)
  kSmoothed,    // tqdm's s/it: an exponential average of the recent iterations
};

struct StepRecord {
  LogFormat format = LogFormat::kUnknown;
  int64_t line = 0;  // 1-based line of the (first) line that reported this step
  int64_t step = 0;  // the optimizer step (iteration) counter as printed
  std::optional<int64_t> total_steps;

  std::optional<double> loss;
  std::optional<double> grad_norm;
  std::optional<double> learning_rate;
  std::optional<double> step_time_s;  // one step's wall time (an interval average in Megatron)
  /// A step time averaged over more than this record's interval, never this interval's own:
  /// ms-swift's train_speed (since the start or the resume step) or tqdm's smoothed s/it. The
  /// analyser derives the interval's step time from it and the clock (interval_time.h).
  std::optional<double> running_step_time_s;
  RunningOrigin running_origin = RunningOrigin::kNone;
  /// An RL iteration's wall time (verl's timing_s/step): rollout generation, reward, the
  /// log-prob passes, the update and the weight sync. Never a trainer step: for verl the step
  /// time is the actor's update (timing_s/update_actor), where the trainer's FLOP run.
  std::optional<double> rl_iteration_s;
  /// verl's timing_s/testing + timing_s/save_checkpoint: the validation and the checkpoint,
  /// which verl up to v0.5.x times inside timing_s/step (ray_trainer.py fit() at
  /// volcengine/verl@f0964b665). Such an iteration is no measure of the RL step.
  std::optional<double> validation_s;
  std::optional<double> global_batch;  // samples per step
  std::optional<double> tokens;        // tokens in this step, when the log states it
  /// Input tokens since the run started, all ranks (HF Trainer num_input_tokens_seen): the
  /// difference between two lines over the steps between them is the tokens per step.
  std::optional<double> tokens_seen;
  std::optional<double> samples_per_s;
  /// One sample's tokens, prompt + response, as an RL log prints them (verl's
  /// prompt_length/mean + response_length/mean; the maxima when both are printed).
  std::optional<double> sample_mean_tokens;
  std::optional<double> sample_max_tokens;
  std::optional<double> response_max_tokens;  // verl's response_length/max
  /// Samples consumed since the run started, all ranks (Megatron's "consumed samples").
  std::optional<double> consumed_samples;
  std::optional<double> memory_gib;  // peak reserved (or allocated) per GPU, GiB = 2^30 bytes
  /// The device's memory, GiB, that a framework printing memory as a share of it implies, as
  /// the range its rounding allows (torchtitan's memory: 9.46GiB(64.99%): 14.55 to 14.57 GiB).
  std::optional<double> device_gib_min;
  std::optional<double> device_gib_max;
  std::optional<double> skipped_iterations;  // in the interval (Megatron) or cumulative (DS)
  std::optional<double> nan_iterations;
  std::optional<double> timestamp_s;  // seconds on the log's clock (no time zone)
  std::optional<double> elapsed_s;    // seconds since the run started (ms-swift elapsed_time)

  // What the framework computed itself (the analyser recomputes these from the model).
  std::optional<double> printed_tflops_per_gpu;        // TFLOP/s per GPU, decimal
  std::optional<double> printed_tokens_per_s_per_gpu;  // torchtitan tps, verl perf/throughput
  std::optional<double> printed_mfu;                   // a fraction, 0..1
};

/// What one line of a log says, beyond a step.
enum class LineKind {
  kOther,      // not understood (banners, warnings, progress bars without a step)
  kStep,       // a step record
  kMemory,     // a memory report for the current step (Megatron "[Rank N] ... memory (MB)")
  kWallClock,  // a step time for the step record just before it (DeepSpeed's "time (ms) |")
  kError,      // an error or watchdog line: a crash or a hang follows
  kFinished,   // the run says it finished ("train_runtime", "after training is done")
  kSkip,       // a skipped step (DeepSpeed/apex "OVERFLOW! ... Skipping step")
  kProgress,   // a tqdm bar (step, total, elapsed, s/it): numbers the HF record before it
};

}  // namespace strata

#endif  // STRATA_LOGS_STEP_RECORD_H_

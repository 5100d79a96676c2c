#include "strata/logs/rank_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "strata/logs/interval_time.h"

namespace strata {

namespace {

// Fills the fields `into` lacks from `from`; returns how many it filled.
int Merge(StepRecord& into, const StepRecord& from) {
  int filled = 0;
  auto take = [&](auto& dst, const auto& src) {
    if (!dst && src) {
      dst = src;
      ++filled;
    }
  };
  take(into.total_steps, from.total_steps);
  take(into.loss, from.loss);
  take(into.grad_norm, from.grad_norm);
  take(into.learning_rate, from.learning_rate);
  take(into.step_time_s, from.step_time_s);
  if (!into.running_step_time_s && from.running_step_time_s) {
    into.running_step_time_s = from.running_step_time_s;
    into.running_origin = from.running_origin;
    ++filled;
  }
  take(into.rl_iteration_s, from.rl_iteration_s);
  take(into.global_batch, from.global_batch);
  take(into.tokens, from.tokens);
  take(into.tokens_seen, from.tokens_seen);
  take(into.samples_per_s, from.samples_per_s);
  take(into.memory_gib, from.memory_gib);
  take(into.device_gib_min, from.device_gib_min);
  take(into.device_gib_max, from.device_gib_max);
  take(into.skipped_iterations, from.skipped_iterations);
  take(into.nan_iterations, from.nan_iterations);
  take(into.timestamp_s, from.timestamp_s);
  take(into.elapsed_s, from.elapsed_s);
  take(into.printed_tflops_per_gpu, from.printed_tflops_per_gpu);
  take(into.printed_tokens_per_s_per_gpu, from.printed_tokens_per_s_per_gpu);
  take(into.printed_mfu, from.printed_mfu);
  return filled;
}

std::string Num(double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  if (std::fabs(v) >= 100) return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 1) return fmt::format("{:.3g}", v);
  return fmt::format("{:.3g}", v);
}

}  // namespace

std::optional<double> RankSummary::WallSecondsPerStep() const {
  if (auto t = rl_iteration_s.Mean()) return t;
  return step_time_s.Mean();
}

std::optional<double> RankSummary::CurrentSecondsPerStep() const {
  if (EndsSlow()) return slow_wall_s.Mean();
  return WallSecondsPerStep();
}

std::optional<double> RankSummary::WallSeconds() const {
  if (first_clock_s && last_clock_s && *last_clock_s > *first_clock_s) {
    return *last_clock_s - *first_clock_s;
  }
  // The steps' own times, slow ones included: the steady mean times the step count would leave
  // out every stall and slowdown.
  const int64_t untimed = std::max<int64_t>(steps_advanced - timed_steps, 0);
  auto t = WallSecondsPerStep();
  if (timed_steps > 0) return timed_wall_s + (t ? *t * static_cast<double>(untimed) : 0);
  if (t) return *t * static_cast<double>(steps_advanced);
  return std::nullopt;
}

std::optional<double> RankSummary::EtaSeconds() const {
  auto t = CurrentSecondsPerStep();
  if (!t || !total_steps || *total_steps < last_step) return std::nullopt;
  return *t * static_cast<double>(*total_steps - last_step);
}

RankState::RankState(int rank, const AnomalyThresholds& thresholds) : rank_(rank), t_(thresholds) {
  summary_.rank = rank;
  summary_.lasting_min_records = t_.min_window;
}

Anomaly RankState::Make(AnomalyKind kind, const StepRecord& r, std::string message,
                        double lost_s) const {
  Anomaly a;
  a.kind = kind;
  a.rank = rank_;
  a.line = r.line;
  a.step = r.step;
  a.lost_s = lost_s;
  a.message = std::move(message);
  return a;
}

bool RankState::Add(const ParsedLine& parsed, int64_t line, std::vector<Anomaly>& out,
                    const StepFn& on_step) {
  if (parsed.kind == LineKind::kMemory) {
    const double gib = parsed.record.memory_gib.value_or(0);
    if (pending_ && pending_->step == parsed.record.step) {
      pending_->memory_gib = std::max(pending_->memory_gib.value_or(0), gib);
    } else {
      if (memory_step_ != parsed.record.step) memory_gib_ = 0;
      memory_step_ = parsed.record.step;
      memory_gib_ = std::max(memory_gib_, gib);
    }
    return false;
  }
  if (parsed.kind == LineKind::kWallClock) {
    // DeepSpeed's engine logs it in step() right after the throughput line of the same step
    // (deepspeedai/DeepSpeed@09601bb8 deepspeed/runtime/engine.py:2089, 2148). The pipeline
    // engine prints no throughput line and logs the same timers summed over steps_per_print
    // steps (deepspeed/runtime/pipe/engine.py:1131-1132): a line after any other record, or a
    // second one after the same record (a step without its throughput line), is not read.
    if (pending_ && pending_->format == LogFormat::kDeepSpeed && pending_->samples_per_s &&
        !pending_->step_time_s) {
      pending_->step_time_s = parsed.record.step_time_s;
    }
    return false;
  }
  if (parsed.kind == LineKind::kSkip) {
    StepRecord r;
    r.line = line;
    r.step = pending_ ? pending_->step : (last_ ? last_->step : 0);
    out.push_back(Make(AnomalyKind::kSkippedStep, r,
                       "the loss scaler skipped a step (fp16 overflow): the step did nothing"));
    overflow_seen_ = true;
    return false;
  }
  if (parsed.kind == LineKind::kProgress) {
    // The first bar after a record without a step: tqdm.write redrew it at the record's step.
    // Later bars (the steps up to the next record) say nothing about it.
    const StepRecord& bar = parsed.record;
    if (pending_ && pending_numbered_ && !bars_out_of_step_ &&
        bar.step > (last_ ? last_->step : 0)) {
      pending_->step = bar.step;
      pending_->total_steps = bar.total_steps;
      if (!pending_->elapsed_s) pending_->elapsed_s = bar.elapsed_s;
      if (!pending_->running_step_time_s) {
        pending_->running_step_time_s = bar.running_step_time_s;
        pending_->running_origin = bar.running_origin;
      }
      pending_numbered_ = false;
    }
    return false;
  }
  // The record is copied once, into pending_: a large log passes millions through here.
  int64_t step = parsed.record.step;
  const bool numbered = step < 0;
  if (numbered) {  // HF Trainer prints no step: number its lines (a bar may correct it)
    if (pending_ && pending_numbered_) bars_out_of_step_ = true;
    step = (pending_ ? pending_->step : (last_ ? last_->step : 0)) + 1;
  }
  if (pending_ && pending_->step == step) {
    return Merge(*pending_, parsed.record) == 0;  // Merge reads neither line nor step
  }
  if (!pending_ && last_ && last_->step == step) return true;  // already checked (--follow)
  Flush(out, on_step);
  pending_ = parsed.record;
  pending_->line = line;
  pending_->step = step;
  pending_numbered_ = numbered;
  return false;
}

void RankState::Flush(std::vector<Anomaly>& out, const StepFn& on_step) {
  if (!pending_) return;
  StepRecord& r = *pending_;  // checked in place (Check reads last_, never pending_)
  if (pending_numbered_) ++summary_.numbered_records;
  pending_numbered_ = false;
  if (memory_step_ == r.step) {
    r.memory_gib = std::max(r.memory_gib.value_or(0), memory_gib_);
    memory_step_ = -1;
  }
  Check(r, out);
  if (on_step) on_step(rank_, r);
  pending_.reset();
}

void RankState::Check(StepRecord& r, std::vector<Anomaly>& out) {
  RankSummary& s = summary_;
  if (s.records == 0) {
    s.first_step = r.step;
    s.first_line = r.line;
    s.format = r.format;
  }
  ++s.records;
  s.last_line = r.line;
  if (r.total_steps) s.total_steps = r.total_steps;
  int64_t advanced = 0;
  if (last_) {
    advanced = r.step - last_->step;
    if (advanced < 0) {
      const int64_t redone = last_->step - r.step;
      const double median = wall_time_.Median();
      const double lost = std::isfinite(median) ? median * static_cast<double>(redone) : 0;
      ++s.restarts;
      s.steps_redone += redone;
      s.restart_lost_s += lost;
      out.push_back(Make(
          AnomalyKind::kRestart, r,
          fmt::format("the step counter went back from {} (line {}) to {}: the job restarted "
                      "from a checkpoint; {} steps are done again{}",
                      last_->step, last_->line, r.step, redone,
                      lost > 0 ? fmt::format(" (~{:.0f} s at the median step time)", lost) : "")));
      last_clock_.reset();  // a restart's gap is not a stall
      memory_baseline_.reset();
      in_drop_ = false;
    } else {
      s.steps_advanced += advanced;
    }
  }
  s.last_step = r.step;
  if (!r.step_time_s) {
    // A running average (ms-swift's train_speed, tqdm's s/it) is not this interval's time.
    const bool same_run = last_ && last_->step < r.step;
    r.step_time_s = IntervalStepTime(same_run ? &*last_ : nullptr, r);
    if (r.step_time_s) ++s.interval_step_times;
  }
  bool steady = r.step > t_.warmup_steps;
  s.warmup_steps = t_.warmup_steps;
  if (r.step_time_s) ++s.step_time_records;
  bool early = false;
  CheckTiming(r, std::max<int64_t>(advanced, 0), out, steady, early);
  CheckValues(r, out);
  if (const auto wall = r.rl_iteration_s ? r.rl_iteration_s : r.step_time_s; wall && advanced > 0) {
    s.timed_wall_s += *wall * static_cast<double>(advanced);
    s.timed_steps += advanced;
  }

  const double weight = static_cast<double>(std::max<int64_t>(advanced, 1));
  if (steady && early) {
    early_.push_back({r, weight});
    if (wall_time_.size() >= static_cast<size_t>(t_.min_window)) JudgeEarly(out);
  } else if (steady) {
    AddSteady(r, weight);
  }
  if (r.global_batch) s.global_batch.Add(*r.global_batch, 1);
  if (!r.tokens && r.tokens_seen && last_ && last_->tokens_seen && advanced > 0 &&
      *r.tokens_seen > *last_->tokens_seen) {
    r.tokens = (*r.tokens_seen - *last_->tokens_seen) / static_cast<double>(advanced);
  }
  if (r.tokens) s.tokens.Add(*r.tokens, 1);
  if (r.sample_mean_tokens) s.sample_mean_tokens.Add(*r.sample_mean_tokens, 1);
  if (r.sample_max_tokens)
    s.sample_max_tokens = std::max(s.sample_max_tokens, *r.sample_max_tokens);
  if (r.response_max_tokens) {
    s.response_max_tokens = std::max(s.response_max_tokens, *r.response_max_tokens);
  }
  if (r.consumed_samples && s.restarts == 0) {
    if (!s.first_consumed_samples) {
      s.first_consumed_samples = r.consumed_samples;
      s.first_consumed_step = r.step;
    }
    s.last_consumed_samples = r.consumed_samples;
    s.last_consumed_step = r.step;
  }
  if (r.loss) s.last_loss = r.loss;
  if (r.memory_gib) s.max_memory_gib = std::max(s.max_memory_gib, *r.memory_gib);
  if (r.device_gib_min && r.device_gib_max) {  // every record's range holds the one device
    s.device_gib_min = std::max(s.device_gib_min.value_or(0), *r.device_gib_min);
    s.device_gib_max = std::min(s.device_gib_max.value_or(INFINITY), *r.device_gib_max);
  }
  last_ = r;
}

void RankState::AddSteady(const StepRecord& r, double weight) {
  RankSummary& s = summary_;
  if (r.step_time_s) s.step_time_s.Add(*r.step_time_s, weight);
  if (r.rl_iteration_s) s.rl_iteration_s.Add(*r.rl_iteration_s, weight);
  if (r.printed_tflops_per_gpu) s.printed_tflops_per_gpu.Add(*r.printed_tflops_per_gpu, weight);
  if (r.printed_tokens_per_s_per_gpu) {
    s.printed_tokens_per_s_per_gpu.Add(*r.printed_tokens_per_s_per_gpu, weight);
  }
  if (r.printed_mfu) s.printed_mfu.Add(*r.printed_mfu, weight);
  if (r.samples_per_s) s.samples_per_s.Add(*r.samples_per_s, weight);
}

// The first min_window times after warm-up had nothing to be judged against when they came. Now
// that there are enough, each is judged against the median of all of them (a stall among the
// first few is then the one far above the others), and only those that pass become the baseline
// and count as steady. The warm-up steps themselves stay unjudged: a first step's compilation
// and allocation is no stall.
void RankState::JudgeEarly(std::vector<Anomaly>& out) {
  RollingMedian all;
  for (const Early& e : early_) {
    all.Push(e.record.rl_iteration_s ? *e.record.rl_iteration_s : *e.record.step_time_s);
  }
  const double median = all.Median();
  RollingMedian kept;
  for (const Early& e : early_) {
    const StepRecord& r = e.record;
    const double t = r.rl_iteration_s ? *r.rl_iteration_s : *r.step_time_s;
    if (median > 0 && t > t_.stall_factor * median) {
      const double lost = (t - median) * e.weight;
      summary_.stall_lost_s += lost;
      const char* what = r.rl_iteration_s ? "RL iteration time (timing_s/step)" : "step time";
      out.push_back(
          Make(AnomalyKind::kStall, r,
               fmt::format("{} {} s is {:.1f} x the median {} s of the first {} steps "
                           "after warm-up (threshold {} x)",
                           what, Num(t), t / median, Num(median), early_.size(), t_.stall_factor),
               lost));
      continue;
    }
    kept.Push(t);
    AddSteady(r, e.weight);
  }
  wall_time_ = kept;
  early_.clear();
}

void RankState::End() {
  for (const Early& e : early_) AddSteady(e.record, e.weight);  // too few to judge each other
  early_.clear();
}

void RankState::CheckTiming(const StepRecord& r, int64_t advanced, std::vector<Anomaly>& out,
                            bool& steady, bool& early) {
  RankSummary& s = summary_;
  const std::optional<double> clock = r.timestamp_s ? r.timestamp_s : r.elapsed_s;
  if (clock) {
    if (!s.first_clock_s) s.first_clock_s = clock;
    s.last_clock_s = clock;
  }
  const bool judge = r.step > t_.warmup_steps;
  bool stalled = false;
  // 1. The wall-clock gap between two step lines, per step advanced.
  // A clock that went back is a new process's (a resume that kept the step counter): no gap.
  if (clock && last_clock_ && advanced > 0 && *clock >= *last_clock_) {
    const double gap = *clock - *last_clock_;
    const double per_step = gap / static_cast<double>(advanced);
    double expected = gap_per_step_.size() >= static_cast<size_t>(t_.min_window)
                          ? gap_per_step_.Median()
                          : wall_time_.Median();
    if (judge && std::isfinite(expected) && expected > 0 && per_step > t_.stall_factor * expected) {
      const double lost = gap - expected * static_cast<double>(advanced);
      s.stall_lost_s += lost;
      stalled = true;
      out.push_back(Make(AnomalyKind::kStall, r,
                         fmt::format("{:.0f} s of wall time for {} step{} before this line: "
                                     "{:.1f} x the median {} s per step (threshold {} x)",
                                     gap, advanced, advanced == 1 ? "" : "s", per_step / expected,
                                     Num(expected), t_.stall_factor),
                         lost));
    } else if (judge) {
      gap_per_step_.Push(per_step);
    }
  }
  if (clock) last_clock_ = clock;
  // 2. The framework's own step time (an interval average in Megatron), or an RL log's whole
  // iteration, which holds it and the generation, log-prob passes and weight sync around it.
  bool degraded = false;
  // An RL iteration that validated (or saved a checkpoint) inside its timer is said apart: it is
  // neither a slow step nor part of the steady one.
  if (r.rl_iteration_s && r.validation_s) {
    ++s.validation_records;
    s.validation_s += *r.validation_s;
    steady = false;
    return;
  }
  const std::optional<double> wall = r.rl_iteration_s ? r.rl_iteration_s : r.step_time_s;
  const char* what = r.rl_iteration_s ? "RL iteration time (timing_s/step)" : "step time";
  if (wall && judge) {
    const double median = wall_time_.Median();
    const double t = *wall;
    if (wall_time_.size() >= static_cast<size_t>(t_.min_window) && median > 0) {
      if (!stalled && !clock && t > t_.stall_factor * median) {
        const double lost = (t - median) * static_cast<double>(std::max<int64_t>(advanced, 1));
        s.stall_lost_s += lost;
        stalled = true;
        out.push_back(Make(AnomalyKind::kStall, r,
                           fmt::format("{} {} s is {:.1f} x the median {} s (threshold {} x)", what,
                                       Num(t), t / median, Num(median), t_.stall_factor),
                           lost));
      } else if (!stalled &&
                 t > median / (1 - (in_drop_ ? t_.drop_fraction / 2 : t_.drop_fraction))) {
        // Once in a drop, a step stays in it until it is back within half the threshold: a run
        // that slowed to just past the threshold is one slowdown, not a flicker of drops between
        // which its slow steps would become the steady baseline.
        degraded = true;
        const double steps = static_cast<double>(std::max<int64_t>(advanced, 1));
        s.drop_lost_s += (t - median) * steps;
        if (!in_drop_) {
          out.push_back(Make(AnomalyKind::kThroughputDrop, r,
                             fmt::format("{} {} s vs the median {} s: throughput down "
                                         "{:.0f}% (threshold {:.0f}%)",
                                         what, Num(t), Num(median), 100 * (1 - median / t),
                                         100 * t_.drop_fraction)));
          s.slow_since_step = r.step;
          s.slow_since_line = r.line;
          s.slow_records = 0;
          s.slow_wall_s = {};
          s.slow_step_time_s = {};
        }
        ++s.slow_records;
        s.slow_wall_s.Add(t, steps);
        if (r.step_time_s) s.slow_step_time_s.Add(*r.step_time_s, steps);
      }
    }
    if (!degraded) s.slow_records = 0;  // the slowdown, if any, ended here
    if (!stalled && !degraded) {
      // Without a clock this path alone judges stalls: a time that had too few before it to be
      // judged waits for JudgeEarly.
      early = !clock && wall_time_.size() < static_cast<size_t>(t_.min_window);
      wall_time_.Push(t);
    }
  }
  // 3. A printed rate (TFLOP/s, tokens/s) when the log has no step time.
  const std::optional<double> rate =
      r.printed_tflops_per_gpu ? r.printed_tflops_per_gpu : r.printed_tokens_per_s_per_gpu;
  if (rate && judge && !wall) {
    const double median = printed_rate_.Median();
    if (printed_rate_.size() >= static_cast<size_t>(t_.min_window) && median > 0 &&
        *rate < median * (1 - t_.drop_fraction)) {
      degraded = true;
      if (!in_drop_) {
        out.push_back(Make(AnomalyKind::kThroughputDrop, r,
                           fmt::format("printed throughput {} vs the median {}: down {:.0f}% "
                                       "(threshold {:.0f}%)",
                                       Num(*rate), Num(median), 100 * (1 - *rate / median),
                                       100 * t_.drop_fraction)));
      }
    } else {
      printed_rate_.Push(*rate);
    }
  }
  in_drop_ = degraded;
  if (stalled || degraded || !judge) steady = false;
}

void RankState::CheckValues(const StepRecord& r, std::vector<Anomaly>& out) {
  const bool loss_bad = r.loss && !std::isfinite(*r.loss);
  const bool grad_bad = r.grad_norm && !std::isfinite(*r.grad_norm);
  if (r.loss) ++summary_.loss_records;
  if (r.grad_norm) ++summary_.grad_norm_records;
  if (r.memory_gib) ++summary_.memory_records;
  // A spike needs min_window earlier values to be judged against: say which records had too few.
  const auto window = static_cast<size_t>(t_.min_window);
  if ((r.loss && !loss_bad && loss_.size() < window) ||
      (r.grad_norm && !grad_bad && grad_norm_.size() < window)) {
    ++summary_.spike_unjudged_records;
    summary_.spike_unjudged_last_step = r.step;
    summary_.spike_window = t_.min_window;
  }
  if (loss_bad || grad_bad) {
    std::string what;
    if (loss_bad) what += fmt::format("loss is {}", *r.loss);
    if (grad_bad) what += fmt::format("{}grad norm is {}", loss_bad ? ", " : "", *r.grad_norm);
    out.push_back(Make(AnomalyKind::kNanInf, r, what));
  }
  if (r.loss && !loss_bad) {
    if (loss_.size() >= static_cast<size_t>(t_.min_window)) {
      const double med = loss_.Median();
      const double sigma = 1.4826 * std::max(loss_.Mad(), 1e-3 * std::fabs(med));
      if (*r.loss > med * t_.loss_spike_factor && *r.loss > med + t_.loss_spike_mads * sigma) {
        out.push_back(Make(AnomalyKind::kLossSpike, r,
                           fmt::format("loss {} vs the rolling median {} ({:.1f} x; threshold "
                                       "{} x and {} robust sigma)",
                                       Num(*r.loss), Num(med), *r.loss / med, t_.loss_spike_factor,
                                       t_.loss_spike_mads)));
      }
    }
    loss_.Push(*r.loss);
  }
  if (r.grad_norm && !grad_bad) {
    if (grad_norm_.size() >= static_cast<size_t>(t_.min_window)) {
      const double med = grad_norm_.Median();
      if (med > 0 && *r.grad_norm > t_.grad_norm_factor * med) {
        out.push_back(Make(
            AnomalyKind::kGradNormSpike, r,
            fmt::format("grad norm {} vs the rolling median {} ({:.0f} x; "
                        "threshold {} x)",
                        Num(*r.grad_norm), Num(med), *r.grad_norm / med, t_.grad_norm_factor)));
      }
    }
    grad_norm_.Push(*r.grad_norm);
  }
  // Skipped steps: Megatron counts per interval; DeepSpeed's skipped= is cumulative.
  if (r.format == LogFormat::kDeepSpeed) {
    if (r.skipped_iterations && last_ && last_->skipped_iterations &&
        *r.skipped_iterations > *last_->skipped_iterations && !overflow_seen_) {
      out.push_back(Make(AnomalyKind::kSkippedStep, r,
                         fmt::format("skipped steps went from {} to {} (fp16 overflow or nan)",
                                     *last_->skipped_iterations, *r.skipped_iterations)));
    }
    if (r.skipped_iterations) overflow_seen_ = false;
  } else if (r.skipped_iterations.value_or(0) > 0 || r.nan_iterations.value_or(0) > 0) {
    out.push_back(
        Make(AnomalyKind::kSkippedStep, r,
             fmt::format("{} skipped and {} nan iterations in the interval ending at "
                         "step {}",
                         r.skipped_iterations.value_or(0), r.nan_iterations.value_or(0), r.step)));
  }
  // Memory creep: growth after warm-up (the optimizer states are allocated at step 1).
  if (r.memory_gib && r.step > t_.warmup_steps) {
    if (!memory_baseline_) {
      memory_baseline_ = r.memory_gib;
      memory_baseline_step_ = r.step;
    } else if (*r.memory_gib > *memory_baseline_ * (1 + t_.memory_creep_fraction) &&
               *r.memory_gib - *memory_baseline_ >= t_.memory_creep_min_gib) {
      out.push_back(Make(AnomalyKind::kMemoryCreep, r,
                         fmt::format("memory {:.2f} GiB, up {:.1f}% from {:.2f} GiB at step {} "
                                     "(threshold {:.0f}% and {} GiB)",
                                     *r.memory_gib, 100 * (*r.memory_gib / *memory_baseline_ - 1),
                                     *memory_baseline_, memory_baseline_step_,
                                     100 * t_.memory_creep_fraction, t_.memory_creep_min_gib)));
      memory_baseline_ = r.memory_gib;
      memory_baseline_step_ = r.step;
    }
  }
}

}  // namespace strata

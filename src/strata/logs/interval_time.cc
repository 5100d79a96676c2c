#include "strata/logs/interval_time.h"

#include <cmath>

namespace strata {

namespace {

// ms-swift's format_time prints whole seconds (int(seconds)): the true elapsed time lies in
// [printed, printed + 1). Half a second of slack each side for the rounded average.
constexpr double kClockLowS = 0.5;
constexpr double kClockHighS = 1.5;

// The seconds since step 0 a v4 average implies, when it counts from step 0 and the printed
// clock agrees (a run resumed from step r counts from r: it then disagrees).
std::optional<double> ElapsedFromAverage(const StepRecord& r) {
  if (!r.running_step_time_s || !r.elapsed_s || r.step <= 0) return std::nullopt;
  if (r.running_origin != RunningOrigin::kResumeStep) return std::nullopt;
  const double implied = *r.running_step_time_s * static_cast<double>(r.step);
  const double off = implied - *r.elapsed_s;
  if (off < -kClockLowS || off > kClockHighS) return std::nullopt;
  return implied;
}

}  // namespace

std::optional<double> IntervalStepTime(const StepRecord* prev, const StepRecord& cur) {
  if (!cur.running_step_time_s) return std::nullopt;
  // v3: global_step / (now - the trainer's start), so step / average is the time since that
  // start to the rounding of its 6 digits, whatever clock elapsed_time was printed from (ms-swift
  // #4146 prints 18m 26s at step 12 where 12 / 0.010367 it/s = 1,157.5 s). Not past a new
  // process: the time since its start is smaller.
  if (prev && prev->step < cur.step && prev->running_step_time_s &&
      prev->running_origin == RunningOrigin::kStepZero &&
      cur.running_origin == RunningOrigin::kStepZero) {
    const double a = *prev->running_step_time_s * static_cast<double>(prev->step);
    const double b = *cur.running_step_time_s * static_cast<double>(cur.step);
    if (b > a) return (b - a) / static_cast<double>(cur.step - prev->step);
  }
  if (prev && prev->step < cur.step && prev->elapsed_s && cur.elapsed_s &&
      *cur.elapsed_s >= *prev->elapsed_s) {
    const double steps = static_cast<double>(cur.step - prev->step);
    const auto a = ElapsedFromAverage(*prev), b = ElapsedFromAverage(cur);
    if (a && b && *b > *a) return (*b - *a) / steps;
    if (*cur.elapsed_s > *prev->elapsed_s) return (*cur.elapsed_s - *prev->elapsed_s) / steps;
    return std::nullopt;  // the same whole second: too short to time
  }
  if (prev && prev->step < cur.step &&
      !(cur.elapsed_s && prev->elapsed_s && *cur.elapsed_s < *prev->elapsed_s)) {
    return std::nullopt;  // a record before this one but no clock to time the interval with
  }
  // The first record of the run (or of the process, when the clock went back): the average
  // covers the steps before it.
  switch (cur.running_origin) {
    case RunningOrigin::kResumeStep:
    case RunningOrigin::kSmoothed:
    case RunningOrigin::kStepZero:  // too low when the run resumed (docs/commands/logs.md)
      return cur.running_step_time_s;
    case RunningOrigin::kNone:
      break;
  }
  return std::nullopt;
}

}  // namespace strata

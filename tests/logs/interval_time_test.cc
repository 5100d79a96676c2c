// The step time of a logged interval from a running average and the clock (interval_time.h).
// Records are built by hand the way ms-swift writes them: v3 train_speed(iter/s) =
// global_step / elapsed (swift/trainers/callback.py @v3.12.0), v4 train_speed(s/it) =
// elapsed / (step - the resume step) (swift/megatron/callbacks/print.py), elapsed_time in whole
// seconds.
#include "strata/logs/interval_time.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

StepRecord Swift(int64_t step, double elapsed_printed_s, double average, RunningOrigin origin) {
  StepRecord r;
  r.step = step;
  r.elapsed_s = elapsed_printed_s;
  r.running_step_time_s = average;
  r.running_origin = origin;
  return r;
}

TEST(IntervalStepTime, V3FromTheAveragesDigits) {
  // 2.9 s a step: step 10 at 29 s, step 20 at 58 s (printed "29s", "58s"). iter/s rounded to 6
  // digits: 10 / 29 = 0.344828, 20 / 58 = 0.344828. The interval: (58 - 29) / 10 = 2.9 s.
  const StepRecord a = Swift(10, 29, 1 / 0.344828, RunningOrigin::kStepZero);
  const StepRecord b = Swift(20, 58, 1 / 0.344828, RunningOrigin::kStepZero);
  EXPECT_NEAR(*IntervalStepTime(&a, b), 2.9, 1e-4);
  EXPECT_NEAR(*IntervalStepTime(nullptr, a), 2.9, 1e-4);  // the first record: its average
  // Whole seconds lose the fraction: 2.95 s a step prints 29 s and 59 s (59.0 true); the
  // averages give 2.95, the clock alone (59 - 29) / 10 = 3.0.
  const StepRecord c = Swift(10, 29, 1 / (10 / 29.5), RunningOrigin::kStepZero);
  const StepRecord d = Swift(20, 59, 1 / (20 / 59.0), RunningOrigin::kStepZero);
  EXPECT_NEAR(*IntervalStepTime(&c, d), 2.95, 1e-9);
  // A clock that started after the trainer's (ms-swift #4146, tests/golden/logs/
  // ms-swift-4146-dicts-glued: step 12 at "18m 26s" = 1,106 s, 12 / 0.010367 it/s = 1,157.5 s):
  // the averages still time the interval. Step 22 at 2,122.0 s since the trainer's start (printed
  // 2,070 s): (2,122.0 - 1,157.5) / 10 = 96.45 s; the first record's average is 96.46 s.
  const StepRecord e = Swift(12, 1106, 1 / 0.010367, RunningOrigin::kStepZero);
  const StepRecord f = Swift(22, 2070, 2122.0 / 22, RunningOrigin::kStepZero);
  EXPECT_NEAR(*IntervalStepTime(&e, f), (2122.0 - 12 / 0.010367) / 10, 1e-9);
  EXPECT_NEAR(*IntervalStepTime(nullptr, e), 96.46, 0.005);
}

TEST(IntervalStepTime, V4ResumedUsesTheClock) {
  // Resumed from step 1000 at 2 s a step: step 1005 at 10 s, 1010 at 20 s; s/it 2.0 on both
  // (elapsed / (step - 1000)). 2.0 x 1,005 is no 10 s: the averages do not count from step 0,
  // so the clock gives the interval, 10 s / 5 = 2 s; the first record's average is its own.
  const StepRecord a = Swift(1005, 10, 2.0, RunningOrigin::kResumeStep);
  const StepRecord b = Swift(1010, 20, 2.0, RunningOrigin::kResumeStep);
  EXPECT_NEAR(*IntervalStepTime(&a, b), 2.0, 1e-9);
  EXPECT_NEAR(*IntervalStepTime(nullptr, a), 2.0, 1e-9);
}

TEST(IntervalStepTime, NothingWithoutAClockOrAnAverage) {
  StepRecord a = Swift(5, 10, 2.0, RunningOrigin::kResumeStep);
  StepRecord b = Swift(10, 20, 2.0, RunningOrigin::kResumeStep);
  b.elapsed_s.reset();
  EXPECT_FALSE(IntervalStepTime(&a, b).has_value());  // no clock to time the interval
  b.elapsed_s = 10;                                   // the same whole second: too short
  EXPECT_FALSE(IntervalStepTime(&a, b).has_value());
  StepRecord plain;
  plain.step = 3;
  EXPECT_FALSE(IntervalStepTime(nullptr, plain).has_value());
}

}  // namespace
}  // namespace strata

// DeepSpeed's wall-clock breakdown line ("time (ms) | forward: ... | step: ...") gives the step
// time of the step whose throughput line comes just before it.
#include <gtest/gtest.h>

#include <map>
#include <string_view>

#include "strata/logs/log_analyzer.h"
#include "strata/logs/log_line_parser.h"

namespace strata {
namespace {

// REAL, deepspeedai/DeepSpeed issue #3742 (tests/golden/logs/deepspeed-3742-engine/input.log).
constexpr std::string_view kThroughput34 =
    "[2023-07-25 21:03:17,269] [INFO] [timer.py:215:stop] epoch=0/micro_step=34/global_step=34, "
    "RunningAvgSamplesPerSec=7.864669709950182, CurrSamplesPerSec=8.00912418308922, "
    "MemAllocated=59.65GB, MaxMemAllocated=63.31GB";
constexpr std::string_view kWallClock =
    "[2023-07-25 21:03:17,269] [INFO] [logging.py:96:log_dist] [Rank 0] rank=0 time (ms) | "
    "forward: 652.41 | backward: 2164.52 | backward_inner: 2001.89 | backward_allreduce: 162.60 "
    "| step: 1172.13";
constexpr std::string_view kProgress35 =
    "[2023-07-25 21:03:21,037] [INFO] [logging.py:96:log_dist] [Rank 0] step=35, skipped=0, "
    "lr=[2.1731931451279077e-06, 2.1731931451279077e-06], mom=[[0.9, 0.95], [0.9, 0.95]]";

std::map<int64_t, StepRecord> Steps(std::initializer_list<std::string_view> lines) {
  std::map<int64_t, StepRecord> steps;
  LogAnalyzer::Callbacks callbacks;
  callbacks.on_step = [&](int, const StepRecord& r) { steps[r.step] = r; };
  LogAnalyzer analyzer(callbacks);
  for (std::string_view line : lines) analyzer.FeedLine(line);
  analyzer.Finish();
  return steps;
}

// forward, backward and step are disjoint global timers (backward_inner + backward_allreduce =
// 2001.89 + 162.60 = 2164.49 lie inside backward = 2164.52; deepspeedai/DeepSpeed@09601bb8
// deepspeed/runtime/engine.py:1883-1922), and DeepSpeed's own iteration latency is their sum
// (engine.py:2172-2174): 652.41 + 2164.52 + 1172.13 = 3989.06 ms = 3.98906 s for step 34, the
// step of the throughput line the engine prints just before it (engine.py:2089, 2148). Before,
// the line was not read: 2 of 3 lines recognised and no step time.
TEST(DeepSpeedWallClock, Issue3742StepTimeIsForwardBackwardStep) {
  const auto steps = Steps({kThroughput34, kWallClock, kProgress35});
  ASSERT_EQ(steps.count(34), 1u);
  ASSERT_TRUE(steps.at(34).step_time_s.has_value());
  EXPECT_NEAR(*steps.at(34).step_time_s, 3.98906, 1e-9);
  ASSERT_EQ(steps.count(35), 1u);
  EXPECT_FALSE(steps.at(35).step_time_s.has_value());
}

// A line with the micro-step timers, or after a record with no throughput line (the pipeline
// engine's, which sums steps_per_print steps: pipe/engine.py:1131-1132), gives no step time.
TEST(DeepSpeedWallClock, MicroStepLineAndLineWithoutThroughputAreNotRead) {
  StepRecord r;
  EXPECT_FALSE(ParseDeepSpeedWallClockLine(
      "[Rank 0] rank=0 time (ms) | forward_microstep: 652.41 | backward_microstep: 2164.52 | "
      "step_microstep: 1172.13",
      r));
  const auto steps = Steps({kProgress35, kWallClock});
  ASSERT_EQ(steps.count(35), 1u);
  EXPECT_FALSE(steps.at(35).step_time_s.has_value());
}

}  // namespace
}  // namespace strata

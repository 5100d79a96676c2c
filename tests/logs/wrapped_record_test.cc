// A verl metrics line broken mid-field by a terminal or a paste is read as one record by
// `strata logs`, by the same rule as `strata rl --log` (logs/verl_metrics_line.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/logs/log_analyzer.h"
#include "strata/logs/verl_metrics_line.h"

namespace strata::verl_wrapped_record_test {
namespace {

struct Seen {
  int rank;
  StepRecord record;
};

std::vector<Seen> Read(const std::vector<std::string>& lines) {
  std::vector<Seen> seen;
  LogAnalyzer::Callbacks callbacks;
  callbacks.on_step = [&](int rank, const StepRecord& r) { seen.push_back({rank, r}); };
  LogAnalyzer analyzer(callbacks);
  for (const std::string& line : lines) analyzer.FeedLine(line);
  analyzer.Finish();
  return seen;
}

// The shape of verl-project/verl#1208's paste (tests/golden/logs/verl-1208-ray-prefix-split):
// the line breaks inside "response_length/clip_ratio", so timing_s/update_actor and
// timing_s/step sit on the second piece. Before, the second piece was read as a line of its own
// and the step had no actor update and no RL iteration.
TEST(VerlWrappedRecord, PiecesOfOneMetricsLineAreOneRecord) {
  const std::vector<Seen> seen =
      Read({"(TaskRunner pid=16292) step:2 - actor/grad_norm:0.069 - response_length/cl",
            "ip_ratio:0.004 - timing_s/gen:74.020 - timing_s/update_actor:14.302 - "
            "timing_s/step:96.551",
            "(TaskRunner pid=16292) Training Progress: 1%|"});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].record.step, 2);
  ASSERT_TRUE(seen[0].record.step_time_s.has_value());
  EXPECT_DOUBLE_EQ(*seen[0].record.step_time_s, 14.302);
  ASSERT_TRUE(seen[0].record.rl_iteration_s.has_value());
  EXPECT_DOUBLE_EQ(*seen[0].record.rl_iteration_s, 96.551);
}

// Unprefixed metrics lines one after another: each "step:N - " starts a record of its own and is
// never taken as the previous one's continuation, though it also holds " - ", ':' and '/'.
TEST(VerlWrappedRecord, ANewStepLineIsNeverAContinuation) {
  const std::vector<Seen> seen =
      Read({"step:1 - actor/grad_norm:0.12 - timing_s/update_actor:410.0 - timing_s/step:1240.0",
            "step:2 - actor/grad_norm:0.11 - timing_s/update_actor:412.0 - timing_s/step:1241.0",
            "step:3 - actor/grad_norm:0.10 - timing_s/update_actor:408.0 - timing_s/step:1239.0"});
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_DOUBLE_EQ(*seen[1].record.step_time_s, 412.0);
  EXPECT_DOUBLE_EQ(*seen[2].record.step_time_s, 408.0);
}

TEST(VerlWrappedRecord, WhatStartsAndWhatCarriesOn) {
  EXPECT_TRUE(StartsVerlMetricsLine("step:34 - actor/lr:2e-06"));
  EXPECT_FALSE(StartsVerlMetricsLine("step:34"));             // no " - " after the number
  EXPECT_FALSE(StartsVerlMetricsLine("step: - actor/lr:1"));  // no number
  EXPECT_TRUE(ContinuesVerlMetricsLine("/rewards/min:-1.0 - critic/advantages/mean:-0.04"));
  EXPECT_FALSE(ContinuesVerlMetricsLine("(TaskRunner pid=1) Training Progress"));  // Ray prefix
  EXPECT_FALSE(ContinuesVerlMetricsLine("  File \"x.py\", line 3 - in f: a/b"));   // indented
  EXPECT_FALSE(ContinuesVerlMetricsLine("[rank0]: NCCL WARN - x:y/z"));            // a bracket
  EXPECT_FALSE(ContinuesVerlMetricsLine("Epoch 1 - loss:0.3"));                    // no '/'
}

}  // namespace
}  // namespace strata::verl_wrapped_record_test

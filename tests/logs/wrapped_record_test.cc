// A record broken over lines by a terminal or a paste is read as one by `strata logs`, through
// the joiner `strata rl --log` uses (logs/wrapped_record.h): a verl metrics line broken mid-field
// (logs/verl_metrics_line.h), and OpenRLHF's status dict wrapped between its values (as public
// pastes show it, tests/rl/openrlhf_log_test.cc; logs/openrlhf_status_line.h).
#include "strata/logs/wrapped_record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/logs/log_analyzer.h"
#include "strata/logs/openrlhf_status_line.h"
#include "strata/logs/verl_metrics_line.h"

namespace strata::wrapped_record_test {
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

// Step 7's dict opens behind Ray's prefix and closes two lines later; step 8's fits one line. By
// hand: step 7's loss is its policy_loss 0.00035, its grad norm actor_grad_norm 0.5 (on the first
// piece) and its learning rate actor_lr 1e-06 (on the last piece). Before, the first piece was an
// unclosed dict and refused, the two pieces after it were no record, and only step 8 was read.
TEST(OpenRlhfWrappedDict, PiecesOfOneStatusDictAreOneStep) {
  const std::vector<Seen> seen =
      Read({"(PPOTrainer pid=812) INFO ppo_trainer.py:547] Global step 7: {'policy_loss': "
            "0.00035, 'actor_grad_norm': 0.5,",
            "'response_length': 40.375, 'timing/generation': 2.95,",
            "'timing/ppo_train': 5.04, 'actor_lr': 1e-06}",
            "(PPOTrainer pid=812) INFO ppo_trainer.py:547] Global step 8: {'policy_loss': 0.0004, "
            "'actor_lr': 1e-06}"});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].record.step, 7);
  ASSERT_TRUE(seen[0].record.loss.has_value());
  EXPECT_DOUBLE_EQ(*seen[0].record.loss, 0.00035);
  ASSERT_TRUE(seen[0].record.grad_norm.has_value());
  EXPECT_DOUBLE_EQ(*seen[0].record.grad_norm, 0.5);
  ASSERT_TRUE(seen[0].record.learning_rate.has_value());
  EXPECT_DOUBLE_EQ(*seen[0].record.learning_rate, 1e-06);
  EXPECT_EQ(seen[1].record.step, 8);
}

// A dict that never closes (the paste was cut) is ended by the next status line, and stays
// refused by `strata logs`: its last value may be cut short ("9" for "92.5").
TEST(OpenRlhfWrappedDict, ACutDictEndsAtTheNextStatusLine) {
  const std::vector<Seen> seen =
      Read({"Global step 3: {'policy_loss': 0.1, 'actor_lr': 1e-06,", "'timing/step_total': 9",
            "Global step 4: {'policy_loss': 0.2, 'actor_lr': 1e-06}"});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].record.step, 4);
}

// The joiner itself: the record keeps the first line's rank and number, joins an OpenRLHF piece
// after a '\n' and a verl piece with no separator (cut mid-field), and gives records back in the
// log's order, before the line that ended them.
TEST(OpenRlhfWrappedDict, TheJoinerGivesRecordsInOrder) {
  WrappedRecordJoiner joiner;
  std::vector<WrappedRecord> done;
  EXPECT_TRUE(
      joiner.Feed("[rank3]: Global step 1: {'a': 1,", "Global step 1: {'a': 1,", 3, 10, done));
  EXPECT_TRUE(done.empty());
  EXPECT_TRUE(joiner.Feed("'b': 2}", "'b': 2}", -1, 11, done));  // closes: given back at once
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].kind, WrappedKind::kOpenRlhfStatus);
  EXPECT_EQ(done[0].text, "Global step 1: {'a': 1,\n'b': 2}");
  EXPECT_EQ(done[0].rank, 3);
  EXPECT_EQ(done[0].line, 10);
  done.clear();
  EXPECT_TRUE(joiner.Feed("step:5 - actor/grad_norm:0.1 - timing_s/ge",
                          "step:5 - actor/grad_norm:0.1 - timing_s/ge", -1, 12, done));
  EXPECT_TRUE(joiner.Feed("n:7.5 - timing_s/step:9.0", "n:7.5 - timing_s/step:9.0", -1, 13, done));
  EXPECT_FALSE(joiner.Feed("Training Progress: 1%", "Training Progress: 1%", -1, 14, done));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].kind, WrappedKind::kVerlMetrics);
  EXPECT_EQ(done[0].text, "step:5 - actor/grad_norm:0.1 - timing_s/gen:7.5 - timing_s/step:9.0");
  // A line whose status dict closes on it is not held.
  done.clear();
  EXPECT_FALSE(joiner.Feed("Global step 2: {'a': 1}", "Global step 2: {'a': 1}", -1, 15, done));
  joiner.Finish(done);
  EXPECT_TRUE(done.empty());
}

// The status line's grammar: "Global step N: " right before the '{', nothing else.
TEST(OpenRlhfWrappedDict, StatusLineGrammar) {
  int64_t step = 0;
  EXPECT_EQ(FindOpenRlhfDict("x Global step 12: {'a': 1}", step), 18u);
  EXPECT_EQ(step, 12);
  EXPECT_EQ(FindOpenRlhfDict("Global step : {'a': 1}", step), std::string::npos);  // no number
  EXPECT_EQ(FindOpenRlhfDict("Global step 3 {'a': 1}", step), std::string::npos);  // no ': '
  EXPECT_EQ(OpenRlhfDictClose("{'a': '}', 'b': [1, {2}]} tail", 0), 24u);
  EXPECT_EQ(OpenRlhfDictClose("{'a': 1, 'b': [1, 2", 0), std::string::npos);
}

}  // namespace
}  // namespace strata::wrapped_record_test

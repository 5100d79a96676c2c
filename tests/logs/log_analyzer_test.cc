// The analyser on whole logs: which anomalies it finds, on which lines, and the run summary.
// Expected lines and numbers come from the fixtures' SOURCE files, derived by hand.
#include "strata/logs/log_analyzer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "strata/logs/log_reader.h"
#include "support/golden.h"

namespace strata {
namespace {

LogSummary Analyze(const std::string& relative) {
  LogAnalyzer analyzer;
  auto read = ReadLogFile(testing::TestPath(relative), analyzer);
  EXPECT_TRUE(read.ok()) << (read.ok() ? "" : read.error().Format());
  analyzer.Finish();
  return analyzer.Summary();
}

LogSummary AnalyzeText(const std::string& text) {
  LogAnalyzer analyzer;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    analyzer.FeedLine(std::string_view(text).substr(pos, nl - pos));
    pos = nl + 1;
  }
  analyzer.Finish();
  return analyzer.Summary();
}

struct Expected {
  AnomalyKind kind;
  int64_t line;
  int64_t step;
};

TEST(LogAnalyzer, EveryAnomalyOfTheSyntheticMegatronLog) {
  // tests/golden/logs/synth-megatron-anomalies/SOURCE lists them; line numbers are the file's.
  const LogSummary s = Analyze("golden/logs/synth-megatron-anomalies/input.log");
  const Expected expected[] = {
      {AnomalyKind::kLossSpike, 4, 40},         // 4.87 vs median 1.199 of 1.235, 1.199, 1.177
      {AnomalyKind::kGradNormSpike, 4, 40},     // 38.2 vs median 0.405: 94 x > 10 x
      {AnomalyKind::kNanInf, 5, 50},            // grad norm nan
      {AnomalyKind::kSkippedStep, 5, 50},       // 1 skipped, 1 nan iteration
      {AnomalyKind::kStall, 8, 80},             // 6,501.3 s for 10 steps, median 120.27 s/step
      {AnomalyKind::kRestart, 11, 70},          // 80 -> 70 after the checkpoint reload
      {AnomalyKind::kMemoryCreep, 15, 90},      // 91.0 GiB vs 85.6 GiB at step 70: +6.3%
      {AnomalyKind::kThroughputDrop, 17, 100},  // 180.4 s vs ~120.3 s: -33%
      {AnomalyKind::kHang, 19, 110},            // the watchdog line after the last step
  };
  ASSERT_EQ(s.anomalies.size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(s.anomalies[i].kind, expected[i].kind) << i << ": " << s.anomalies[i].message;
    EXPECT_EQ(s.anomalies[i].line, expected[i].line) << i << ": " << s.anomalies[i].message;
    EXPECT_EQ(s.anomalies[i].step, expected[i].step) << i << ": " << s.anomalies[i].message;
  }
  // The stall cost 6,501.3 s - 10 steps x the median gap per step. The gaps per step before it
  // were 120.26, 120.29, 120.27, 120.27, 120.28, 120.28 s (timestamps): median 120.275 s.
  EXPECT_NEAR(s.anomalies[4].lost_s, 6501.3 - 10 * 120.275, 0.2);
  ASSERT_EQ(s.ranks.size(), 1u);
  const RankSummary& r = s.ranks[0];
  EXPECT_EQ(r.restarts, 1);
  EXPECT_EQ(r.steps_redone, 10);
  EXPECT_EQ(r.first_step, 10);
  EXPECT_EQ(r.last_step, 110);
  EXPECT_EQ(r.total_steps, 1450);
  EXPECT_NEAR(r.max_memory_gib, 93184.0 / 1024, 1e-9);
  EXPECT_EQ(s.tail.error_line, 19);
  EXPECT_FALSE(s.tail.finished);
}

TEST(LogAnalyzer, HealthyRunHasNoAnomaly) {
  // The reference log: smooth curves, ~120.5 s steps, flat memory after iteration 1.
  const LogSummary s = Analyze("golden/logs/reference-megatron-swift/input.log");
  EXPECT_TRUE(s.anomalies.empty()) << s.anomalies.front().message;
  ASSERT_EQ(s.ranks.size(), 1u);
  EXPECT_EQ(s.ranks[0].records, 30);
  // Steady step time: iterations 3-30 (1 and 2 are warm-up) average 120,520.0 ms by
  // construction (SOURCE).
  EXPECT_NEAR(*s.ranks[0].step_time_s.Mean(), 120.52, 1e-6);
  // 370 iterations left at 120.52 s.
  EXPECT_NEAR(*s.ranks[0].EtaSeconds(), 370 * 120.52, 1e-3);
  EXPECT_EQ(s.recognised_lines, 30);
  EXPECT_EQ(s.lines, 39);
}

TEST(LogAnalyzer, RanksAreSplitByPrefix) {
  const LogSummary s = Analyze("golden/logs/synth-torchtitan-two-ranks-ansi/input.log");
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].rank, 0);
  EXPECT_EQ(s.ranks[1].rank, 7);
  EXPECT_EQ(s.ranks[0].records, 8);
  EXPECT_EQ(s.ranks[1].records, 8);
  // Rank 7's memory: baseline 71.30 GiB at step 3 (after warm-up); 76.20 at step 6 is +6.9%.
  ASSERT_EQ(s.anomalies.size(), 1u);
  EXPECT_EQ(s.anomalies[0].kind, AnomalyKind::kMemoryCreep);
  EXPECT_EQ(s.anomalies[0].rank, 7);
  EXPECT_EQ(s.anomalies[0].step, 6);
}

TEST(LogAnalyzer, DuplicateLinesOfSeveralRanksMerge) {
  // torchtitan #2389: seven lines for step 4, one for step 5, a cut line.
  const LogSummary s = Analyze("golden/logs/torchtitan-2389-ranks-without-prefix/input.log");
  ASSERT_EQ(s.ranks.size(), 1u);
  EXPECT_EQ(s.ranks[0].records, 2);
  EXPECT_EQ(s.duplicate_lines, 6);
}

TEST(LogAnalyzer, RestartAndStallWithoutClock) {
  // HF-style dicts have no clock: a stall shows in the step time (ms-swift train_speed(s/it)).
  std::string text;
  for (int i = 1; i <= 8; ++i) {
    const double t = i == 6 ? 500.0 : 10.0;
    text += "{'loss': 1.0, 'grad_norm': 0.5, 'iteration': '" + std::to_string(i) +
            "/100', 'train_speed(s/it)': " + std::to_string(t) + "}\n";
  }
  text += "{'loss': 1.0, 'grad_norm': 0.5, 'iteration': '4/100', 'train_speed(s/it)': 10.0}\n";
  const LogSummary s = AnalyzeText(text);
  ASSERT_EQ(s.anomalies.size(), 2u);
  EXPECT_EQ(s.anomalies[0].kind, AnomalyKind::kStall);
  EXPECT_EQ(s.anomalies[0].line, 6);
  EXPECT_NEAR(s.anomalies[0].lost_s, 490.0, 1e-9);  // 500 s - the 10 s median
  EXPECT_EQ(s.anomalies[1].kind, AnomalyKind::kRestart);
  EXPECT_EQ(s.anomalies[1].line, 9);
  EXPECT_EQ(s.ranks[0].steps_redone, 4);  // 8 -> 4
}

TEST(LogAnalyzer, FinishedRunIsNoHang) {
  const LogSummary s = AnalyzeText(
      "{'loss': 1.0, 'grad_norm': 0.5}\n{'loss': 0.9, 'grad_norm': 0.5}\n"
      "RuntimeError: something after the steps\n"
      "{'train_runtime': 183.4, 'train_loss': 0.95, 'epoch': 1.0}\n");
  EXPECT_TRUE(s.tail.finished);
  EXPECT_TRUE(s.anomalies.empty());
  EXPECT_EQ(s.ranks[0].last_step, 2);  // HF lines numbered 1, 2
}

TEST(LogAnalyzer, NothingRecognised) {
  const LogSummary s = AnalyzeText("hello\nworld\n\n");
  EXPECT_EQ(s.lines, 3);
  EXPECT_EQ(s.recognised_lines, 0);
  EXPECT_TRUE(s.ranks.empty());
  EXPECT_TRUE(s.anomalies.empty());
}

}  // namespace
}  // namespace strata

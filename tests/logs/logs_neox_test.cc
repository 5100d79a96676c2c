// GPT-NeoX's iteration line: Megatron's layout, but each loss key printed as
// " {key}: {value:.6E} |" with the key lm_loss, an underscore where Megatron-LM prints "lm loss"
// (EleutherAI/gpt-neox megatron/training.py, training_log; the " approx flops per GPU: {..} |"
// segment and the leading " samples/sec: {:.3f} |" come from the same function). The lines below
// are SYNTH, written in that format, with the values of a GPT-NeoX run's line at iteration 34 of
// 10,000 (4,103.1 ms, learning rate 2.111E-06, loss 11.18665).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "analyze_text.h"
#include "strata/logs/log_analyzer.h"
#include "strata/logs/log_line_parser.h"
#include "strata/report/logs_render.h"

namespace strata::logs_neox_test {
namespace {

std::string NeoxLine(int iteration, std::string_view loss_segment) {
  return fmt::format(
      " samples/sec: 7.799 | iteration {:8d}/   10000 | elapsed time per iteration (ms): 4103.1 "
      "| learning rate: 2.111E-06 | approx flops per GPU: 112.9TFLOPS |{} number of skipped "
      "iterations:   0 | number of nan iterations:   0 |\n",
      iteration, loss_segment);
}

// Iterations 30-37: a loss near 11.19, then nan at 36 and 950 at 37 (NeoX in bf16 leaves its
// nan counter at 0, so only the loss shows it). `with_loss` false drops the lm_loss segment.
std::string NeoxLog(bool with_loss) {
  const char* losses[] = {"1.120000E+01", "1.119000E+01", "1.119000E+01", "1.118700E+01",
                          "1.118665E+01", "1.117000E+01", "nan",          "9.500000E+02"};
  std::string text;
  for (int i = 0; i < 8; ++i) {
    text += NeoxLine(30 + i, with_loss ? fmt::format(" lm_loss: {} |", losses[i]) : "");
  }
  return text;
}

LogSummary Analyze(std::string_view text) { return testing::AnalyzeText(text); }

std::string Render(const LogSummary& summary) {
  const std::optional<LogJob> no_job;
  LogsText text;
  text.path = "neox.log";
  text.summary = &summary;
  text.job = &no_job;
  text.rows_total = 8;
  text.mfu_note = "not recomputed";
  return RenderLogsText(text);
}

// The line's values as printed: step 34 of 10,000, 4,103.1 ms, learning rate 2.111E-06 and
// lm_loss 1.118665E+01 = 11.18665 (before, the loss was not read: the column was empty).
TEST(LogsNeox, TheLmLossIsRead) {
  const std::string line = NeoxLine(34, " lm_loss: 1.118665E+01 |");
  StepRecord r;
  ASSERT_TRUE(ParseMegatronLine(std::string_view(line).substr(0, line.size() - 1), r));
  EXPECT_EQ(r.step, 34);
  EXPECT_EQ(r.total_steps, 10000);
  EXPECT_DOUBLE_EQ(*r.step_time_s, 4.1031);
  EXPECT_DOUBLE_EQ(*r.learning_rate, 2.111e-06);
  ASSERT_TRUE(r.loss.has_value());
  EXPECT_DOUBLE_EQ(*r.loss, 11.18665);
}

// Before: "anomalies: none found in 8 steps (... loss and grad-norm spikes, nan/inf ...)". Now
// the nan at iteration 36 (line 7) and the spike at 37 (line 8): 950 against the median of the
// six finite losses before it, (11.187 + 11.19) / 2 = 11.1885, i.e. 84.9 x, above 1.5 x.
TEST(LogsNeox, ANanLossAndASpikeAreFlagged) {
  const LogSummary s = Analyze(NeoxLog(true));
  ASSERT_EQ(s.anomalies.size(), 2u) << Render(s);
  EXPECT_EQ(s.anomalies[0].kind, AnomalyKind::kNanInf);
  EXPECT_EQ(s.anomalies[0].step, 36);
  EXPECT_EQ(s.anomalies[0].line, 7);
  EXPECT_EQ(s.anomalies[0].message, "loss is nan");
  EXPECT_EQ(s.anomalies[1].kind, AnomalyKind::kLossSpike);
  EXPECT_EQ(s.anomalies[1].step, 37);
  EXPECT_NE(s.anomalies[1].message.find("(84.9 x;"), std::string::npos) << s.anomalies[1].message;
}

// A log that gives no loss, no grad norm and no memory figure: the spike, nan/inf and memory
// checks had nothing to look at, so they are named as not made, never listed as passed.
TEST(LogsNeox, ChecksWithNothingToLookAtAreNotListedAsMade) {
  const LogSummary s = Analyze(NeoxLog(false));
  EXPECT_TRUE(s.anomalies.empty());
  const std::string out = Render(s);
  EXPECT_NE(out.find("anomalies: none found in 8 steps (stalls > 3 x the median step, throughput "
                     "-30%, skipped steps, restarts, a hang at the end)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("not judged, as no record gives what they look at: no loss or grad norm: "
                     "loss and grad-norm spikes, nan/inf; no memory figure: memory creep"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace strata::logs_neox_test

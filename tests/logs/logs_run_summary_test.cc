// The run summary of a log printed every N iterations, and the records the spike checks could
// not judge. The log: the SYNTH Megatron core-0.16 lines of
// reference/formats/logs-and-node-state.md (section 1.1, lines 88-91): iterations 10, 20, 30,
// 40 printed with --log-interval 10, consumed samples 800, 1,600, 2,400, 3,200, global batch
// 80; job qwen3.6-35b-a3b-sft-h20x40 (mean length 29,000 tokens).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

#include "analyze_text.h"
#include "strata/logs/log_analyzer.h"
#include "strata/logs/log_job.h"
#include "strata/report/logs_render.h"

namespace strata::logs_run_summary_test {
namespace {

constexpr std::string_view kInterval10Log =
    " [2026-05-12 03:14:07.512345] iteration       10/    1450 | consumed samples:          800 | "
    "elapsed time per iteration (ms): 120345.6 | throughput per GPU (TFLOP/s/GPU): 13.3 | learning "
    "rate: 9.999000E-06 | global batch size:    80 | lm loss: 1.234567E+00 | load_balancing_loss: "
    "1.012345E+00 | loss scale: 1.0 | grad norm: 0.412 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |\n"
    " [2026-05-12 03:34:10.118902] iteration       20/    1450 | consumed samples:         1600 | "
    "elapsed time per iteration (ms): 120260.7 | throughput per GPU (TFLOP/s/GPU): 13.3 | learning "
    "rate: 9.996000E-06 | global batch size:    80 | lm loss: 1.198765E+00 | load_balancing_loss: "
    "1.009876E+00 | loss scale: 1.0 | grad norm: 0.398 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |\n"
    " [2026-05-12 03:54:13.020011] iteration       30/    1450 | consumed samples:         2400 | "
    "elapsed time per iteration (ms): 120290.1 | throughput per GPU (TFLOP/s/GPU): 13.3 | learning "
    "rate: 9.991000E-06 | global batch size:    80 | lm loss: 4.873210E+00 | load_balancing_loss: "
    "1.154321E+00 | loss scale: 1.0 | grad norm: 38.217 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |\n"
    " [2026-05-12 04:14:15.700000] iteration       40/    1450 | consumed samples:         3200 | "
    "elapsed time per iteration (ms): 120268.0 | throughput per GPU (TFLOP/s/GPU): 13.3 | learning "
    "rate: 9.984000E-06 | global batch size:    80 | lm loss: 1.187654E+00 | load_balancing_loss: "
    "1.008765E+00 | loss scale: 1.0 | grad norm: nan | number of skipped iterations:   1 | number "
    "of nan iterations:   1 |\n";

LogSummary Analyze(std::string_view text) { return testing::AnalyzeText(text); }

std::string Render(const LogSummary& summary, const std::optional<LogJob>& job) {
  LogsText text;
  text.path = "megatron.log";
  text.summary = &summary;
  text.job = &job;
  text.mfu_note = "not recomputed";
  return RenderLogsText(text);
}

// Each line averages the 10 iterations ending at it, so the log spans iterations 10 to 40: 30
// steps. Megatron's consumed samples say so exactly: 3,200 - 800 = 2,400 samples = 30 x 80, so
// 2,400 x 29,000 = 69,600,000 tokens between the first and last record (the span the wall time
// 1h 0m covers: 30 x 120.28 s = 3,608 s), and 3,200 x 29,000 = 92,800,000 since the run started.
// Before, "31 steps x global batch 80" = 2,480 samples, which matches neither.
TEST(LogsRunSummary, TokensFromConsumedSamples) {
  const LogSummary s = Analyze(kInterval10Log);
  ASSERT_EQ(s.ranks.size(), 1u);
  const RankSummary& r = s.ranks[0];
  EXPECT_DOUBLE_EQ(*r.first_consumed_samples, 800);
  EXPECT_DOUBLE_EQ(*r.last_consumed_samples, 3200);
  EXPECT_EQ(r.first_consumed_step, 10);
  EXPECT_EQ(r.last_consumed_step, 40);
  auto job = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  const std::string out = Render(s, *job);
  EXPECT_NE(out.find("tokens: ~69,600,000 (2,400 samples consumed after step 10, to step 40"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("~92,800,000 since the run started"), std::string::npos) << out;
}

// The same lines without "consumed samples": the steps between the first and the last record,
// 40 - 10 = 30, x 80 x 29,000 = 69,600,000 tokens, and the line says which steps.
TEST(LogsRunSummary, TokensFromTheStepsBetweenRecordsWithoutConsumedSamples) {
  std::string text(kInterval10Log);
  for (size_t at = text.find(" consumed samples:"); at != std::string::npos;
       at = text.find(" consumed samples:")) {
    text.erase(at, text.find('|', at) + 1 - at);
  }
  const LogSummary s = Analyze(text);
  ASSERT_EQ(s.ranks.size(), 1u);
  EXPECT_FALSE(s.ranks[0].first_consumed_samples.has_value());
  auto job = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  const std::string out = Render(s, *job);
  EXPECT_NE(out.find("tokens: ~69,600,000 (30 steps after step 10, to step 40 x global batch 80 x "
                     "mean length 29,000)"),
            std::string::npos)
      << out;
}

// Iteration 30 is the reference doc's loss and grad-norm spike fixture (loss 4.87 vs ~1.2, grad
// norm 38.2 vs ~0.4), but a spike is judged against the median of 3 earlier values
// (AnomalyThresholds::min_window): iterations 10, 20 and 30 have 0, 1 and 2 before them, and
// iteration 40's grad norm is nan (reported as such). So 3 records, up to step 30, were read but
// not judged, and the report says so instead of implying the spike checks ran.
TEST(LogsRunSummary, RecordsTooEarlyForTheSpikeChecksAreNamed) {
  const LogSummary s = Analyze(kInterval10Log);
  ASSERT_EQ(s.ranks.size(), 1u);
  EXPECT_EQ(s.ranks[0].spike_unjudged_records, 3);
  EXPECT_EQ(s.ranks[0].spike_unjudged_last_step, 30);
  const std::string out = Render(s, std::nullopt);
  EXPECT_NE(out.find("not judged for loss and grad-norm spikes: 3 records up to step 30"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace strata::logs_run_summary_test

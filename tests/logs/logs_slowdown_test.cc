// A run that slows down and stays slow: the summary must cover the whole log (wall time, time
// lost) and give the present rate (ETA, MFU now), not only the steady steps before the change.
// The logs are Megatron-LM iteration lines in the layout of the real log quoted in
// epfLLM/Megatron-LLM#11 (consumed samples, global batch 1024, "of 250000" iterations), with
// exact step times so every figure below is derived by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

#include "analyze_text.h"
#include "strata/logs/log_analyzer.h"
#include "strata/logs/log_job.h"
#include "strata/logs/log_mfu.h"
#include "strata/report/logs_render.h"

namespace strata::logs_slowdown_test {
namespace {

// Iterations 1..60 of 250,000; `ms(i)` is iteration i's elapsed time per iteration.
template <typename Ms>
std::string MegatronLog(Ms ms) {
  std::string text;
  for (int i = 1; i <= 60; ++i) {
    text += fmt::format(
        " iteration {:8d}/  250000 | consumed samples: {:12d} | elapsed time per iteration "
        "(ms): {:.1f} | learning rate: 1.000E-05 | global batch size:  1024 | lm loss: "
        "{:.6E} | loss scale: 1.0 | grad norm: 0.230 | number of skipped iterations:   0 | "
        "number of nan iterations:   0 |\n",
        i, 1024 * i, ms(i), 2.5 - i * 0.001);
  }
  return text;
}

LogSummary Analyze(std::string_view text) { return testing::AnalyzeText(text); }

int CountDrops(const LogSummary& s) {
  int drops = 0;
  for (const Anomaly& a : s.anomalies) drops += a.kind == AnomalyKind::kThroughputDrop ? 1 : 0;
  return drops;
}

// Steps 1-20 at 88 s, 21-60 at 176 s (audit case mlm-slowdown2x.log, without its +-1.5 s noise).
// By hand:
// - steady step (warm-up steps 1-2 excluded, the slow steps excluded): 88 s;
// - wall time, the span from the first record to the last as with a clock (steps 2..60):
//   19 x 88 + 40 x 176 = 1,672 + 7,040 = 8,712 s = 2h 25m (was 59 x 88 = 5,192 s = 1h 26m);
// - time lost to the slowdown: 40 x (176 - 88) = 3,520 s = 58m 40s (was "0 s");
// - present rate 176 s since step 21 (40 steps), so the time to finish is
//   (250,000 - 60) x 176 = 43,989,440 s = 509d 3h 17m (was 249,940 x 88 = 254d);
// - throughput now: 1024 x 4096 tokens / 176 s / 32 GPUs = 744.73 tokens/s per GPU, half the
//   steady 1,489.45, so MFU now is half the steady one: 3.63% at 48.25 GFLOP/token (Megatron's
//   Llama-3.1-8B count at S = 4,096, hand-checked in the audit) on 989.5 TFLOP/s:
//   744.73 x 48.25e9 / 989.5e12 = 3.63%.
TEST(LogsSlowdown, ALastingSlowdownIsInEverySummaryNumber) {
  const LogSummary s = Analyze(MegatronLog([](int i) { return i <= 20 ? 88000.0 : 176000.0; }));
  ASSERT_EQ(s.ranks.size(), 1u);
  const RankSummary& r = s.ranks[0];
  EXPECT_EQ(CountDrops(s), 1);
  EXPECT_DOUBLE_EQ(*r.step_time_s.Mean(), 88.0);
  EXPECT_DOUBLE_EQ(*r.WallSeconds(), 8712.0);
  EXPECT_DOUBLE_EQ(r.drop_lost_s, 3520.0);
  EXPECT_TRUE(r.EndsSlow());
  EXPECT_EQ(r.slow_since_step, 21);
  EXPECT_DOUBLE_EQ(*r.CurrentSecondsPerStep(), 176.0);
  EXPECT_DOUBLE_EQ(*r.EtaSeconds(), 43989440.0);

  auto job = LoadLogJob("",
                        {"cluster.gpu=H100", "cluster.gpus_per_node=8", "cluster.nodes=4",
                         "parallel.tp=1", "parallel.pp=1", "parallel.dp=32", "batch.micro_batch=4",
                         "sequence.max_tokens=4096", "batch.global_batch=1024"},
                        "llama-3.1-8b");
  ASSERT_TRUE(job.ok()) << job.error().Format();
  auto mfu = RecomputeLogMfu(r, *job);
  ASSERT_TRUE(mfu.ok()) << mfu.error().Format();
  ASSERT_TRUE(mfu->now_step_time_s.has_value());
  EXPECT_DOUBLE_EQ(*mfu->now_step_time_s, 176.0);
  EXPECT_EQ(mfu->now_since_step, 21);
  EXPECT_NEAR(mfu->tokens_per_s_per_gpu, 1489.45, 0.01);
  EXPECT_NEAR(mfu->mfu / 2, 0.0363, 0.0001);

  const std::optional<LogJob> with_job = *job;
  LogsText text;
  text.path = "megatron.log";
  text.summary = &s;
  text.job = &with_job;
  text.mfu = &*mfu;
  const std::string out = RenderLogsText(text);
  EXPECT_NE(out.find("wall time 2h 25m (step times)"), std::string::npos) << out;
  EXPECT_NE(out.find("slower since step 21 (line 21) to the end of the log: 176.00 s per step "
                     "over 40 steps, +100% on the steady 88.00 s before it"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("58m 40s to slow steps"), std::string::npos) << out;
  EXPECT_NE(out.find("expected time to finish: 509d 3h 17m (249940 steps left at 176.00 s, the "
                     "rate since step 21)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("now (since the slowdown at step 21, to the end of the log): step time "
                     "176.00 s, throughput 744.73 tokens/s per GPU, MFU 3.63% at S = 4,096"),
            std::string::npos)
      << out;
}

// A slowdown just past the 30% threshold (audit case mlm-slowdown.log: 88 s -> ~127 s): steps
// 21-60 alternate 127 s (30.7% down) and 124 s (29.0% down, under the threshold alone). It is
// one slowdown: before, each 124 s step ended the drop and entered the steady window, so the
// drop was flagged again and again and the steady step mixed both regimes. By hand: one drop
// at step 21; steady step 88 s; present rate (20 x 127 + 20 x 124) / 40 = 125.5 s; time lost
// 20 x 39 + 20 x 36 = 1,500 s.
TEST(LogsSlowdown, ASlowdownAtTheThresholdIsOneSlowdown) {
  const LogSummary s = Analyze(MegatronLog([](int i) {
    if (i <= 20) return 88000.0;
    return i % 2 == 1 ? 127000.0 : 124000.0;
  }));
  ASSERT_EQ(s.ranks.size(), 1u);
  const RankSummary& r = s.ranks[0];
  EXPECT_EQ(CountDrops(s), 1);
  EXPECT_DOUBLE_EQ(*r.step_time_s.Mean(), 88.0);
  EXPECT_TRUE(r.EndsSlow());
  EXPECT_EQ(r.slow_since_step, 21);
  EXPECT_DOUBLE_EQ(*r.CurrentSecondsPerStep(), 125.5);
  EXPECT_DOUBLE_EQ(r.drop_lost_s, 1500.0);
}

// A dip that recovers is no present rate: steps 21-25 at 176 s, then 88 s again to step 60.
// The ETA stays at the steady 88 s: (250,000 - 60) x 88 = 21,994,720 s; the dip's cost is
// still counted, 5 x 88 = 440 s, and in the wall time: 54 x 88 + 5 x 176 = 5,632 s.
TEST(LogsSlowdown, ARecoveredDipKeepsTheSteadyRate) {
  const LogSummary s =
      Analyze(MegatronLog([](int i) { return i > 20 && i <= 25 ? 176000.0 : 88000.0; }));
  ASSERT_EQ(s.ranks.size(), 1u);
  const RankSummary& r = s.ranks[0];
  EXPECT_FALSE(r.EndsSlow());
  EXPECT_DOUBLE_EQ(*r.EtaSeconds(), 21994720.0);
  EXPECT_DOUBLE_EQ(r.drop_lost_s, 440.0);
  EXPECT_DOUBLE_EQ(*r.WallSeconds(), 5632.0);
}

}  // namespace
}  // namespace strata::logs_slowdown_test

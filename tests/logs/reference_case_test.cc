// The acceptance check of issue 16: the Megatron-SWIFT log of the reference job gives
// 481 tokens/s per GPU and the course's ~8.2% MFU at the mean length, through the same
// functions as `strata mfu`, and names why megatron's printed TFLOP/s is twice ours.
//
// By hand (tests/golden/logs/reference-megatron-swift/SOURCE, docs/formulas.md "MFU and HFU"):
//   tokens per step = 80 samples (the log's global batch) x 29,000 tokens (the job's mean)
//                   = 2,320,000
//   step time = mean of iterations 3-30 = 120.52 s (iterations 1-2 are warm-up)
//   tokens/s/GPU = 2,320,000 / 120.52 / 40 = 481.25 (the course: 2.31M / 120 s / 40 = 481.25)
//   MFU = 481.25 x 25.0557 GFLOP/token / 148 TFLOP/s = 8.147% (the course prints 8.2%)
//   megatron prints ~24.5 TFLOP/s/GPU: 80 x 49,152 tokens x 30.0083 GFLOP/token / 120.52 s / 40
//                   = 24.48 TFLOP/s, the padded length; ours is 481.25 x 25.0557e9 = 12.06.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "strata/logs/log_analyzer.h"
#include "strata/logs/log_job.h"
#include "strata/logs/log_mfu.h"
#include "strata/logs/log_reader.h"
#include "support/golden.h"

namespace strata {
namespace {

TEST(ReferenceCase, ThroughputAndMfuFromTheLog) {
  LogAnalyzer analyzer;
  ASSERT_TRUE(
      ReadLogFile(testing::TestPath("golden/logs/reference-megatron-swift/input.log"), analyzer)
          .ok());
  analyzer.Finish();
  ASSERT_EQ(analyzer.Summary().ranks.size(), 1u);
  auto job = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  auto mfu = RecomputeLogMfu(analyzer.Summary().ranks[0], *job);
  ASSERT_TRUE(mfu.ok()) << mfu.error().Format();
  EXPECT_NEAR(mfu->tokens_per_step, 2'320'000, 1e-6);
  EXPECT_NEAR(mfu->step_time_s, 120.52, 1e-9);
  EXPECT_NEAR(mfu->tokens_per_s_per_gpu, 481.25, 0.01);
  EXPECT_NEAR(100 * mfu->mfu, 8.147, 0.005);
  EXPECT_NEAR(100 * mfu->mfu, 8.2, 0.2);  // the course's figure and its tolerance
  ASSERT_EQ(mfu->printed.size(), 1u);
  const PrintedVsOurs& p = mfu->printed[0];
  EXPECT_EQ(p.quantity, "TFLOP/s per GPU");
  EXPECT_NEAR(p.ours, 12.06, 0.01);
  EXPECT_NEAR(p.printed, 24.5, 0.1);
  EXPECT_FALSE(p.agrees);
  EXPECT_NE(p.reason.find("padded length"), std::string::npos) << p.reason;
}

TEST(ReferenceCase, ANumberFrom6NIsRecognised) {
  // A framework printing 6N-nominal TFLOP/s for the same run: 481.25 x 6 x 3.0e9 = 8.66e12.
  RankSummary run;
  run.step_time_s.Add(120.52, 1);
  run.global_batch.Add(80, 1);
  run.printed_tflops_per_gpu.Add(8.66, 1);
  auto job = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(job.ok());
  auto mfu = RecomputeLogMfu(run, *job);
  ASSERT_TRUE(mfu.ok());
  ASSERT_EQ(mfu->printed.size(), 1u);
  EXPECT_NE(mfu->printed[0].reason.find("6N-nominal"), std::string::npos) << mfu->printed[0].reason;
}

TEST(ReferenceCase, AnMfuAgainstTheWrongPeakIsRecognised) {
  // The same 12.06 TFLOP/s divided by the H100 SXM's 989 TFLOP/s: 1.219%.
  RankSummary run;
  run.step_time_s.Add(120.52, 1);
  run.global_batch.Add(80, 1);
  run.printed_mfu.Add(12.06e12 / 989e12, 1);
  auto job = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(job.ok());
  auto mfu = RecomputeLogMfu(run, *job);
  ASSERT_TRUE(mfu.ok());
  ASSERT_EQ(mfu->printed.size(), 1u);
  EXPECT_NE(mfu->printed[0].reason.find("H100"), std::string::npos) << mfu->printed[0].reason;
}

TEST(ReferenceCase, NoStepTimeIsAnError) {
  RankSummary run;
  run.global_batch.Add(80, 1);
  auto job = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(job.ok());
  EXPECT_FALSE(RecomputeLogMfu(run, *job).ok());
}

// A verl log (tests/golden/logs/verl-update-actor, values chosen for the test; its SOURCE has the
// arithmetic) recomputed against the reference job's model and GPUs: the trainer's step is the
// actor's update, timing_s/update_actor, steady mean (412 + 408) / 2 = 410 s, not timing_s/step,
// the whole RL iteration ((1,238.5 + 1,241.5) / 2 = 1,240 s).
//   tokens/s per GPU = 8,450,017 / 410 s / 40 = 515.245
// verl's printed perf/throughput divides the same tokens by the iteration and 40 GPUs:
//   8,450,017 / 1,240 s / 40 = 170.36 (printed 170.57 and 170.16 on the steady lines).
TEST(ReferenceCase, VerlMfuIsOverTheActorUpdateNotTheRlIteration) {
  LogAnalyzer analyzer;
  ASSERT_TRUE(
      ReadLogFile(testing::TestPath("golden/logs/verl-update-actor/input.log"), analyzer).ok());
  analyzer.Finish();
  ASSERT_EQ(analyzer.Summary().ranks.size(), 1u);
  const RankSummary& run = analyzer.Summary().ranks[0];
  EXPECT_NEAR(*run.rl_iteration_s.Mean(), 1240.0, 1e-9);
  // Wall time and the time to finish go by the iteration: 3 steps advanced x 1,240 s.
  EXPECT_NEAR(*run.WallSeconds(), 3 * 1240.0, 1e-6);
  auto job = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  auto mfu = RecomputeLogMfu(run, *job);
  ASSERT_TRUE(mfu.ok()) << mfu.error().Format();
  EXPECT_NEAR(mfu->step_time_s, 410.0, 1e-9);
  EXPECT_NE(mfu->step_time_source.find("timing_s/update_actor"), std::string::npos)
      << mfu->step_time_source;
  EXPECT_NEAR(mfu->tokens_per_step, 8'450'017, 1e-6);
  EXPECT_NEAR(mfu->tokens_per_s_per_gpu, 515.245, 0.001);
  const PrintedVsOurs* throughput = nullptr;
  for (const auto& p : mfu->printed) {
    if (p.quantity == "tokens/s per GPU") throughput = &p;
  }
  ASSERT_NE(throughput, nullptr);
  EXPECT_NEAR(throughput->printed, (170.57 + 170.16) / 2, 1e-9);
  EXPECT_FALSE(throughput->agrees);
  EXPECT_NE(throughput->reason.find("RL iteration"), std::string::npos) << throughput->reason;
}

// A verl log whose lines give the iteration but not the actor's update: no MFU over the
// iteration, and the error says why.
TEST(ReferenceCase, VerlWithoutTheActorUpdateHasNoMfu) {
  LogAnalyzer analyzer;
  for (int step = 1; step <= 4; ++step) {
    analyzer.FeedLine(fmt::format(
        "step:{} - actor/grad_norm:0.12 - perf/total_num_tokens:8450017 - timing_s/step:1240.0",
        step));
  }
  analyzer.Finish();
  auto job = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(job.ok());
  auto mfu = RecomputeLogMfu(analyzer.Summary().ranks[0], *job);
  ASSERT_FALSE(mfu.ok());
  EXPECT_NE(mfu.error().Format().find("the whole RL iteration"), std::string::npos)
      << mfu.error().Format();
}

}  // namespace
}  // namespace strata

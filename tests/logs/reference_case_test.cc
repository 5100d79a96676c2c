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
  // Wall time goes by the iterations' own times over the 3 steps advanced (2 to 4), warm-up
  // step 2 included: 1,250 + 1,238.5 + 1,241.5 = 3,730 s (not 3 x the steady 1,240 s: the
  // warm-up's time passed too); the time to finish by the steady iteration.
  EXPECT_NEAR(*run.WallSeconds(), 1250.0 + 1238.5 + 1241.5, 1e-6);
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

// A verl log whose every record is a warm-up step (steps 1 and 2: anomaly.h, warmup_steps 2)
// does give timing_s/update_actor: the error says the records are all warm-up, not that the
// log has no update (which sent the user looking for a timer the log prints).
TEST(ReferenceCase, VerlWithOnlyWarmUpUpdatesSaysSo) {
  LogAnalyzer analyzer;
  for (int step = 1; step <= 2; ++step) {
    analyzer.FeedLine(
        fmt::format("step:{} - actor/grad_norm:0.12 - perf/total_num_tokens:8450017 - "
                    "timing_s/update_actor:{}.0 - timing_s/step:1240.0",
                    step, 410 + step));
  }
  analyzer.Finish();
  auto job = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(job.ok());
  auto mfu = RecomputeLogMfu(analyzer.Summary().ranks[0], *job);
  ASSERT_FALSE(mfu.ok());
  const std::string text = mfu.error().Format();
  EXPECT_EQ(text.find("gives no timing_s/update_actor"), std::string::npos) << text;
  EXPECT_NE(text.find("2 records of timing_s/update_actor, all in the warm-up (steps 1 to 2:"),
            std::string::npos)
      << text;
}

// verl prints its samples' lengths (verl/trainer/ppo/metric_utils.py compute_data_metrics:
// prompt_length/mean, response_length/mean, response_length/max); the MFU is computed at them,
// not at the job's. The SYNTH verl line of reference/formats/logs-and-node-state.md (line 248):
//   S mean = prompt_length/mean 412.7 + response_length/mean 2,871.3 = 3,284 tokens
//   tokens/s/GPU = 8,450,017 / timing_s/update_actor 468.2 s / 40 GPUs = 451.20
// strata's megatron FLOP/token for Qwen3.6-35B-A3B is linear in S: 25.06 GFLOP at S = 29,000
// and 30.01 at S = 49,152 (the SFT job's lengths), so 2.456e5 FLOP per token of S and 17.94
// GFLOP at S = 0; at S = 3,284: 17.94 + 0.81 = 18.75 GFLOP/token;
//   MFU = 451.20 x 18.75e9 / 148e12 (H20 dense bf16) = 5.71 % (at the SFT job's 29,000: 7.64 %).
// The log prints no prompt_length/max: with the SFT job there is no max; with the RL job
// (lengths.prompt_max 2,048) the cap is 2,048 + response_length/max 8,192 = 10,240 tokens:
//   17.94 + 2.456e-4 x 10,240 = 20.45 GFLOP/token -> 451.20 x 20.45e9 / 148e12 = 6.23 %.
// The RL job itself is read by the CLI (tests/golden/logs/verl-reference-line-rl-job).
constexpr const char* kVerlReferenceLine =
    "step:12 - global_seqlen/min:2031442 - global_seqlen/max:2210871 - "
    "global_seqlen/minmax_diff:179429 - global_seqlen/mean:2112504.4 - actor/entropy:0.41235871 - "
    "actor/pg_loss:0.00213 - actor/pg_clipfrac:0.00187 - actor/ppo_kl:-3.1e-05 - "
    "actor/grad_norm:0.118 - perf/mfu/actor:0.0871 - perf/max_memory_allocated_gb:71.25 - "
    "perf/max_memory_reserved_gb:84.9 - perf/cpu_memory_used_gb:412.6 - actor/lr:1e-06 - "
    "training/global_step:12 - training/epoch:0 - critic/score/mean:0.5625 - critic/score/max:1.0 "
    "- critic/score/min:0.0 - response_length/mean:2871.3 - response_length/max:8192.0 - "
    "response_length/min:97.0 - response_length/clip_ratio:0.0312 - prompt_length/mean:412.7 - "
    "timing_s/gen:611.87 - timing_s/reward:4.12 - timing_s/old_log_prob:73.4 - timing_s/ref:72.9 - "
    "timing_s/adv:0.04 - timing_s/update_actor:468.2 - timing_s/update_weights:6.3 - "
    "timing_s/step:1238.5 - perf/total_num_tokens:8450017 - perf/time_per_step:1238.5 - "
    "perf/throughput:170.57";

TEST(ReferenceCase, VerlMfuIsAtTheLogsOwnLengths) {
  LogAnalyzer analyzer;
  analyzer.FeedLine(kVerlReferenceLine);
  analyzer.Finish();
  ASSERT_EQ(analyzer.Summary().ranks.size(), 1u);
  const RankSummary& run = analyzer.Summary().ranks[0];
  auto sft = LoadLogJob("qwen3.6-35b-a3b-sft-h20x40", {});
  ASSERT_TRUE(sft.ok()) << sft.error().Format();
  UseLogLengths(run, *sft);
  EXPECT_NEAR(sft->seq_mean_tokens, 3284.0, 1e-9);
  EXPECT_NEAR(sft->seq_max_tokens, 3284.0, 1e-9);  // no prompt_length/max, no RL job's cap
  auto mfu = RecomputeLogMfu(run, *sft);
  ASSERT_TRUE(mfu.ok()) << mfu.error().Format();
  EXPECT_NEAR(mfu->tokens_per_s_per_gpu, 451.20, 0.01);
  EXPECT_NEAR(100 * mfu->mfu, 5.71, 0.01);

  // The shipped RL job qwen3.6-35b-a3b-grpo-h20x40 as `strata logs --job` reads it: its actor
  // job with 160 x 8 samples per step and its lengths (1,024 + 4,096 mean, 2,048 + 8,192 cap).
  ActorLogJob actor;
  actor.job = "qwen3.6-35b-a3b-sft-h20x40";
  actor.overrides = {"batch.global_batch=1280", "sequence.max_tokens=10240",
                     "sequence.mean_tokens=5120"};
  actor.prompt_cap_tokens = 2048;
  actor.source = "the RL job";
  auto rl = LoadActorLogJob(actor, {});
  ASSERT_TRUE(rl.ok()) << rl.error().Format();
  EXPECT_EQ(rl->gpus, 40);
  EXPECT_EQ(rl->source, "the RL job");
  UseLogLengths(run, *rl);
  EXPECT_NEAR(rl->seq_mean_tokens, 3284.0, 1e-9);
  EXPECT_NEAR(rl->seq_max_tokens, 10240.0, 1e-9);
  auto capped = RecomputeLogMfu(run, *rl);
  ASSERT_TRUE(capped.ok()) << capped.error().Format();
  EXPECT_NEAR(100 * capped->mfu, 5.71, 0.01);
  // Mean, the E[S^2]/E[S] `step` prices (lengths ASSUMED uniform), and the max.
  ASSERT_EQ(capped->report.points.size(), 3u);
  const MfuRow* at_max = nullptr;
  for (const auto& row : capped->report.points.back().rows) {
    if (row.convention == FlopConvention::kMegatron) at_max = &row;
  }
  ASSERT_NE(at_max, nullptr);
  EXPECT_NEAR(100 * at_max->mfu, 6.23, 0.01);
}

}  // namespace
}  // namespace strata

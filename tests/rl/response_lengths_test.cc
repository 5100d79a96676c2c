// The response-length distributions and the continuous-batching simulation of generation, each
// expected value derived by hand in the comment beside it.
#include "strata/rl/response_lengths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "strata/rl/rollout.h"

namespace strata {
namespace {

// The capped exponential's rate in closed form: with r = ln 2 / M, P(X >= M) = e^(-ln 2) = 1/2
// and E[min(X, M)] = (1 - e^(-r M)) / r = (1/2) x M / ln 2. For M = 1,000 tokens the mean is
// 1,000 / (2 ln 2) = 721.3475 tokens, so that mean under that cap must give r = ln 2 / 1,000
// per token and a clip fraction of 0.5. Likewise r = ln 4 / M: e^(-ln 4) = 1/4 clipped, mean
// (3/4) x 1,000 / ln 4 = 541.0106 tokens.
TEST(ResponseLengthsTest, CappedExponentialRateAndClipFractionByHand) {
  struct Row {
    double mean;
    double rate;
    double clip;
  };
  for (const Row& row : {Row{1000 / (2 * std::log(2.0)), std::log(2.0) / 1000, 0.5},
                         Row{0.75 * 1000 / std::log(4.0), std::log(4.0) / 1000, 0.25}}) {
    SCOPED_TRACE(row.mean);
    EXPECT_NEAR(CappedExponentialRate(row.mean, 1000), row.rate, 1e-12);
    auto d = MakeResponseDistribution(ResponseShape::kCappedExponential, row.mean, 1000);
    ASSERT_TRUE(d.distribution.has_value()) << d.error;
    EXPECT_NEAR(d.distribution->ClipFraction(), row.clip, 1e-12);
  }
  // Quantiles at r = ln 2 / 1,000: p = 0.25 -> -ln(0.75) / r = 1,000 x ln(4/3) / ln 2
  // = 415.0375 tokens; from p = 0.5 on, the exponential is past the cap: 1,000.
  auto d =
      MakeResponseDistribution(ResponseShape::kCappedExponential, 1000 / (2 * std::log(2.0)), 1000);
  ASSERT_TRUE(d.distribution.has_value());
  EXPECT_NEAR(d.distribution->Quantile(0.25), 415.0375, 1e-4);
  EXPECT_NEAR(d.distribution->Quantile(0.5), 1000, 1e-9);
  EXPECT_NEAR(d.distribution->Quantile(0.9), 1000, 1e-9);
  // The quantile grid integrates the distribution: 100,000 midpoints average to the mean the
  // rate was solved for (a check of the solver independent of its formula).
  const std::vector<double> lengths = QuantileLengths(*d.distribution, 100000);
  const double mean = std::accumulate(lengths.begin(), lengths.end(), 0.0) / 1e5;
  EXPECT_NEAR(mean, 721.3475, 0.01);
}

// The reference-like case mean 2,000 under a cap of 8,000 (rho = 1/4) has no closed form:
// (1 - e^-x) / x = 0.25 at x = 3.9207 (x = 3.9: 0.97976 / 3.9 = 0.25122; x = 4: 0.98168 / 4 =
// 0.24542; bisection to 3.920690), so r = 3.920690 / 8,000 = 4.9009e-4 per token and
// e^-3.920690 = 1.98% of the samples reach the cap.
TEST(ResponseLengthsTest, CappedExponentialWithoutClosedForm) {
  EXPECT_NEAR(CappedExponentialRate(2000, 8000) * 8000, 3.920690, 1e-6);
  auto d = MakeResponseDistribution(ResponseShape::kCappedExponential, 2000, 8000);
  ASSERT_TRUE(d.distribution.has_value());
  EXPECT_NEAR(d.distribution->ClipFraction(), 0.019827, 1e-6);
  // A mean at the cap: every sample at the cap (rate 0, all clipped).
  auto at_cap = MakeResponseDistribution(ResponseShape::kCappedExponential, 8000, 8000);
  ASSERT_TRUE(at_cap.distribution.has_value());
  EXPECT_EQ(at_cap.distribution->rate_per_token, 0);
  EXPECT_EQ(at_cap.distribution->ClipFraction(), 1);
  EXPECT_EQ(at_cap.distribution->Quantile(0.01), 8000);
}

// Uniform with mean 750 up to 1,000 spans [2 x 750 - 1,000, 1,000] = [500, 1,000]; four
// quantiles at (i + 0.5) / 4: 500 + 500 x {0.125, 0.375, 0.625, 0.875} = 562.5, 687.5, 812.5,
// 937.5. A mean under max / 2 would need negative lengths: refused, with the bound.
TEST(ResponseLengthsTest, UniformAndFixed) {
  auto u = MakeResponseDistribution(ResponseShape::kUniform, 750, 1000);
  ASSERT_TRUE(u.distribution.has_value()) << u.error;
  EXPECT_EQ(QuantileLengths(*u.distribution, 4), (std::vector<double>{562.5, 687.5, 812.5, 937.5}));
  EXPECT_EQ(u.distribution->ClipFraction(), 0);
  auto low = MakeResponseDistribution(ResponseShape::kUniform, 400, 1000);
  EXPECT_FALSE(low.distribution.has_value());
  EXPECT_EQ(low.error,
            "a uniform distribution up to response_max (1000 tokens) has a mean of at least 500 "
            "(response_max / 2), got 400");
  auto f = MakeResponseDistribution(ResponseShape::kFixed, 750, 1000);
  ASSERT_TRUE(f.distribution.has_value());
  EXPECT_EQ(QuantileLengths(*f.distribution, 3), (std::vector<double>{750, 750, 750}));
  EXPECT_EQ(f.distribution->ClipFraction(), 0);
  auto above = MakeResponseDistribution(ResponseShape::kFixed, 1200, 1000);
  EXPECT_FALSE(above.distribution.has_value());
}

// frac(k x 0.6180340) for k = 0..4: 0, 0.618, 0.236, 0.854, 0.472. Their ranks: k0 -> 0,
// k1 -> 3, k2 -> 1, k3 -> 4, k4 -> 2 (n = 5); for n = 4 (k4 dropped) k0 -> 0, k1 -> 2,
// k2 -> 1, k3 -> 3.
TEST(ContinuousBatchingTest, GoldenRatioOrderByHand) {
  EXPECT_EQ(MixedSubmissionOrder(4), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(MixedSubmissionOrder(5), (std::vector<int64_t>{0, 3, 1, 4, 2}));
  // A permutation for any n.
  std::vector<int64_t> order = MixedSubmissionOrder(1000);
  std::sort(order.begin(), order.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i);
}

// A decode step of exactly 1 s at any batch and context: no bytes, no FLOP, 1 s of engine time.
DecodeInput OneSecondSteps() {
  DecodeInput d;
  d.hbm_bandwidth = BytesPerSecond::Of(1e12);
  d.peak = FlopPerSecond::Peta(1);
  d.step_overhead = Seconds::Of(1);
  return d;
}

// Four samples of 1, 2, 3, 4 steps, two slots, submitted in that order:
//   t = 0: 1 and 2 start; t = 1: 1 ends, 3 starts (ends at 4); t = 2: 2 ends, 4 starts (ends
//   at 6); t = 4: 3 ends, 4 runs alone; t = 6: done. 6 steps, 4 of them with both slots busy
//   ([0,1], [1,2], [2,4]), 2 draining ([4,6]); 4 intervals. Longest first (4, 3, 2, 1):
//   t = 0: 4, 3; t = 3: 2 starts (ends 5); t = 4: 1 starts (ends 5); t = 5 done: 5 steps, the
//   bound max(10 / 2, 4) = 5, all with the batch full.
TEST(ContinuousBatchingTest, FourSamplesTwoSlotsByHand) {
  const DecodeSimulation s = SimulateDecode({1, 2, 3, 4}, 2, 0, OneSecondSteps());
  EXPECT_NEAR(s.steps, 6, 1e-12);
  EXPECT_NEAR(s.time.s(), 6, 1e-12);
  EXPECT_NEAR(s.full_steps, 4, 1e-12);
  EXPECT_NEAR(s.full.s(), 4, 1e-12);
  EXPECT_NEAR(s.draining_steps, 2, 1e-12);
  EXPECT_EQ(s.intervals, 4);
  const DecodeSimulation lpt = SimulateDecode({4, 3, 2, 1}, 2, 0, OneSecondSteps());
  EXPECT_NEAR(lpt.steps, 5, 1e-12);
  EXPECT_NEAR(lpt.draining_steps, 0, 1e-12);
}

// One sample alone, its step's time linear in its context: 1e9 B of KV per token (per GPU) at
// 1e12 B/s = 1 ms per token of context. Prompt 100, 200 steps: the context runs from 100 to 300,
// mean 200 over the interval, so 200 steps x 200 ms = 40 s.
TEST(ContinuousBatchingTest, ContextGrowsOverTheInterval) {
  DecodeInput d;
  d.hbm_bandwidth = BytesPerSecond::Of(1e12);
  d.peak = FlopPerSecond::Peta(1);
  d.kv.full_per_token = Bytes::Count(1e9);
  const DecodeSimulation s = SimulateDecode({200}, 4, 100, d);
  EXPECT_NEAR(s.time.s(), 40, 1e-9);
}

// A dense model, TP1, whose step reads 10 GB of weights at 1 TB/s = 10 ms and no KV (compute
// 2 x 2e10 / 5e14 = 0.08 ms at batch 2, below it): 4 samples on one instance, 2 slots, the
// response mean 750 under a cap of 1,000.
//   fixed: two waves of 750 steps = 1,500 steps = the bulk 4 x 750 / 2: 15 s.
//   uniform: lengths 562.5, 687.5, 812.5, 937.5 (above), submitted in the golden-ratio order
//   0, 2, 1, 3: 562.5, 812.5, 687.5, 937.5. t = 0: the first two; t = 562.5: 687.5 starts (ends
//   1,250); t = 812.5: 937.5 starts (ends 1,750); t = 1,250: it runs alone to 1,750.
//   1,750 steps = 17.5 s, of which 1,250 at the full batch (12.5 s) and 500 draining (5 s).
// Before the distribution, generation saw only the mean and the max, so both shapes priced the
// same; now the spread costs 2.5 s.
TEST(GenerationTest, TheSpreadOfLengthsCosts) {
  GenerationInput g;
  g.decode.dense_weights = Bytes::GB(10);
  g.decode.flop_per_token = FlopCount::Of(2e10);
  g.decode.hbm_bandwidth = BytesPerSecond::Of(1e12);
  g.decode.peak = FlopPerSecond::Peta(1);
  g.decode.compute_efficiency = 0.5;
  g.prompts = 1;
  g.samples = 4;
  g.prompt_mean = 100;
  g.concurrent_sequences = 2;
  g.response = *MakeResponseDistribution(ResponseShape::kFixed, 750, 1000).distribution;
  const GenerationTime fixed = ComputeGeneration(g);
  EXPECT_NEAR(fixed.bulk.s(), 15, 1e-9);
  EXPECT_NEAR(fixed.decode.s(), 15, 1e-9);
  g.response = *MakeResponseDistribution(ResponseShape::kUniform, 750, 1000).distribution;
  const GenerationTime uniform = ComputeGeneration(g);
  EXPECT_NEAR(uniform.bulk.s(), 15, 1e-9);  // the same mean: the same bulk
  EXPECT_NEAR(uniform.decode.s(), 17.5, 1e-9);
  EXPECT_NEAR(uniform.simulation.full.s(), 12.5, 1e-9);
  EXPECT_NEAR(uniform.simulation.draining.s(), 5, 1e-9);
}

}  // namespace
}  // namespace strata

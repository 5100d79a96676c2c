// Expected maximum over DP ranks of each rank's work, with variable-length samples.
#include "strata/sim/straggler.h"

#include <gtest/gtest.h>

namespace strata::straggler_test {
namespace {

// data/sequence_histograms/example.txt: 40 samples of 8,192, 30 of 29,000, 10 of 49,152
// tokens: p = 0.5, 0.375, 0.125; F = 0.5, 0.875, 1.
SequenceLengths Example() {
  auto seq = FromHistogram({{8192, 40}, {29000, 30}, {49152, 10}});
  EXPECT_TRUE(seq.ok());
  return *seq;
}

// One sample per rank, two ranks, work = S (a = 1, b = 0):
//   P(max = s_j) = F_j^2 - F_{j-1}^2 = 0.25, 0.875^2 - 0.25 = 0.515625, 1 - 0.765625 = 0.234375
//   E[max] = 8192 x 0.25 + 29000 x 0.515625 + 49152 x 0.234375 = 28,521.125 tokens
// and with work = S^2 (attention): 8192^2 x 0.25 + 29000^2 x 0.515625 + 49152^2 x 0.234375
//   = 16,777,216 + 433,640,625 + 566,231,040 = 1,016,648,881.
TEST(Straggler, ExactExpectedMaximumOfAKnownHistogram) {
  const LengthDistribution d = LengthDistribution::FromSequence(Example());
  EXPECT_FALSE(d.assumed);
  EXPECT_NEAR(ExpectedMaxWork(d, 1, 0, 1, 2), 28521.125, 1e-6);
  EXPECT_NEAR(ExpectedMaxWork(d, 0, 1, 1, 2), 1016648881.0, 1e-3);
  // One rank waits for nobody: its mean, E[S] = 1,689,200 / 80 = 21,115.
  EXPECT_NEAR(ExpectedMaxWork(d, 1, 0, 1, 1), 21115.0, 1e-9);
}

// Two samples per rank, 40 ranks, work = S: the sum of two is taken as normal.
//   E[S] = 21,115; E[S^2] = 52,073,545,600 / 80 = 650,919,320; Var = 205,076,095;
//   sigma = 14,320.478; z_40 = Phi^-1((40 - 0.375) / 40.25) = 2.156356 (Python
//   statistics.NormalDist().inv_cdf); E[max] = 2 x 21,115 + sqrt(2) x 14,320.478 x 2.156356
//   = 85,900.98 tokens (below the cap 2 x 49,152 = 98,304).
TEST(Straggler, NormalApproximationForSeveralSamplesPerRank) {
  const LengthDistribution d = LengthDistribution::FromSequence(Example());
  EXPECT_NEAR(ExpectedMaxWork(d, 1, 0, 2, 40), 85900.98, 0.05);
  // With a million ranks the approximation would pass the largest possible sum: capped.
  EXPECT_NEAR(ExpectedMaxWork(d, 1, 0, 2, 1'000'000), 98304.0, 1e-9);
}

TEST(Straggler, InverseNormal) {
  EXPECT_NEAR(InverseNormalCdf(0.975), 1.959964, 1e-6);  // the two-sided 95% point
  EXPECT_NEAR(InverseNormalCdf(0.5), 0.0, 1e-12);
  EXPECT_NEAR(InverseNormalCdf(0.025), -1.959964, 1e-6);
}

// Only mean and max known (the reference job: 29,000 and 49,152): the ASSUMED uniform on
// [2 x 29,000 - 49,152, 49,152] = [8,848, 49,152] keeps the mean. Its 16 equal-probability
// bins sit at their midpoints, so the variance is width^2 / 12 x (1 - 1 / 16^2)
//   = 40,304^2 / 12 x 255 / 256 = 134,838,921.25; E[S^2] = 29,000^2 + that = 975,838,921.25.
TEST(Straggler, MeanAndMaxOnlyAssumesTheWidestUniform) {
  const LengthDistribution d =
      LengthDistribution::FromSequence(SequenceLengths::MeanMax(29000, 49152));
  EXPECT_TRUE(d.assumed);
  ASSERT_EQ(d.length_tokens.size(), 16u);
  EXPECT_NEAR(d.moment[1], 29000, 1e-6);
  // Midpoints of 16 equal bins: variance = width^2 / 12 x (1 - 1 / 16^2)
  //   = 1,624,412,416 / 12 x 255 / 256 = 134,840,019.2; E[S^2] = 841,000,000 + that.
  EXPECT_NEAR(d.moment[2], 975838921.25, 1e-3);
  EXPECT_DOUBLE_EQ(d.length_tokens.front(), 8848 + 40304.0 / 32);
}

TEST(Straggler, FixedLengthsHaveNoStraggler) {
  const LengthDistribution d = LengthDistribution::Fixed(4096);
  EXPECT_DOUBLE_EQ(ExpectedMaxWork(d, 2, 0.5, 8, 64), 8 * (2 * 4096 + 0.5 * 4096.0 * 4096));
}

}  // namespace
}  // namespace strata::straggler_test

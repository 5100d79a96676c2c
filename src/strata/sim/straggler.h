// Variable-length samples: every data-parallel rank waits for the slowest at the gradient
// synchronisation, so a step lasts the expected MAXIMUM over DP ranks of each rank's work, not
// its mean. A rank's work is the sum over its n samples of t(S) = a S + b S^2 (attention grows
// with the square of the length). Formulas: docs/formulas.md, "Step time", "Stragglers".
#ifndef STRATA_SIM_STRAGGLER_H_
#define STRATA_SIM_STRAGGLER_H_

#include <cstdint>
#include <vector>

#include "strata/model/sequence_lengths.h"

namespace strata {

/// The sample-length distribution as weighted bins, sorted by length, with its first four raw
/// moments (E[S], E[S^2], E[S^3], E[S^4]) precomputed for the hot path.
struct LengthDistribution {
  std::vector<double> length_tokens;  // ascending
  std::vector<double> probability;    // sums to 1
  double moment[5] = {1, 0, 0, 0, 0};
  double max_tokens = 0;
  bool assumed = false;  // true when only mean and max were known (see FromSequence)

  /// One length for every sample (packed or fixed-length data).
  static LengthDistribution Fixed(double tokens);
  /// From a histogram (exact), or, when only mean and max are known, the ASSUMED uniform
  /// distribution on [2 mean - max, max] (the widest uniform with that mean and max), split
  /// into 16 equal-probability bins.
  static LengthDistribution FromSequence(const SequenceLengths& seq);
};

/// E[max over `ranks` of sum_{i=1..n} (a S_i + b S_i^2)], S_i iid from `d`, a, b >= 0.
/// n == 1: exact over the bins, sum_j t_j (F_j^D - F_{j-1}^D). n > 1: the sum is taken as
/// normal (mean n mu, variance n sigma^2) and the maximum of D normals as
/// n mu + sqrt(n) sigma z_D with Blom's z_D = Phi^-1((D - 0.375) / (D + 0.25)), capped at
/// n t(max).
double ExpectedMaxWork(const LengthDistribution& d, double a, double b, int64_t n, int64_t ranks);

/// Phi^-1(p) for 0 < p < 1 (Newton on std::erfc; accurate to ~1e-12).
double InverseNormalCdf(double p);

}  // namespace strata

#endif  // STRATA_SIM_STRAGGLER_H_

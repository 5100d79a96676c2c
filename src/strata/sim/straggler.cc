#include "strata/sim/straggler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace strata {
namespace {

void FillMoments(LengthDistribution& d) {
  for (double& m : d.moment) m = 0;
  for (size_t i = 0; i < d.length_tokens.size(); ++i) {
    double power = 1;
    for (double& m : d.moment) {
      m += d.probability[i] * power;
      power *= d.length_tokens[i];
    }
  }
  d.max_tokens = d.length_tokens.empty() ? 0 : d.length_tokens.back();
}

double Phi(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

}  // namespace

LengthDistribution LengthDistribution::Fixed(double tokens) {
  LengthDistribution d;
  d.length_tokens = {tokens};
  d.probability = {1.0};
  FillMoments(d);
  return d;
}

LengthDistribution LengthDistribution::FromSequence(const SequenceLengths& seq) {
  LengthDistribution d;
  if (!seq.bins.empty()) {
    std::vector<HistogramBin> bins = seq.bins;
    std::sort(bins.begin(), bins.end(), [](const HistogramBin& x, const HistogramBin& y) {
      return x.length_tokens < y.length_tokens;
    });
    double total = 0;
    for (const auto& b : bins) total += b.count;
    for (const auto& b : bins) {
      if (b.count <= 0) continue;
      d.length_tokens.push_back(b.length_tokens);
      d.probability.push_back(b.count / total);
    }
  } else if (!seq.exact && seq.max_tokens > seq.mean_tokens) {
    // The widest uniform distribution with this mean that never exceeds the max.
    const double lo = std::max(1.0, 2.0 * seq.mean_tokens - seq.max_tokens);
    const double hi = 2.0 * seq.mean_tokens - lo;
    constexpr int kBins = 16;
    for (int i = 0; i < kBins; ++i) {
      d.length_tokens.push_back(lo + (hi - lo) * (i + 0.5) / kBins);
      d.probability.push_back(1.0 / kBins);
    }
    d.assumed = true;
  } else {
    return Fixed(seq.mean_tokens);
  }
  FillMoments(d);
  return d;
}

double InverseNormalCdf(double p) {
  // Newton's method from a logistic first guess; Phi is smooth and monotone.
  double z = std::log(p / (1 - p)) / 1.702;
  for (int i = 0; i < 40; ++i) {
    const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
    const double step = (Phi(z) - p) / std::max(pdf, 1e-300);
    z -= step;
    if (std::abs(step) < 1e-13) break;
  }
  return z;
}

double ExpectedMaxWork(const LengthDistribution& d, double a, double b, int64_t n, int64_t ranks) {
  const size_t k = d.length_tokens.size();
  if (k == 0 || n < 1) return 0;
  auto work = [&](double s) { return a * s + b * s * s; };
  const double nn = static_cast<double>(n);
  const double mean = a * d.moment[1] + b * d.moment[2];
  if (ranks <= 1 || k == 1) return nn * mean;
  const double dd = static_cast<double>(ranks);
  if (n == 1) {
    double expected = 0, previous = 0, cumulative = 0;
    for (size_t j = 0; j < k; ++j) {
      cumulative = std::min(1.0, cumulative + d.probability[j]);
      const double now = j + 1 == k ? 1.0 : std::pow(cumulative, dd);
      expected += work(d.length_tokens[j]) * (now - previous);
      previous = now;
    }
    return expected;
  }
  // Var[a S + b S^2] = a^2 Var S + 2ab Cov(S, S^2) + b^2 Var S^2.
  const double* m = d.moment;
  const double var = a * a * (m[2] - m[1] * m[1]) + 2 * a * b * (m[3] - m[1] * m[2]) +
                     b * b * (m[4] - m[2] * m[2]);
  const double z = InverseNormalCdf((dd - 0.375) / (dd + 0.25));
  const double approx = nn * mean + std::sqrt(nn * std::max(var, 0.0)) * z;
  return std::min(approx, nn * work(d.max_tokens));
}

}  // namespace strata

#include "strata/rl/response_lengths.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace strata {

std::string_view ResponseShapeName(ResponseShape s) {
  switch (s) {
    case ResponseShape::kCappedExponential:
      return "capped_exponential";
    case ResponseShape::kUniform:
      return "uniform";
    case ResponseShape::kFixed:
      return "fixed";
  }
  return "capped_exponential";
}

const std::vector<std::string>& ResponseShapeNames() {
  static const std::vector<std::string> names = {"capped_exponential", "uniform", "fixed"};
  return names;
}

std::optional<ResponseShape> ParseResponseShape(std::string_view name) {
  for (ResponseShape s :
       {ResponseShape::kCappedExponential, ResponseShape::kUniform, ResponseShape::kFixed}) {
    if (ResponseShapeName(s) == name) return s;
  }
  return std::nullopt;
}

double CappedExponentialRate(double mean_tokens, double max_tokens) {
  if (!(mean_tokens > 0) || !(max_tokens > 0) || mean_tokens >= max_tokens) return 0;
  // In x = r M: g(x) = (1 - e^-x) / x = mean / M = rho, g falling from 1 (x -> 0) to 0.
  // g(1 / rho) = rho (1 - e^(-1 / rho)) < rho, so the root lies in (0, 1 / rho]; bisection to
  // the double's resolution (g is smooth and monotone, no Newton overshoot to guard).
  const double rho = mean_tokens / max_tokens;
  auto g = [](double x) { return -std::expm1(-x) / x; };
  double lo = 0;
  double hi = 1 / rho;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (mid > 0 && g(mid) > rho ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi) / max_tokens;
}

double ResponseDistribution::Quantile(double p) const {
  p = std::clamp(p, 0.0, 1.0);
  switch (shape) {
    case ResponseShape::kCappedExponential:
      if (rate_per_token <= 0 || p >= 1) return max_tokens;
      return std::min(max_tokens, -std::log1p(-p) / rate_per_token);
    case ResponseShape::kUniform:
      return min_tokens + p * (max_tokens - min_tokens);
    case ResponseShape::kFixed:
      return mean_tokens;
  }
  return mean_tokens;
}

double ResponseDistribution::ClipFraction() const {
  switch (shape) {
    case ResponseShape::kCappedExponential:
      // P(X >= M) = e^(-r M); 1 at r = 0.
      return std::exp(-rate_per_token * max_tokens);
    case ResponseShape::kUniform:
      // Continuous below the cap: no point mass unless the interval is the cap itself.
      return min_tokens >= max_tokens ? 1 : 0;
    case ResponseShape::kFixed:
      return mean_tokens >= max_tokens ? 1 : 0;
  }
  return 0;
}

ResponseDistributionOrError MakeResponseDistribution(ResponseShape shape, double mean_tokens,
                                                     double max_tokens) {
  ResponseDistributionOrError out;
  if (!(mean_tokens > 0) || !(max_tokens > 0)) {
    out.error =
        fmt::format("a response distribution needs a positive mean and max, got {:g} and {:g}",
                    mean_tokens, max_tokens);
    return out;
  }
  if (mean_tokens > max_tokens) {
    out.error = fmt::format("the mean response ({:g} tokens) is longer than response_max ({:g})",
                            mean_tokens, max_tokens);
    return out;
  }
  ResponseDistribution d;
  d.shape = shape;
  d.mean_tokens = mean_tokens;
  d.max_tokens = max_tokens;
  if (shape == ResponseShape::kCappedExponential) {
    d.rate_per_token = CappedExponentialRate(mean_tokens, max_tokens);
  } else if (shape == ResponseShape::kUniform) {
    // Uniform on [a, M] has mean (a + M) / 2: a = 2 x mean - M, a length only when >= 0.
    d.min_tokens = 2 * mean_tokens - max_tokens;
    if (d.min_tokens < 0) {
      out.error = fmt::format(
          "a uniform distribution up to response_max ({:g} tokens) has a mean of at least "
          "{:g} (response_max / 2), got {:g}",
          max_tokens, max_tokens / 2, mean_tokens);
      return out;
    }
  }
  out.distribution = d;
  return out;
}

std::vector<double> QuantileLengths(const ResponseDistribution& d, int64_t n) {
  std::vector<double> lengths;
  lengths.reserve(static_cast<size_t>(std::max<int64_t>(0, n)));
  for (int64_t i = 0; i < n; ++i) {
    lengths.push_back(d.Quantile((static_cast<double>(i) + 0.5) / static_cast<double>(n)));
  }
  return lengths;
}

}  // namespace strata

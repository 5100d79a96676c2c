// The distribution of response lengths in one RL step: how many tokens each sample generates,
// given the mean the job states and the cap (response_max) every sample stops at. Generation
// waits for its longest samples, so its time depends on the spread, not on the mean alone
// (rollout.h, SimulateDecode). Three shapes, each deterministic: its quantiles at
// (i + 0.5) / n stand for n samples.
// Formulas and why the default is capped_exponential: docs/rl.md, "Time per RL step".
#ifndef STRATA_RL_RESPONSE_LENGTHS_H_
#define STRATA_RL_RESPONSE_LENGTHS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

enum class ResponseShape {
  /// min(Exp(rate), max): the rate solved so that the capped variable's mean is the job's mean.
  /// Samples that would run past the cap stop at it: a point mass there, the clip ratio verl
  /// logs as response_length/clip_ratio.
  kCappedExponential,
  /// Uniform from 2 x mean - max to max (the interval ending at the cap with the given mean).
  kUniform,
  /// Every sample exactly the mean.
  kFixed,
};

std::string_view ResponseShapeName(ResponseShape s);  // "capped_exponential", ...
std::optional<ResponseShape> ParseResponseShape(std::string_view name);
const std::vector<std::string>& ResponseShapeNames();

struct ResponseDistribution {
  ResponseShape shape = ResponseShape::kCappedExponential;
  double mean_tokens = 0;
  double max_tokens = 0;
  /// kCappedExponential: the rate per token (0: every sample at the cap, mean == max).
  double rate_per_token = 0;
  /// kUniform: the shortest response.
  double min_tokens = 0;

  /// The length at probability p in (0, 1): the smallest x with P(L <= x) >= p.
  double Quantile(double p) const;
  /// P(L == max): the share of samples the cap cuts off.
  double ClipFraction() const;
};

/// The rate r of an exponential whose minimum with `max_tokens` has mean `mean_tokens`:
/// E[min(X, M)] = (1 - exp(-r M)) / r. That mean falls from M (r -> 0) to 0 (r -> inf), so one
/// r solves it for 0 < mean < M; 0 when mean >= M (every sample at the cap).
double CappedExponentialRate(double mean_tokens, double max_tokens);

/// The distribution, or an error message when the shape cannot have this mean under this cap
/// (uniform: a mean below max / 2 would need negative lengths). The caller names the field.
struct ResponseDistributionOrError {
  std::optional<ResponseDistribution> distribution;
  std::string error;
};
ResponseDistributionOrError MakeResponseDistribution(ResponseShape shape, double mean_tokens,
                                                     double max_tokens);

/// n sample lengths: the quantiles at (i + 0.5) / n, i = 0 .. n - 1 (shortest first).
std::vector<double> QuantileLengths(const ResponseDistribution& d, int64_t n);

}  // namespace strata

#endif  // STRATA_RL_RESPONSE_LENGTHS_H_

// Summary figures of a validation set's relative errors (predicted / measured - 1), computed one
// way for every generated validation document: median and p90 of |error| (p90 by the nearest
// rank, the ceil(0.9 n)-th smallest), the largest, the signed median, and how many fall within
// 10% and 25%.
#ifndef STRATA_TESTS_SUPPORT_ERROR_STATS_H_
#define STRATA_TESTS_SUPPORT_ERROR_STATS_H_

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace strata::testing {

struct ErrorSummary {
  size_t n = 0;
  double median = 0, p90 = 0, max = 0, signed_median = 0;
  size_t within10 = 0, within25 = 0;
};

inline double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline ErrorSummary SummarizeErrors(const std::vector<double>& errors) {
  ErrorSummary s;
  s.n = errors.size();
  if (errors.empty()) return s;
  std::vector<double> abs;
  for (double e : errors) abs.push_back(std::fabs(e));
  s.median = MedianOf(abs);
  s.signed_median = MedianOf(errors);
  std::sort(abs.begin(), abs.end());
  s.p90 = abs[static_cast<size_t>(std::ceil(0.9 * static_cast<double>(s.n))) - 1];
  s.max = abs.back();
  for (double x : abs) {
    s.within10 += x <= 0.10;
    s.within25 += x <= 0.25;
  }
  return s;
}

/// One row of a generated validation document's summary table: "| label | n | median | p90 | max
/// | signed median | within 10% | within 25% |", in percent; "-" in each column of an empty set.
inline std::string SummaryTableRow(const std::string& label, const std::vector<double>& errors) {
  const ErrorSummary s = SummarizeErrors(errors);
  if (s.n == 0) return fmt::format("| {} | 0 | - | - | - | - | - | - |\n", label);
  return fmt::format("| {} | {} | {:.1f}% | {:.1f}% | {:.1f}% | {:+.1f}% | {} | {} |\n", label, s.n,
                     100 * s.median, 100 * s.p90, 100 * s.max, 100 * s.signed_median, s.within10,
                     s.within25);
}

/// How the README's "How far to trust a number" quotes a split validation set: "<n> <what>: held
/// out median M% (p90 P%), fit median M% (p90 P%)", n counting both sets.
inline std::string FitHeldOutQuote(const std::string& what, const std::vector<double>& fit,
                                   const std::vector<double>& held) {
  const ErrorSummary f = SummarizeErrors(fit), h = SummarizeErrors(held);
  return fmt::format(
      "{} {}: held out median {:.1f}% (p90 {:.1f}%), fit median {:.1f}% (p90 {:.1f}%)", f.n + h.n,
      what, 100 * h.median, 100 * h.p90, 100 * f.median, 100 * f.p90);
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_SUPPORT_ERROR_STATS_H_

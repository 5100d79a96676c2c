// The median of the last N values, with memory independent of how many were pushed. The
// median is recomputed lazily and at most every 16 pushes once the window is full, because a
// multi-GB log pushes millions of values and the median of a full window moves slowly.
#ifndef STRATA_LOGS_ROLLING_MEDIAN_H_
#define STRATA_LOGS_ROLLING_MEDIAN_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace strata {

class RollingMedian {
 public:
  static constexpr size_t kWindow = 32;

  void Push(double v) {
    if (!std::isfinite(v)) return;
    values_[next_] = v;
    next_ = (next_ + 1) % kWindow;
    if (size_ < kWindow) ++size_;
    ++since_;
  }
  size_t size() const { return size_; }

  /// The median of the window, or NaN when empty.
  double Median() {
    if (size_ == 0) return NAN;
    if (size_ < kWindow || since_ >= kRefreshEvery || std::isnan(cached_)) {
      cached_ = Compute(false, 0);
      mad_ = NAN;
      since_ = 0;
    }
    return cached_;
  }
  /// The median absolute deviation around Median() (computed only when asked for).
  double Mad() {
    Median();
    if (std::isnan(mad_)) mad_ = Compute(true, cached_);
    return mad_;
  }

 private:
  static constexpr size_t kRefreshEvery = kWindow / 2;

  // Median of the values, or of |value - center| when `deviations`.
  double Compute(bool deviations, double center) const {
    std::array<double, kWindow> copy;
    for (size_t i = 0; i < size_; ++i)
      copy[i] = !deviations ? values_[i] : std::fabs(values_[i] - center);
    auto mid = copy.begin() + static_cast<std::ptrdiff_t>(size_ / 2);
    std::nth_element(copy.begin(), mid, copy.begin() + static_cast<std::ptrdiff_t>(size_));
    double m = *mid;
    if (size_ % 2 == 0) m = (m + *std::max_element(copy.begin(), mid)) / 2;
    return m;
  }

  std::array<double, kWindow> values_{};
  size_t next_ = 0;
  size_t size_ = 0;
  size_t since_ = 0;
  double cached_ = NAN;
  double mad_ = NAN;
};

}  // namespace strata

#endif  // STRATA_LOGS_ROLLING_MEDIAN_H_

#include "strata/sim/pipeline_bubble.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata {
namespace {

/// k: the bubble in micro-batch times (F + B of the critical stage).
double BubbleMicroBatches(const ParallelLayout& l, const PassTimes& t) {
  const auto p = static_cast<double>(l.pp);
  const auto v = static_cast<double>(std::max<int64_t>(1, l.vpp));
  const double whole = t.forward + t.backward;
  if (l.pp <= 1) return 0;
  const double f = t.forward, b = t.backward, w = std::min(t.weight_gradient, t.backward);
  switch (l.schedule()) {
    case PipelineSchedule::kDefault:
    case PipelineSchedule::k1F1B:
    case PipelineSchedule::kGpipe:
      // GPipe's fill and drain idle as long as 1F1B's warm-up and cool-down (Huang et al.
      // 2019); it differs in memory, not in bubble.
      return p - 1;
    case PipelineSchedule::kInterleaved1F1B:
      return (p - 1) / v;
    case PipelineSchedule::kZeroBubble:
      // ZB-H1: (p - 1)(T_F + T_B - T_W), T_B the input gradient alone (Qi et al. 2023,
      // section 3.1); a looped schedule of v chunks divides each pass by v.
      return whole > 0 ? (p - 1) / v * std::max(0.0, f + (b - w) - w) / whole : 0;
    case PipelineSchedule::kZbv:
      // ZB-V: (p - 1)(T_F + T_B - 2 T_W) with the times of one chunk, half a stage (Qi et al.
      // 2023, section 6; zero when T_F = T_B = T_W).
      return whole > 0 ? (p - 1) * std::max(0.0, f + (b - w) - 2 * w) / 2 / whole : 0;
    case PipelineSchedule::kDualPipeV:
      // deepseek-ai/DualPipe README (3da1bbe): (PP/2 - 1)(F&B + B - 3W) for PP chunk stages on
      // PP/2 devices, B the whole backward, F&B an overlapped forward and backward: here
      // 2 PP chunks, so (p - 1) chunk-times; the overlap hides communication, not compute, so
      // F&B = F + B.
      return whole > 0 ? (p - 1) * std::max(0.0, f + 2 * b - 3 * w) / 2 / whole : 0;
  }
  return p - 1;
}

}  // namespace

double ScheduleBubbleFraction(const ParallelLayout& l, int64_t micro_batches,
                              const PassTimes& passes) {
  if (l.pp <= 1 || micro_batches < 1) return 0;
  return BubbleMicroBatches(l, passes) / static_cast<double>(micro_batches);
}

double OtherRanksMicroBatch(const std::vector<double>& t) {
  if (t.size() < 2) return 0;
  double sum = 0, slowest = t[0];
  for (const double x : t) {
    sum += x;
    slowest = std::max(slowest, x);
  }
  return (sum - slowest) / static_cast<double>(t.size() - 1);
}

std::string ScheduleBubbleFormula(const ParallelLayout& l, int64_t m, const PassTimes& t) {
  const double whole = t.forward + t.backward;
  const double f = whole > 0 ? t.forward / whole : 0, w = whole > 0 ? t.weight_gradient / whole : 0;
  const double b = 1 - f;
  switch (l.schedule()) {
    case PipelineSchedule::kDefault:
    case PipelineSchedule::k1F1B:
    case PipelineSchedule::kInterleaved1F1B:
      return fmt::format("(p - 1) / (m v) = ({} - 1) / ({} x {})", l.pp, m, l.vpp);
    case PipelineSchedule::kGpipe:
      return fmt::format("GPipe: (p - 1) / m = ({} - 1) / {}", l.pp, m);
    case PipelineSchedule::kZeroBubble:
      return fmt::format(
          "ZB-H1: (p - 1) / (m v) x (F + B - 2 W) / (F + B) = ({} - 1) / ({} x {}) "
          "x ({:.3f} + {:.3f} - 2 x {:.3f})",
          l.pp, m, l.vpp, f, b, w);
    case PipelineSchedule::kZbv:
      return fmt::format(
          "ZB-V: (p - 1) / m x (F + B - 3 W) / 2 / (F + B) = ({} - 1) / {} x "
          "({:.3f} + {:.3f} - 3 x {:.3f}) / 2",
          l.pp, m, f, b, w);
    case PipelineSchedule::kDualPipeV:
      return fmt::format(
          "DualPipeV: (p - 1) / m x (F + 2 B - 3 W) / 2 / (F + B) = ({} - 1) / {} x "
          "({:.3f} + 2 x {:.3f} - 3 x {:.3f}) / 2",
          l.pp, m, f, b, w);
  }
  return "";
}

}  // namespace strata

#include "strata/report/trace_figure.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "strata/report/html_table.h"
#include "strata/report/svg.h"

namespace strata {
namespace {

// One rank's four disjoint parts, in seconds: busy = compute + exposed NCCL + exposed other
// communication, span = busy + idle.
struct RankBar {
  std::string name;  // "rank 3" or the file's name when the trace does not say
  double span_s = 0;
  std::array<double, 4> parts_s{};  // compute, NCCL exposed, other comm exposed, idle
};

constexpr std::array<const char*, 4> kPartNames = {
    "computing (overlapped communication included)", "NCCL not overlapped",
    "other communication not overlapped", "idle (no GPU work: host-bound)"};
constexpr std::array<const char*, 4> kPartKeys = {"compute", "nccl_exposed", "comm_other_exposed",
                                                  "idle"};
constexpr std::array<const char*, 4> kPartColours = {"#0072B2", "#D55E00", "#E69F00", "#BBBBBB"};

double S(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

void AddFigures(const profile::Figures& f, double weight, RankBar& bar) {
  const int64_t compute = f.busy_ns - f.nccl_exposed_ns - f.comm_other_exposed_ns;
  bar.span_s += weight * S(f.span_ns);
  bar.parts_s[0] += weight * S(compute);
  bar.parts_s[1] += weight * S(f.nccl_exposed_ns);
  bar.parts_s[2] += weight * S(f.comm_other_exposed_ns);
  bar.parts_s[3] += weight * S(f.idle_ns());
}

// The mean over the rank's steps, or its whole trace when it marks none.
RankBar BarOf(const profile::RankProfile& r) {
  RankBar bar;
  bar.name = r.rank ? fmt::format("rank {}", *r.rank) : r.file;
  if (r.steps.empty()) {
    AddFigures(r.whole_trace, 1.0, bar);
  } else {
    const double weight = 1.0 / static_cast<double>(r.steps.size());
    for (const profile::StepProfile& s : r.steps) AddFigures(s.figures, weight, bar);
  }
  return bar;
}

std::string Fmt(double s) { return fmt::format("{:.4f}", s); }

}  // namespace

ReportFigure TraceFigure(const profile::ProfileReport& report) {
  std::vector<RankBar> bars;
  bool per_step = true;
  for (const profile::RankProfile& r : report.ranks) {
    if (r.whole_trace.gpu_events == 0) continue;
    per_step = per_step && !r.steps.empty();
    bars.push_back(BarOf(r));
  }
  std::string aggregated;
  if (bars.size() > kMaxTraceBars) {
    std::vector<RankBar> by_span = bars;
    std::stable_sort(by_span.begin(), by_span.end(),
                     [](const RankBar& a, const RankBar& b) { return a.span_s < b.span_s; });
    RankBar fastest = by_span.front(), median = by_span[by_span.size() / 2],
            slowest = by_span.back();
    fastest.name = "fastest: " + fastest.name;
    median.name = "median: " + median.name;
    slowest.name = "slowest: " + slowest.name;
    aggregated = fmt::format(
        " {} ranks: the fastest, median and slowest by span are drawn (at most {} bars).",
        bars.size(), kMaxTraceBars);
    bars = {fastest, median, slowest};
  }
  double longest = 0;
  for (const RankBar& b : bars) longest = std::max(longest, b.span_s);
  constexpr double kLeft = 170, kWidth = 720, kBarH = 18, kGap = 8, kTop = 28;
  const double plot_w = kWidth - kLeft - 20;
  const double height = kTop + static_cast<double>(bars.size()) * (kBarH + kGap) + 50;
  Svg svg(kWidth, height, "Measured GPU time per rank");
  svg.Text(kLeft, 16,
           fmt::format("{} per rank (s), from the profiler traces",
                       per_step ? "mean step" : "whole trace"),
           "start", 11);
  HtmlTable table({"rank", "span (s)", "computing (s)", "NCCL not overlapped (s)",
                   "other comm not overlapped (s)", "idle (s)"});
  for (size_t i = 0; i < bars.size(); ++i) {
    const RankBar& b = bars[i];
    const double y = kTop + static_cast<double>(i) * (kBarH + kGap);
    svg.Text(kLeft - 6, y + kBarH - 5, b.name, "end", 10);
    double x = kLeft;
    std::vector<HtmlTable::Cell> row = {{b.name, ""}, {Fmt(b.span_s), ""}};
    for (size_t p = 0; p < b.parts_s.size(); ++p) {
      const std::string key = fmt::format("trace/{}/{}", b.name, kPartKeys[p]);
      const double w = longest > 0 ? plot_w * b.parts_s[p] / longest : 0;
      svg.Rect(x, y, w, kBarH, kPartColours[p],
               fmt::format("{}: {} {} s", b.name, kPartNames[p], Fmt(b.parts_s[p])),
               {key, Fmt(b.parts_s[p])});
      x += w;
      row.push_back({Fmt(b.parts_s[p]), key});
    }
    table.AddRow(std::move(row));
  }
  const double legend_y = kTop + static_cast<double>(bars.size()) * (kBarH + kGap) + 14;
  for (size_t p = 0; p < kPartNames.size(); ++p) {
    const double x = kLeft + static_cast<double>(p % 2) * 300;
    const double y = legend_y + static_cast<double>(p / 2) * 18;
    svg.Rect(x, y - 9, 10, 10, kPartColours[p]);
    svg.Text(x + 14, y, kPartNames[p], "start", 10);
  }
  if (bars.empty()) svg.Text(kLeft, kTop + 12, "no GPU event in the traces", "start", 11);
  return {"trace", "Measured: where each rank's GPU time went",
          fmt::format("From {} profiler trace{} (strata profile reads them the same way). The four "
                      "parts do not overlap and add up to the span: a kernel overlapped by "
                      "communication counts as computing.{}",
                      report.ranks.size(), report.ranks.size() == 1 ? "" : "s", aggregated),
          svg.Render(), table.Render()};
}

}  // namespace strata

#include "strata/report/log_figure.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <optional>

#include "strata/logs/log_analyzer.h"
#include "strata/logs/log_reader.h"
#include "strata/report/html_table.h"
#include "strata/report/svg.h"

namespace strata {

void LogSeries::Add(const StepRecord& r) {
  ++steps_;
  if (points_.empty() || points_.back().steps >= per_point_) {
    if (points_.size() >= kMaxLogPoints) Halve();
    if (points_.empty() || points_.back().steps >= per_point_) {
      points_.push_back(LogPoint{r.step, r.step, 0, 0, 0, 0, 0, 0, 0});
    }
  }
  LogPoint& p = points_.back();
  p.last_step = r.step;
  ++p.steps;
  if (r.loss) p.loss_sum += *r.loss, ++p.loss_n;
  if (r.step_time_s) p.step_time_sum += *r.step_time_s, ++p.step_time_n;
  // The rate the log prints, the first kind seen fixing the panel's unit: torchtitan's and
  // verl's tokens/s per GPU, else Megatron's TFLOP/s per GPU, else the HF Trainer's samples/s.
  const std::array<std::pair<const char*, const std::optional<double>*>, 3> rates = {
      {{"tokens/s per GPU", &r.printed_tokens_per_s_per_gpu},
       {"TFLOP/s per GPU (printed)", &r.printed_tflops_per_gpu},
       {"samples/s", &r.samples_per_s}}};
  for (const auto& [unit, value] : rates) {
    if (!value->has_value()) continue;
    if (throughput_unit_.empty()) throughput_unit_ = unit;
    if (throughput_unit_ == unit) p.throughput_sum += **value, ++p.throughput_n;
    break;
  }
}

void LogSeries::Halve() {
  std::vector<LogPoint> merged;
  merged.reserve(points_.size() / 2 + 1);
  for (size_t i = 0; i < points_.size(); i += 2) {
    LogPoint a = points_[i];
    if (i + 1 < points_.size()) {
      const LogPoint& b = points_[i + 1];
      a.last_step = b.last_step;
      a.steps += b.steps;
      a.loss_sum += b.loss_sum, a.loss_n += b.loss_n;
      a.step_time_sum += b.step_time_sum, a.step_time_n += b.step_time_n;
      a.throughput_sum += b.throughput_sum, a.throughput_n += b.throughput_n;
    }
    merged.push_back(a);
  }
  points_ = std::move(merged);
  per_point_ *= 2;
}

namespace {

struct Panel {
  std::string name;  // "loss", "step time (s)", "tokens/s per GPU"
  std::string key;   // "loss", "step_time", "throughput"
  std::function<std::optional<double>(const LogPoint&)> value;
};

std::string Num(double v) { return fmt::format("{:.4g}", v); }

}  // namespace

ReportFigure LogFigure(const std::string& file, const LogSeries& series,
                       const std::vector<Anomaly>& anomalies, int64_t anomalies_total) {
  constexpr double kWidth = 720, kLeft = 70, kRight = 20, kPanel = 110, kGap = 26;
  const std::vector<LogPoint>& pts = series.points();
  std::vector<Panel> panels = {
      {"loss", "loss",
       [](const LogPoint& p) -> std::optional<double> {
         if (p.loss_n == 0) return std::nullopt;
         return p.loss_sum / static_cast<double>(p.loss_n);
       }},
      {"step time (s)", "step_time",
       [](const LogPoint& p) -> std::optional<double> {
         if (p.step_time_n == 0) return std::nullopt;
         return p.step_time_sum / static_cast<double>(p.step_time_n);
       }},
      {series.throughput_unit().empty() ? "throughput" : series.throughput_unit(), "throughput",
       [](const LogPoint& p) -> std::optional<double> {
         if (p.throughput_n == 0) return std::nullopt;
         return p.throughput_sum / static_cast<double>(p.throughput_n);
       }},
  };
  const double height = 20 + 3 * (kPanel + kGap);
  Svg svg(kWidth, height, "Training log: loss, step time and throughput per step");
  const int64_t first = pts.empty() ? 0 : pts.front().first_step;
  const int64_t last = pts.empty() ? 1 : std::max(pts.back().last_step, first + 1);
  auto x_of = [&](double step) {
    return kLeft + (kWidth - kLeft - kRight) * (step - static_cast<double>(first)) /
                       static_cast<double>(last - first);
  };
  HtmlTable table({"curve", "first", "last", "lowest", "highest"});
  for (size_t k = 0; k < panels.size(); ++k) {
    const Panel& panel = panels[k];
    const double top = 20 + static_cast<double>(k) * (kPanel + kGap);
    const double bottom = top + kPanel;
    std::vector<std::pair<double, double>> xy;
    double lo = 1e300, hi = -1e300;
    for (const LogPoint& p : pts) {
      const auto v = panel.value(p);
      if (!v) continue;
      xy.emplace_back(0.5 * static_cast<double>(p.first_step + p.last_step), *v);
      lo = std::min(lo, *v);
      hi = std::max(hi, *v);
    }
    svg.Text(kLeft, top - 6, panel.name, "start", 11);
    svg.Line(kLeft, bottom, kWidth - kRight, bottom, "#999999");
    svg.Line(kLeft, top, kLeft, bottom, "#999999");
    if (xy.empty()) {
      svg.Text(kLeft + 10, top + kPanel / 2, "not in this log", "start", 10);
      table.AddRow({{panel.name, ""}, {"-", ""}, {"-", ""}, {"-", ""}, {"-", ""}});
      continue;
    }
    const double span = hi > lo ? hi - lo : 1;
    auto y_of = [&](double v) { return bottom - kPanel * (v - lo) / span; };
    std::vector<double> line;
    for (const auto& [x, v] : xy) {
      line.push_back(x_of(x));
      line.push_back(y_of(v));
    }
    svg.Polyline(line, "#0072B2");
    const std::string key = "log/" + panel.key;
    svg.Text(kLeft - 6, y_of(lo) + 3, Num(lo), "end", 9, {key + "/lowest", Num(lo)});
    svg.Text(kLeft - 6, y_of(hi) + 3, Num(hi), "end", 9, {key + "/highest", Num(hi)});
    svg.Text(x_of(xy.front().first) + 4, y_of(xy.front().second) - 4, Num(xy.front().second),
             "start", 9, {key + "/first", Num(xy.front().second)});
    svg.Text(x_of(xy.back().first) - 4, y_of(xy.back().second) - 4, Num(xy.back().second), "end", 9,
             {key + "/last", Num(xy.back().second)});
    table.AddRow({{panel.name, ""},
                  {Num(xy.front().second), key + "/first"},
                  {Num(xy.back().second), key + "/last"},
                  {Num(lo), key + "/lowest"},
                  {Num(hi), key + "/highest"}});
    // Anomalies: a red tick at their step on every panel.
    size_t drawn = 0;
    for (const Anomaly& a : anomalies) {
      if (drawn++ >= 200) break;
      const double x = x_of(static_cast<double>(std::clamp(a.step, first, last)));
      svg.Rect(x - 1, top, 2, kPanel, "#D55E00", fmt::format("line {}: {}", a.line, a.message));
    }
  }
  svg.Text(kLeft, height - 4, fmt::format("step {} to {}", first, last), "start", 10);
  const std::string anomaly_count = fmt::format("{}", anomalies_total);
  svg.Text(kWidth - kRight, height - 4, fmt::format("{} anomalies", anomaly_count), "end", 10,
           {"log/anomalies", anomaly_count});
  table.AddRow({{"anomalies (marked in red)", ""},
                {anomaly_count, "log/anomalies"},
                {"", ""},
                {"", ""},
                {"", ""}});
  return {"log", "Training log: " + file,
          fmt::format("{} steps; each point is the mean of up to {} consecutive steps. Red marks: "
                      "the anomalies strata logs finds (stalls, throughput drops, loss spikes), "
                      "at their steps.",
                      series.steps(), pts.empty() ? 0 : pts.front().steps),
          svg.Render(), table.Render()};
}

Result<ReportFigure> ReadLogFigure(const std::string& path) {
  LogSeries series;
  std::optional<int> rank;
  LogAnalyzer analyzer({[&](int r, const StepRecord& step) {
                          if (!rank) rank = r;
                          if (r == *rank) series.Add(step);
                        },
                        {}});
  STRATA_ASSIGN_OR_RETURN(ReadStats stats, ReadLogFile(path, analyzer));
  analyzer.Finish();
  if (series.steps() == 0) {
    return InvalidInput(fmt::format("{}: {} lines read, no training step recognised", path,
                                    analyzer.Summary().lines))
        .WithHint("strata logs FILE says which formats it reads");
  }
  const LogSummary& summary = analyzer.Summary();
  (void)stats;
  const size_t slash = path.find_last_of('/');
  return LogFigure(slash == std::string::npos ? path : path.substr(slash + 1), series,
                   summary.anomalies, summary.anomalies_total);
}

}  // namespace strata

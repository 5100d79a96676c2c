#include "strata/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>

#include "strata/report/html_table.h"
#include "strata/report/svg.h"

namespace strata {
namespace {

// Colour-blind-safe palette (Okabe-Ito), cycled.
constexpr std::array<std::string_view, 8> kPalette = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                      "#56B4E9", "#D55E00", "#F0E442", "#999999"};
std::string_view Colour(size_t i) { return kPalette[i % kPalette.size()]; }

std::string Gb(Bytes b) { return fmt::format("{:.2f}", b.value() / 1e9); }
std::string S3(Seconds s) { return fmt::format("{:.3f}", s.s()); }
std::string Ms1(Seconds s) { return fmt::format("{:.1f}", 1e3 * s.s()); }

}  // namespace

ReportFigure MemoryFigure(const MemoryLedger& ledger) {
  constexpr double kWidth = 640, kHeight = 300, kLeft = 60, kBottom = 250, kTop = 20;
  Bytes top = std::max(ledger.capacity, ledger.band_high);
  for (const PhaseMemory& p : ledger.phases) top = std::max(top, p.bytes);
  const double scale = (kBottom - kTop) / (1.05 * top.value());
  auto y_of = [&](Bytes b) { return kBottom - b.value() * scale; };
  Svg svg(kWidth, kHeight, "Memory per GPU by phase against the card");
  // The axis in GB.
  const double step_gb = top.value() / 1e9 > 100 ? 20 : 10;
  for (double gb = 0; gb * 1e9 <= 1.05 * top.value(); gb += step_gb) {
    const double y = y_of(Bytes::GB(gb));
    svg.Line(kLeft - 4, y, kWidth - 10, y, "#dddddd");
    svg.Text(kLeft - 8, y + 4, fmt::format("{:.0f}", gb), "end", 10);
  }
  svg.Text(12, kTop + 6, "GB", "start", 10);
  const Bytes base = ledger.PhaseOf(Phase::kAfterInit).bytes;
  const double slot = (kWidth - kLeft - 20) / static_cast<double>(ledger.phases.size());
  HtmlTable table({"phase", "peak (GB)", "of card (%)"});
  for (size_t i = 0; i < ledger.phases.size(); ++i) {
    const PhaseMemory& p = ledger.phases[i];
    const double x = kLeft + slot * static_cast<double>(i) + slot * 0.2;
    const double w = slot * 0.6;
    const Bytes below = std::min(base, p.bytes);
    const std::string key = fmt::format("memory/{}", PhaseName(p.phase));
    svg.Rect(x, y_of(below), w, below.value() * scale, Colour(0),
             fmt::format("held since initialisation: {} GB", Gb(below)));
    if (p.bytes > below) {
      svg.Rect(x, y_of(p.bytes), w, (p.bytes - below).value() * scale, Colour(1),
               fmt::format("added in this phase: {} GB", Gb(p.bytes - below)));
    }
    svg.Text(x + w / 2, y_of(p.bytes) - 4, Gb(p.bytes), "middle", 10, {key, Gb(p.bytes)});
    svg.Text(x + w / 2, kBottom + 14, std::string(PhaseDescription(p.phase)), "middle", 9);
    table.AddRow({{std::string(PhaseDescription(p.phase)), ""},
                  {Gb(p.bytes), key},
                  {fmt::format("{:.1f}", 100 * (p.bytes / ledger.capacity)), ""}});
  }
  const double cap_y = y_of(ledger.capacity);
  svg.Line(kLeft, cap_y, kWidth - 10, cap_y, "#c00000", true);
  svg.Text(kWidth - 12, cap_y - 4, fmt::format("card {} GB", Gb(ledger.capacity)), "end", 10,
           {"memory/capacity", Gb(ledger.capacity)});
  // The model's error band around the peak: where a measured peak would lie.
  const double band_x = kWidth - 16;
  svg.Line(band_x, y_of(ledger.band_low), band_x, y_of(ledger.band_high), "#555555");
  svg.Text(band_x - 4, y_of(ledger.band_high) - 4,
           fmt::format("error band to {} GB", Gb(ledger.band_high)), "end", 9,
           {"memory/band_high", Gb(ledger.band_high)});
  table.AddRow({{"card", ""}, {Gb(ledger.capacity), "memory/capacity"}, {"100.0", ""}});
  table.AddRow({{"top of the model's error band", ""},
                {Gb(ledger.band_high), "memory/band_high"},
                {fmt::format("{:.1f}", 100 * (ledger.band_high / ledger.capacity)), ""}});
  return {"memory", "Memory per GPU, phase by phase",
          fmt::format("Blue: what is held from initialisation on (weights, gradients, master "
                      "weights, CUDA context, NCCL); orange: what the phase adds (activations, "
                      "working sets, the Adam moments). Dashed red: the card. Verdict: {}.",
                      MemoryVerdictText(ledger.verdict)),
          svg.Render(), table.Render()};
}

ReportFigure StepFigure(const StepResult& r) {
  constexpr double kWidth = 720, kLeft = 10, kRight = 10;
  // Row 1: one micro batch, pass by pass and kernel by kernel, then its exposed communication.
  struct Segment {
    std::string key;
    std::string label;
    Seconds time;
    size_t colour;
  };
  std::vector<Segment> timeline;
  const std::array<std::pair<const char*, Seconds KernelTimes::*>, 7> kinds = {{
      {"dense GEMMs", &KernelTimes::dense_gemm},
      {"routed-expert GEMMs", &KernelTimes::expert_gemm},
      {"core attention", &KernelTimes::attention},
      {"Gated DeltaNet", &KernelTimes::gated_deltanet},
      {"memory-bound ops", &KernelTimes::memory_bound},
      {"output layer + loss", &KernelTimes::logits_and_loss},
      {"vision tower", &KernelTimes::vision},
  }};
  const std::array<std::pair<const char*, const KernelTimes*>, 3> passes = {
      {{"forward", &r.forward}, {"recompute", &r.recompute}, {"backward", &r.backward}}};
  for (const auto& [pass, times] : passes) {
    for (size_t k = 0; k < kinds.size(); ++k) {
      const Seconds t = times->*(kinds[k].second);
      if (t.s() <= 0) continue;
      timeline.push_back({fmt::format("microbatch/{}/{}", pass, kinds[k].first),
                          fmt::format("{} {}", pass, kinds[k].first), t, k});
    }
  }
  const Seconds compute = r.forward.total() + r.backward.total() + r.recompute.total();
  const Seconds comm = r.micro_batch - compute;
  if (comm.s() > 0) {
    timeline.push_back({"microbatch/exposed communication", "exposed communication", comm, 6});
  }
  Seconds mb_total;
  for (const auto& s : timeline) mb_total = mb_total + s.time;

  // Row 2: the step's exposed parts.
  std::vector<Segment> parts;
  for (size_t i = 0; i < kStepPartCount; ++i) {
    const StepPartTime& p = r.parts[i];
    if (p.exposed.s() <= 0) continue;
    const std::string name(StepPartName(static_cast<StepPart>(i)));
    parts.push_back({"step/" + name, name, p.exposed, i});
  }

  // Layout: the micro batch row with its pass labels and a legend of kernel kinds, then the
  // step row with a legend of its parts (two columns: the names are long).
  const double parts_legend_rows = std::ceil(static_cast<double>(parts.size()) / 2.0);
  const double step_top = 110;
  const double height = step_top + 50 + 15 * parts_legend_rows;
  Svg svg(kWidth, height, "One micro batch and the whole step, by component");
  const double span = kWidth - kLeft - kRight;
  auto draw_row = [&](const std::vector<Segment>& segs, Seconds total, double y, bool in_ms) {
    double x = kLeft;
    std::string pass;
    for (const auto& s : segs) {
      const double w = span * (s.time / total);
      const std::string value = in_ms ? Ms1(s.time) : S3(s.time);
      // The micro batch's passes: a tick and the pass's name where each begins.
      const std::string this_pass = s.label.substr(0, s.label.find(' '));
      if (in_ms && this_pass != pass) {
        pass = this_pass;
        svg.Line(x, y - 12, x, y + 26, "#333333");
        svg.Text(x + 2, y - 3, pass == "exposed" ? "comm" : pass, "start", 9);
      }
      svg.Rect(x, y, std::max(w, 0.5), 26, Colour(s.colour),
               fmt::format("{}: {} {}", s.label, value, in_ms ? "ms" : "s"), {s.key, value});
      x += w;
    }
  };
  svg.Text(kLeft, 14, fmt::format("one micro batch on the most loaded rank: {} ms", Ms1(mb_total)),
           "start", 11);
  draw_row(timeline, mb_total, 34, true);
  for (size_t k = 0; k <= kinds.size(); ++k) {
    const double x = kLeft + static_cast<double>(k % 4) * (span / 4);
    const double y = 78 + 14 * static_cast<double>(k / 4);
    svg.Rect(x, y - 9, 10, 10, Colour(k < kinds.size() ? k : 6));
    svg.Text(x + 14, y, k < kinds.size() ? kinds[k].first : "exposed communication", "start", 9);
  }
  svg.Text(kLeft, step_top, fmt::format("the step: {} s (exposed parts)", S3(r.step)), "start", 11);
  draw_row(parts, r.step, step_top + 6, false);
  for (size_t i = 0; i < parts.size(); ++i) {
    const double x = kLeft + static_cast<double>(i % 2) * (span / 2);
    const double y = step_top + 48 + 15 * static_cast<double>(i / 2);
    svg.Rect(x, y - 9, 10, 10, Colour(parts[i].colour));
    svg.Text(x + 14, y, fmt::format("{}: {} s", parts[i].label, S3(parts[i].time)), "start", 10);
  }
  HtmlTable table({"part", "time", "share (%)"});
  for (const auto& s : timeline) {
    table.AddRow({{"micro batch: " + s.label + " (ms)", ""},
                  {Ms1(s.time), s.key},
                  {fmt::format("{:.1f}", 100 * (s.time / mb_total)), ""}});
  }
  for (const auto& s : parts) {
    table.AddRow({{"step: " + s.label + " (s)", ""},
                  {S3(s.time), s.key},
                  {fmt::format("{:.1f}", 100 * (s.time / r.step)), ""}});
  }
  return {"step", "Where the step time goes",
          fmt::format("Top: one micro batch (ms), kernel by kernel in each pass, then the "
                      "communication it cannot hide. Bottom: the step ({} s predicted; "
                      "{:.1f} tokens/s/GPU, MFU {:.2f}% of the dense bf16 peak), by exposed part.",
                      S3(r.step), r.tokens_per_s_per_gpu, 100 * r.mfu),
          svg.Render(), table.Render()};
}

ReportFigure MapFigure(const BandwidthMap& map, const LayoutSection& traffic) {
  // Per level and group: the traffic's time per step on the link alone.
  std::map<std::pair<std::string, std::string>, Seconds> per_level;
  for (const PricedTraffic& t : traffic.traffic) {
    per_level[{t.cost.level, ToString(t.item.group)}] =
        per_level[{t.cost.level, ToString(t.item.group)}] + t.time_per_step;
  }
  constexpr double kWidth = 720, kRow = 34, kBarLeft = 190, kBarMax = 260;
  Svg svg(kWidth, 20 + kRow * static_cast<double>(map.levels.size()),
          "Bandwidth map: each level's bandwidth per GPU and the traffic on it");
  double top_rate = 1;
  for (const MapLevel& l : map.levels) top_rate = std::max(top_rate, l.per_gpu.gb_per_s());
  HtmlTable table({"level", "per GPU (GB/s)", "group", "traffic per step (ms)"});
  for (size_t i = 0; i < map.levels.size(); ++i) {
    const MapLevel& l = map.levels[i];
    const double y = 10 + kRow * static_cast<double>(i);
    // Log scale: each level is about an order of magnitude below the one above.
    const double rate = std::max(l.per_gpu.gb_per_s(), 0.01);
    const double w = kBarMax * std::log10(1 + 100 * rate / top_rate) / std::log10(101);
    const std::string rate_text = fmt::format("{:.3g}", l.per_gpu.gb_per_s());
    svg.Text(kBarLeft - 6, y + 16, l.name, "end", 10);
    svg.Rect(kBarLeft, y + 4, std::max(w, 1.0), 18, Colour(i), "",
             {"map/" + l.name + "/bandwidth", rate_text});
    svg.Text(kBarLeft + std::max(w, 1.0) + 4, y + 17, rate_text + " GB/s", "start", 10);
    table.AddRow({{l.name, ""}, {rate_text, "map/" + l.name + "/bandwidth"}, {"", ""}, {"", ""}});
    double x = kBarLeft + kBarMax + 70;
    for (const auto& [where, time] : per_level) {
      if (where.first != l.name) continue;
      const std::string key = "map/" + l.name + "/" + where.second;
      const std::string text = fmt::format("{}: {} ms", where.second, Ms1(time));
      svg.Text(x, y + 17, text, "start", 10, {key, Ms1(time)});
      x += 8 + 6.2 * static_cast<double>(text.size());
      table.AddRow({{"", ""}, {"", ""}, {where.second, ""}, {Ms1(time), key}});
    }
  }
  return {"map", "Bandwidth map and where the traffic runs",
          fmt::format("Bars: bandwidth per GPU on a log scale (each level is roughly an order of "
                      "magnitude below the one above). Beside each level: the time per step the "
                      "layout's groups spend on it (rank order {}), before any overlap.",
                      traffic.rank_order),
          svg.Render(), table.Render()};
}

ReportFigure PlanFigure(const plan::PlanResult& plan) {
  constexpr double kWidth = 640, kHeight = 320, kLeft = 60, kBottom = 270, kTop = 20, kRight = 20;
  std::vector<const plan::RankedLayout*> points;
  for (const auto& l : plan.top) points.push_back(&l);
  points.push_back(&plan.current);
  double x_max = 0, y_max = 0, y_min = 1e300;
  for (const auto* p : points) {
    x_max = std::max({x_max, p->peak.value() / 1e9, p->capacity.value() / 1e9});
    y_max = std::max(y_max, p->step.step.s());
    y_min = std::min(y_min, p->step.step.s());
  }
  x_max *= 1.08;
  const double y_lo = 0, y_hi = y_max * 1.1;
  auto x_of = [&](double gb) { return kLeft + (kWidth - kLeft - kRight) * gb / x_max; };
  auto y_of = [&](double s) { return kBottom - (kBottom - kTop) * (s - y_lo) / (y_hi - y_lo); };
  Svg svg(kWidth, kHeight, "Planner: step time against peak memory per layout");
  svg.Line(kLeft, kBottom, kWidth - kRight, kBottom, "#333333");
  svg.Line(kLeft, kTop, kLeft, kBottom, "#333333");
  svg.Text((kLeft + kWidth) / 2, kBottom + 30, "peak memory per GPU (GB)", "middle", 10);
  svg.Text(14, kTop - 6, "step (s)", "start", 10);
  for (int i = 0; i <= 4; ++i) {
    const double gb = x_max * i / 4, s = y_hi * i / 4;
    svg.Text(x_of(gb), kBottom + 14, fmt::format("{:.0f}", gb), "middle", 9);
    svg.Text(kLeft - 6, y_of(s) + 3, fmt::format("{:.3g}", s), "end", 9);
  }
  if (!points.empty()) {
    const double cap = x_of(points.front()->capacity.value() / 1e9);
    svg.Line(cap, kTop, cap, kBottom, "#c00000", true);
    svg.Text(cap - 4, kTop + 10, "card", "end", 9);
  }
  HtmlTable table({"", "layout", "step (s)", "peak (GB)", "memory"});
  auto value = [](const plan::RankedLayout& l) {
    return fmt::format("{:.3f} s at {} GB", l.step.step.s(), Gb(l.peak));
  };
  for (size_t i = 0; i < plan.top.size(); ++i) {
    const auto& l = plan.top[i];
    const std::string name = plan::LayoutName(l.candidate);
    const std::string key = "plan/" + name;
    svg.Circle(x_of(l.peak.value() / 1e9), y_of(l.step.step.s()), i == 0 ? 6 : 3.5,
               i == 0 ? "#009E73" : "#0072B2", name, {key, value(l)});
    table.AddRow({{i == 0 ? "winner" : fmt::format("{}", i + 1), ""},
                  {name, ""},
                  {value(l), key},
                  {Gb(l.peak), ""},
                  {std::string(MemoryVerdictName(l.verdict)), ""}});
  }
  const auto& c = plan.current;
  const std::string cname = plan::LayoutName(c.candidate);
  svg.Circle(x_of(c.peak.value() / 1e9), y_of(c.step.step.s()), 5, "#D55E00",
             "the job's own layout: " + cname, {"plan/current", value(c)});
  svg.Text(x_of(c.peak.value() / 1e9) + 8, y_of(c.step.step.s()) + 3, "the job's layout", "start",
           9);
  if (!plan.top.empty()) {
    const auto& w = plan.top.front();
    svg.Text(x_of(w.peak.value() / 1e9) + 8, y_of(w.step.step.s()) - 6, "winner", "start", 9);
  }
  table.AddRow({{"the job's own", ""},
                {cname, ""},
                {value(c), "plan/current"},
                {Gb(c.peak), ""},
                {std::string(MemoryVerdictName(c.verdict)), ""}});
  return {"plan", "Layouts the planner ranks",
          "Each dot is a layout that fits the card, at its predicted step time and peak memory; "
          "green: the winner (fastest that fits), orange: the job's own layout, dashed red: the "
          "card.",
          svg.Render(), table.Render()};
}

std::string RenderHtmlReport(const Evaluation& e, const std::vector<ReportFigure>& figures) {
  const ResolvedJob& job = e.job;
  std::string out = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>)" + XmlEscape("strata report: " + job.model.name) +
                    R"(</title>
<style>
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
section { page-break-inside: avoid; }
.figure-row { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.caption { color: #444; font-size: 0.9em; max-width: 60em; }
.meta { color: #555; }
</style>
</head>
<body>
)";
  out += fmt::format("<h1>strata report: {} on {} x {}</h1>\n", XmlEscape(job.model.name),
                     job.world(), XmlEscape(job.gpu().name));
  out += fmt::format(
      "<p class=\"meta\">layout {}; {}; predicted step {} s; memory peak {} GB of {} GB "
      "({}).</p>\n",
      XmlEscape(LayoutHeader(job.layout(), job.model.HasLayers(FfnKind::kMoe))),
      XmlEscape(job.spec.file.empty() ? std::string("job built from the command line")
                                      : "from " + job.spec.file),
      S3(e.step->step), Gb(e.ledger.Peak()), Gb(e.ledger.capacity),
      XmlEscape(std::string(MemoryVerdictText(e.ledger.verdict))));
  for (const ReportFigure& f : figures) {
    out += fmt::format(
        "<section id=\"{}\">\n<h2>{}</h2>\n<p class=\"caption\">{}</p>\n<div "
        "class=\"figure-row\">\n<figure data-figure=\"{}\">\n{}</figure>\n<div>\n{}</div>\n</div>\n"
        "</section>\n",
        XmlEscape(f.id), XmlEscape(f.heading), XmlEscape(f.caption), XmlEscape(f.id), f.svg,
        f.table_html);
  }
  out +=
      "<p class=\"meta\">Every number above is in a table beside its figure; "
      "<code>strata &lt;command&gt; --explain</code> prints the formula behind it.</p>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace strata

#include "strata/report/compare_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "strata/core/strings.h"
#include "strata/core/table.h"
#include "strata/hw/interconnects.h"
#include "strata/memory/memory_constants.h"
#include "strata/report/step_explain.h"

namespace strata {
namespace {

constexpr double kSecondsPerDay = 86'400;
// Differences smaller than this (s per step) are not causes worth naming.
constexpr double kCauseFloorS = 0.05;

bool InGroup(const PricedTraffic& p, StepPart part) {
  const GroupKind g = p.item.group;
  const bool gather = p.item.op == CollectiveOp::kAllGather;
  switch (part) {
    case StepPart::kTp:
      return (g == GroupKind::kTp || g == GroupKind::kEtp) &&
             p.item.frequency != TrafficFrequency::kPerStep;
    case StepPart::kTpGrad:
      // finalize_model_grads' all-reduces: over TP, and the shared embedding's over its pair of
      // pipeline ranks.
      return (g == GroupKind::kTp || g == GroupKind::kPp) &&
             p.item.frequency == TrafficFrequency::kPerStep;
    case StepPart::kCp:
      return g == GroupKind::kCp;
    case StepPart::kEp:
      return g == GroupKind::kEp;
    case StepPart::kPp:
      return g == GroupKind::kPp && p.item.frequency != TrafficFrequency::kPerStep;
    case StepPart::kDpGrad:
      return (g == GroupKind::kDp || g == GroupKind::kDpCp) && !gather;
    case StepPart::kDpParam:
      return (g == GroupKind::kDp || g == GroupKind::kDpCp) && gather;
    case StepPart::kExpertDpGrad:
      return g == GroupKind::kExpertDp && !gather;
    case StepPart::kExpertDpParam:
      return g == GroupKind::kExpertDp && gather;
    default:
      return false;
  }
}

// The bandwidth-map levels a part's traffic runs on, "" when it has none.
std::string LevelsOf(const StepResult& r, StepPart part) {
  std::set<std::string> levels;
  for (const PricedTraffic& p : r.traffic) {
    if (InGroup(p, part)) levels.insert(p.cost.level);
  }
  if (part == StepPart::kOffload) {
    for (const HostTraffic& h : r.host_traffic) levels.insert(h.level);
  }
  std::string out;
  for (const std::string& l : levels) out += (out.empty() ? "" : " + ") + l;
  return out;
}

std::vector<LinkLoad> LinkLoads(const StepResult& r) {
  std::map<std::string, LinkLoad> by_level;
  // A collective's bytes go on every level they cross, not only on the one that limits it: a
  // gradient reduce over 8 nodes limited by NVLink still sends its node-boundary share through
  // the NICs. Its time counts on each level it keeps busy.
  for (const PricedTraffic& p : r.traffic) {
    if (p.cost.crossed.empty()) {
      LinkLoad& l = by_level[p.cost.level];
      l.level = p.cost.level;
      l.seconds += p.time_per_step.s();
      l.bytes += p.size_per_step.count();
      continue;
    }
    for (const CollectiveCost::LevelShare& c : p.cost.crossed) {
      LinkLoad& l = by_level[c.level];
      l.level = c.level;
      l.seconds += p.time_per_step.s();
      l.bytes += p.size_per_step.count() * c.byte_share;
    }
  }
  for (const HostTraffic& h : r.host_traffic) {
    LinkLoad& l = by_level[h.level];
    l.level = h.level;
    l.seconds += h.time_per_step.s();
    l.bytes += h.size_per_step.count();
  }
  std::vector<LinkLoad> out;
  out.reserve(by_level.size());
  for (auto& [name, load] : by_level) out.push_back(load);
  std::sort(out.begin(), out.end(),
            [](const LinkLoad& a, const LinkLoad& b) { return a.seconds > b.seconds; });
  return out;
}

std::vector<CompareCause> Causes(const StepResult& a, const StepResult& b) {
  std::vector<CompareCause> out;
  for (size_t i = 0; i < kStepPartCount; ++i) {
    const auto part = static_cast<StepPart>(i);
    const double ta = a[part].exposed.s();
    const double tb = b[part].exposed.s();
    if (std::fabs(tb - ta) <= kCauseFloorS) continue;
    out.push_back({part, ta, tb, LevelsOf(a, part), LevelsOf(b, part)});
  }
  std::sort(out.begin(), out.end(), [](const CompareCause& x, const CompareCause& y) {
    return std::fabs(x.other_s - x.baseline_s) > std::fabs(y.other_s - y.baseline_s);
  });
  return out;
}

std::string CauseText(const CompareCause& c) {
  std::string line =
      fmt::format("{} {:.2f} s -> {:.2f} s exposed ({:+.2f} s)", StepPartName(c.part), c.baseline_s,
                  c.other_s, c.other_s - c.baseline_s);
  if (c.baseline_level != c.other_level) {
    line += fmt::format(", {} -> {}", c.baseline_level.empty() ? "no traffic" : c.baseline_level,
                        c.other_level.empty() ? "no traffic" : c.other_level);
  } else if (!c.other_level.empty()) {
    line += fmt::format(", on {}", c.other_level);
  }
  return line;
}

std::string Fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

}  // namespace

std::string SystemSummary(const ResolvedJob& job) {
  const ParallelLayout& l = job.layout();
  const JobSpec& s = job.spec;
  // VPP (with PP > 1), the micro batch and the recompute choice are named: two systems that
  // differ only there (the bubble, the activations) would otherwise print the same line.
  std::string out = fmt::format("TP{} PP{}{}", l.tp, l.pp, StageSplitSuffix(l));
  if (l.pp > 1) out += fmt::format(" VPP{}", l.vpp);
  out += fmt::format(" EP{} DP{}", l.ep, l.dp);
  if (l.cp > 1) out += fmt::format(" CP{}", l.cp);
  if (job.model.CountLayers(FfnKind::kMoe) > 0)
    out += fmt::format(" (expert-DP {})", l.expert_dp());
  out += fmt::format(", mb{}, recompute {}", s.micro_batch,
                     RecomputeGranularityName(s.recompute.granularity));
  out += fmt::format(", {}", ShardingModeName(s.sharding.mode));
  if (s.sharding.replicate > 1) out += fmt::format(" x{} replicas", s.sharding.replicate);
  if (s.sharding.offload_optimizer != OffloadTarget::kNone) {
    out += fmt::format(", optimizer on {}", OffloadTargetName(s.sharding.offload_optimizer));
  }
  if (s.sharding.offload_param != OffloadTarget::kNone) {
    out += fmt::format(", params on {}", OffloadTargetName(s.sharding.offload_param));
  }
  out += s.fp8.on() ? fmt::format(", fp8 {}", Fp8RecipeName(s.fp8.recipe))
                    : fmt::format(", {}", DTypeName(s.param_dtype));
  return out;
}

Result<CompareReport> CompareSystems(const Workspace& workspace,
                                     const std::vector<ResolvedJob>& jobs,
                                     const std::vector<std::string>& labels, double tokens) {
  CompareReport report;
  report.tokens = tokens;
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto named = [&](Error e) {
      e.message = fmt::format("{}: {}", labels[i], e.message);
      return e;
    };
    ComparedSystem c;
    c.label = labels[i];
    c.system = SystemSummary(jobs[i]);
    auto e = EvaluateJob(workspace, jobs[i], {.depth = EvalDepth::kStep});
    if (!e.ok()) return named(e.error());
    c.setup = *std::move(e->setup);
    c.step = *std::move(e->step);
    c.ledger = std::move(e->ledger);
    // A run takes whole steps: the last one is paid in full.
    c.steps = std::ceil(tokens / c.step.tokens_per_step);
    c.days = c.steps * c.step.step.s() / kSecondsPerDay;
    c.links = LinkLoads(c.step);
    report.systems.push_back(std::move(c));
  }
  for (const ComparedSystem& c : report.systems) {
    report.causes.push_back(&c == &report.systems.front()
                                ? std::vector<CompareCause>{}
                                : Causes(report.systems.front().step, c.step));
  }
  return report;
}

std::string CompareParagraph(const CompareReport& report, size_t i) {
  const ComparedSystem& a = report.systems.front();
  const ComparedSystem& b = report.systems[i];
  std::string out = fmt::format(
      "{} ({}) needs {:.2f} days to train {} tokens against {:.2f} days for {} ({}): {:.2f}x, "
      "because its step takes {:.1f} s against {:.1f} s for {} vs {} tokens per step.",
      b.label, b.system, b.days, GroupDigits(report.tokens), a.days, a.label, a.system,
      b.days / a.days, b.step.step.s(), a.step.step.s(), GroupDigits(b.step.tokens_per_step),
      GroupDigits(a.step.tokens_per_step));
  const auto& causes = report.causes[i];
  if (causes.empty()) {
    out += " No part of the step differs by more than 0.05 s.";
  } else {
    out += " What moved: ";
    const size_t n = std::min<size_t>(4, causes.size());
    for (size_t j = 0; j < n; ++j) out += (j ? "; " : "") + CauseText(causes[j]);
    out += ".";
  }
  // The links: how much each system sends where, per step before overlap.
  std::set<std::string> levels;
  for (const LinkLoad& l : a.links) levels.insert(l.level);
  for (const LinkLoad& l : b.links) levels.insert(l.level);
  auto load = [](const ComparedSystem& s, const std::string& level) {
    for (const LinkLoad& l : s.links) {
      if (l.level == level) return l;
    }
    return LinkLoad{level, 0, 0};
  };
  if (!levels.empty()) {
    out += " Traffic per rank per step, before overlap:";
    bool first = true;
    for (const std::string& level : levels) {
      const LinkLoad la = load(a, level), lb = load(b, level);
      out += fmt::format("{} {} {:.1f} GB in {:.2f} s -> {:.1f} GB in {:.2f} s", first ? "" : ";",
                         level, la.bytes / 1e9, la.seconds, lb.bytes / 1e9, lb.seconds);
      first = false;
    }
    out += ".";
  }
  for (const std::string& c : b.step.caveats) out += " Not modelled: " + c + ".";
  return out;
}

std::string RenderCompareText(const CompareReport& report, bool explain) {
  std::string out = fmt::format("compare: {} systems; time to train {} tokens (--tokens)\n\n",
                                report.systems.size(), GroupDigits(report.tokens));
  std::vector<Column> columns = {{"", Align::kLeft}};
  for (size_t i = 0; i < report.systems.size(); ++i) {
    columns.push_back({std::string(1, static_cast<char>('A' + std::min<size_t>(i, 25)))});
  }
  Table table(columns);
  auto row = [&](std::string name, auto cell) {
    std::vector<std::string> cells = {std::move(name)};
    for (const ComparedSystem& s : report.systems) cells.push_back(cell(s));
    table.AddRow(std::move(cells));
  };
  // Two decimals on both sides: a card of 84.88 GB read "85" made an OOM of 85.30 GB look
  // like 0.3 GB over, and a fit at 84.6 GB look like one.
  row("memory peak per GPU (GB)", [](const ComparedSystem& s) {
    return fmt::format("{} of {} ({})", Fixed(s.ledger.Peak().count() / 1e9, 2),
                       Fixed(s.ledger.capacity.count() / 1e9, 2),
                       MemoryVerdictName(s.ledger.verdict));
  });
  row("step time (s)", [](const ComparedSystem& s) { return Fixed(s.step.step.s(), 2); });
  row("tokens per step",
      [](const ComparedSystem& s) { return GroupDigits(s.step.tokens_per_step); });
  row("tokens/s/GPU",
      [](const ComparedSystem& s) { return Fixed(s.step.tokens_per_s_per_gpu, 1); });
  row("MFU (%)", [](const ComparedSystem& s) { return Fixed(100 * s.step.mfu, 2); });
  // Three significant digits: at the default 1B tokens a run takes hundredths of a day, and
  // two decimals printed "0.03" beside "0.91x".
  row("days to train", [](const ComparedSystem& s) {
    return s.days >= 100 ? Fixed(s.days, 0) : fmt::format("{:#.3g}", s.days);
  });
  const double base_days = report.systems.front().days;
  row("days / A",
      [&](const ComparedSystem& s) { return fmt::format("{:.2f}x", s.days / base_days); });
  table.AddSeparator();
  for (size_t p = 0; p < kStepPartCount; ++p) {
    const auto part = static_cast<StepPart>(p);
    bool any = false;
    for (const ComparedSystem& s : report.systems) any = any || s.step[part].total.s() > 0;
    if (!any) continue;
    row(fmt::format("{} (s exposed)", StepPartName(part)),
        [&](const ComparedSystem& s) { return Fixed(s.step[part].exposed.s(), 2); });
  }
  table.AddSeparator();
  std::set<std::string> levels;
  for (const ComparedSystem& s : report.systems) {
    for (const LinkLoad& l : s.links) levels.insert(l.level);
  }
  for (const std::string& level : levels) {
    row(fmt::format("{}: s / GB per step", level), [&](const ComparedSystem& s) {
      for (const LinkLoad& l : s.links) {
        if (l.level == level) return fmt::format("{:.2f} / {:.1f}", l.seconds, l.bytes / 1e9);
      }
      return std::string("-");
    });
  }
  out += table.Render();
  out += "\n";
  for (size_t i = 0; i < report.systems.size(); ++i) {
    const ComparedSystem& s = report.systems[i];
    out += fmt::format("{}: {}\n   {}\n", static_cast<char>('A' + std::min<size_t>(i, 25)), s.label,
                       s.system);
  }
  for (size_t i = 1; i < report.systems.size(); ++i) {
    out +=
        fmt::format("\nwhy {} differs from A:\n  {}\n",
                    static_cast<char>('A' + std::min<size_t>(i, 25)), CompareParagraph(report, i));
  }
  out +=
      "\nlink seconds are each collective's time x calls before overlap; \"s exposed\" is what "
      "stays on the step's critical path. Step-model error on measured rows: "
      "docs/step-validation.md.\n";
  if (explain) {
    for (size_t i = 0; i < report.systems.size(); ++i) {
      const ComparedSystem& s = report.systems[i];
      out += fmt::format("\n{} ({}): how each number is computed\n",
                         static_cast<char>('A' + std::min<size_t>(i, 25)), s.label);
      out += fmt::format(
          "  days to train\n    {} tokens / {} tokens per step = {:.2f}, so {} whole step{} x "
          "{:.2f} s / 86,400 s = {:.3f} days\n",
          GroupDigits(report.tokens), GroupDigits(s.step.tokens_per_step),
          report.tokens / s.step.tokens_per_step, GroupDigits(s.steps), s.steps == 1 ? "" : "s",
          s.step.step.s(), s.days);
      out += fmt::format("  memory peak\n    the ledger's peak {} (strata memory {} --explain)\n",
                         FormatGB(s.ledger.Peak()), s.label);
      for (const StepFormula& f : ExplainStep(s.setup.tables, s.setup.layout, s.step)) {
        out += fmt::format("  {}\n    {}\n", f.name, f.formula);
      }
    }
  }
  return out;
}

Json CompareToJson(const CompareReport& report) {
  Json doc = JsonDocument("compare");
  doc["tokens"] = report.tokens;
  Json systems = Json::array();
  const double base_days = report.systems.front().days;
  for (size_t i = 0; i < report.systems.size(); ++i) {
    const ComparedSystem& s = report.systems[i];
    Json parts = Json::array();
    for (size_t p = 0; p < kStepPartCount; ++p) {
      const StepPartTime& t = s.step.parts[p];
      if (t.total.s() <= 0) continue;
      parts.push_back({{"name", StepPartName(static_cast<StepPart>(p))},
                       {"total_s", t.total.s()},
                       {"exposed_s", t.exposed.s()}});
    }
    Json links = Json::array();
    for (const LinkLoad& l : s.links) {
      links.push_back(
          {{"level", l.level}, {"seconds_per_step", l.seconds}, {"bytes_per_step", l.bytes}});
    }
    Json causes = Json::array();
    for (const CompareCause& c : report.causes[i]) {
      causes.push_back({{"part", StepPartName(c.part)},
                        {"baseline_exposed_s", c.baseline_s},
                        {"exposed_s", c.other_s},
                        {"baseline_level", c.baseline_level},
                        {"level", c.other_level}});
    }
    Json entry = {{"label", s.label},
                  {"system", s.system},
                  {"memory_peak_bytes", JsonBytes(s.ledger.Peak())},
                  {"memory_capacity_bytes", JsonBytes(s.ledger.capacity)},
                  {"memory_verdict", MemoryVerdictName(s.ledger.verdict)},
                  {"step_time_s", s.step.step.s()},
                  {"tokens_per_step", s.step.tokens_per_step},
                  {"tokens_per_s_per_gpu", s.step.tokens_per_s_per_gpu},
                  {"mfu", s.step.mfu},
                  {"steps", s.steps},
                  {"days", s.days},
                  {"days_ratio_to_first", s.days / base_days},
                  {"breakdown", parts},
                  {"links", links},
                  {"causes_vs_first", causes},
                  {"caveats", s.step.caveats}};
    if (i > 0) entry["reason"] = CompareParagraph(report, i);
    systems.push_back(entry);
  }
  doc["systems"] = systems;
  return doc;
}

}  // namespace strata

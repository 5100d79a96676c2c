#include "strata/report/plan_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "strata/core/strings.h"
#include "strata/core/table.h"
#include "strata/job/job_json.h"

namespace strata {
namespace {

using plan::Candidate;
using plan::PlanResult;
using plan::RankedLayout;
using plan::Rule;

constexpr StepPart kCommParts[] = {
    StepPart::kTp,      StepPart::kCp,           StepPart::kEp,
    StepPart::kPp,      StepPart::kTpGrad,       StepPart::kDpGrad,
    StepPart::kDpParam, StepPart::kExpertDpGrad, StepPart::kExpertDpParam};

double ExposedComm(const StepResult& s) {
  double total = 0;
  for (StepPart p : kCommParts) total += s[p].exposed.s();
  return total;
}

/// The objective's column beside the step time, "" for time (the step column is the objective).
std::string ObjectiveHeader(plan::Objective objective) {
  switch (objective) {
    case plan::Objective::kCost:
      return "GPU-h per 1M tokens";
    case plan::Objective::kTokensPerJoule:
      return "tokens/J (at TDP)";
    case plan::Objective::kTime:
      break;
  }
  return "";
}

std::string ObjectiveCell(const StepSetup& setup, plan::Objective objective,
                          const RankedLayout& r) {
  const plan::StepEconomy e = plan::EconomyOf(setup, r.step);
  if (objective == plan::Objective::kCost)
    return fmt::format("{:.3f}", e.gpu_hours_per_million_tokens);
  return e.tokens_per_joule ? fmt::format("{:.3f}", *e.tokens_per_joule) : "n/a";
}

/// `step`'s ceiling check on a ranked layout (sim/step_model.h): "" when its MFU is within the
/// best published run's on this GPU and precision.
std::string MfuFlagOf(const StepSetup& setup, const RankedLayout& r) {
  return MfuCeilingFlag(setup.tables, setup.layout.fp8.on(), r.step.mfu);
}

void AddRow(Table& table, const StepSetup& setup, plan::Objective objective,
            const std::string& rank, const RankedLayout& r) {
  std::vector<std::string> cells = {rank, plan::LayoutName(r.candidate),
                                    fmt::format("{:.2f}", r.step.step.s())};
  if (objective != plan::Objective::kTime) cells.push_back(ObjectiveCell(setup, objective, r));
  const bool above_ceiling = !MfuFlagOf(setup, r).empty();
  for (std::string cell :
       {fmt::format("{:.1f}", r.step.tokens_per_s_per_gpu),
        fmt::format("{:.2f}{}", 100 * r.step.mfu, above_ceiling ? "*" : ""),
        fmt::format("{:.2f}", r.peak.gb()), std::string(MemoryVerdictName(r.verdict)),
        fmt::format("{:.2f}", ExposedComm(r.step))}) {
    cells.push_back(std::move(cell));
  }
  table.AddRow(cells);
}

Json LayoutJson(const StepSetup& setup, const RankedLayout& r) {
  const ParallelLayout& l = r.candidate.layout;
  Json j = Json::object();
  AddLayoutJson(j, l, setup.job.model.HasLayers(FfnKind::kMoe));
  j["micro_batch"] = r.candidate.micro_batch;
  j["recompute"] = std::string(RecomputeGranularityName(r.candidate.recompute));
  j["sharding"] = std::string(ShardingModeName(r.candidate.sharding));
  j["step_time_s"] = r.step.step.s();
  j["tokens_per_s_per_gpu"] = r.step.tokens_per_s_per_gpu;
  j["mfu"] = r.step.mfu;
  if (std::string flag = MfuFlagOf(setup, r); !flag.empty()) j["mfu_warning"] = std::move(flag);
  const plan::StepEconomy economy = plan::EconomyOf(setup, r.step);
  j["gpu_hours_per_million_tokens"] = economy.gpu_hours_per_million_tokens;
  if (economy.tokens_per_joule) {
    j["energy_per_step_j_at_tdp"] = *economy.energy_per_step_j;
    j["tokens_per_joule_at_tdp"] = *economy.tokens_per_joule;
  }
  j["peak_memory_bytes"] = JsonBytes(r.peak);
  j["capacity_bytes"] = JsonBytes(r.capacity);
  j["fits"] = r.fits;
  j["memory_verdict"] = std::string(MemoryVerdictName(r.verdict));
  Json exposed = Json::object();
  for (size_t p = 0; p < kStepPartCount; ++p) {
    const auto part = static_cast<StepPart>(p);
    if (part == StepPart::kFrameworkEagerOps || part == StepPart::kFrameworkFsdp2CopyOut) continue;
    const double s = r.step.parts[p].exposed.s();
    if (s > 0) exposed[std::string(StepPartName(part))] = s;
  }
  // These keys are the breakdown's part names; schema_version 1 had the framework's eager traffic
  // and FSDP2's copy-out as one part, so scripts keep reading their sum under its key.
  const double traffic = (r.step[StepPart::kFrameworkEagerOps].exposed +
                          r.step[StepPart::kFrameworkFsdp2CopyOut].exposed)
                             .value();
  if (traffic > 0) exposed["framework: eager ops + FSDP2 copies"] = traffic;
  j["exposed_s"] = std::move(exposed);
  return j;
}

/// Why the plan ranks nothing, from its counts: no layout passed the rules (then the rules that
/// removed them, most first), none could be placed, or every one checked is over the card.
std::string NoLayoutReason(const PlanResult& plan) {
  if (plan.rules.valid == 0) {
    std::vector<std::pair<int64_t, Rule>> by_count;
    for (size_t r = 0; r < static_cast<size_t>(Rule::kCount); ++r) {
      if (plan.rules.by_rule[r] > 0) by_count.emplace_back(plan.rules.by_rule[r], Rule(r));
    }
    std::stable_sort(by_count.begin(), by_count.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> parts;
    parts.reserve(by_count.size());
    for (const auto& [n, rule] : by_count) {
      parts.push_back(fmt::format("{} by: {}", GroupDigits(static_cast<double>(n)),
                                  plan::RuleDescription(rule)));
    }
    return fmt::format("no valid layout: the layout rules removed every partial layout ({})",
                       fmt::join(parts, "; "));
  }
  if (plan.memory_checked == 0) {
    return fmt::format("no layout ranked: none of the {} valid layouts could be placed and priced",
                       GroupDigits(static_cast<double>(plan.rules.valid)));
  }
  return fmt::format("no layout fits: every layout checked ({}) is over the card's memory{}",
                     GroupDigits(static_cast<double>(plan.memory_checked)),
                     plan.fits_only ? " or at risk (--fits-only)" : "");
}

}  // namespace

std::string PlanToText(const StepSetup& setup, const PlanResult& plan, bool explain) {
  const JobSpec& spec = setup.job.spec;
  std::string out =
      fmt::format("plan: {} on {} x {}{}, global batch {}, sequences up to {} tokens\n",
                  setup.job.model.name, spec.cluster.world(), setup.job.gpu().name,
                  setup.job.cluster.name.empty() ? "" : " (cluster " + setup.job.cluster.name + ")",
                  spec.global_batch, GroupDigits(spec.sequence.max_tokens));
  if (!setup.job.step.sequence.assumption.empty()) {
    out += fmt::format("  sequence: {}\n", setup.job.step.sequence.assumption);
  }
  int64_t removed = 0;
  for (int64_t n : plan.rules.by_rule) removed += n;
  std::vector<std::string> modes;
  for (ShardingMode m : plan.sharding) modes.emplace_back(ShardingModeName(m));
  const std::vector<std::string> scope_lines = plan::ScopeLines(plan.scope);
  out += fmt::format(
      "searched every layout{} (sharding {}): {} valid ({} partial layouts removed by the layout "
      "rules{})\n",
      plan.scope.named && !plan.scope.unrestricted()
          ? fmt::format(" {} can run", plan.scope.framework)
          : "",
      fmt::join(modes, ", "), GroupDigits(static_cast<double>(plan.rules.valid)),
      GroupDigits(static_cast<double>(removed)),
      plan.unplaceable ? fmt::format(", {} not placeable on the cluster",
                                     GroupDigits(static_cast<double>(plan.unplaceable)))
                       : "");
  for (const std::string& line : scope_lines) out += "framework: " + line + "\n";
  // Layouts the framework would refuse at launch are never ranked; say how many and why.
  if (const int64_t looped = plan.rules[Rule::kLoopedMicroBatches]; looped > 0) {
    out += fmt::format("skipped {} interleaved layouts the framework would refuse at launch: {}\n",
                       GroupDigits(static_cast<double>(looped)),
                       plan::RuleDescription(Rule::kLoopedMicroBatches));
  }
  if (const int64_t a2a = plan.rules[Rule::kMoeA2aOverlap]; a2a > 0) {
    out += fmt::format("skipped {} layouts the framework would refuse at launch: {}\n",
                       GroupDigits(static_cast<double>(a2a)),
                       plan::RuleDescription(Rule::kMoeA2aOverlap));
  }
  // When the job's own layout fits, every layout whose compute alone is faster than its step
  // is checked (its rank must be exact), whether or not its full step turns out faster.
  out += fmt::format(
      "memory: {} layouts checked with the ledger ({}), {} over the card{}; the other {} cannot "
      "enter the top {} and were not memory-checked\n\n",
      GroupDigits(static_cast<double>(plan.memory_checked)),
      plan.current_rank ? "every one whose compute alone beats your layout's step, then the "
                          "fastest until the top is full"
                        : "the fastest, until the top is full",
      GroupDigits(static_cast<double>(plan.removed_by_memory)),
      plan.fits_only ? " or at risk (--fits-only)" : "",
      GroupDigits(static_cast<double>(plan.not_memory_checked)), plan.top.size());
  if (plan.top.empty()) {
    out += NoLayoutReason(plan) + "\n";
    return out;
  }
  std::vector<Column> columns = {{"rank", Align::kLeft}, {"layout", Align::kLeft}, {"step (s)"}};
  if (plan.objective != plan::Objective::kTime)
    columns.push_back({ObjectiveHeader(plan.objective)});
  for (const char* name : {"tokens/s/GPU", "MFU (%)", "peak (GB)", "memory", "exposed comm (s)"}) {
    columns.push_back({name});
  }
  Table table(columns);
  std::vector<std::string> ties;
  for (size_t i = 0; i < plan.top.size(); ++i) {
    AddRow(table, setup, plan.objective, std::to_string(i + 1), plan.top[i]);
    if (i > 0 && plan.top[i].step.step.s() == plan.top[i - 1].step.step.s()) {
      ties.push_back(fmt::format("{} and {}", i, i + 1));
    }
  }
  table.AddSeparator();
  AddRow(table, setup, plan.objective,
         plan.current_rank
             ? fmt::format("yours ({})", GroupDigits(static_cast<double>(*plan.current_rank)))
             : "yours",
         plan.current);
  out += table.Render();
  // The rows whose MFU no published run reaches, with the check `step` prints for the highest.
  std::vector<std::string> flagged;
  const RankedLayout* highest = nullptr;
  auto flag_row = [&](const std::string& label, const RankedLayout& r) {
    if (MfuFlagOf(setup, r).empty()) return;
    flagged.push_back(label);
    if (highest == nullptr || r.step.mfu > highest->step.mfu) highest = &r;
  };
  for (size_t i = 0; i < plan.top.size(); ++i) flag_row(std::to_string(i + 1), plan.top[i]);
  flag_row("yours", plan.current);
  if (highest != nullptr) {
    out += fmt::format("warning: MFU marked * (rank{} {}): {}\n", flagged.size() > 1 ? "s" : "",
                       fmt::join(flagged, ", "), MfuFlagOf(setup, *highest));
  }
  if (!ties.empty()) {
    out += fmt::format("tied step times (ranks {}): {}\n", fmt::join(ties, ", "),
                       plan::TieBreakRule());
  }

  const RankedLayout& winner = plan.top.front();
  auto explain_pair = [&](const std::string& title, const RankedLayout& other) {
    const double gap = other.step.step.s() - winner.step.step.s();
    // A layout faster than the winner is one that was left out (over the card, or at risk
    // under --fits-only): say faster, and why it is not the winner.
    const std::string verdict =
        gap >= 0 ? fmt::format("{:+.2f} s per step slower than the winner", gap)
                 : fmt::format("{:.2f} s per step faster than the winner, but {}", -gap,
                               other.fits ? "at risk: --fits-only leaves it out"
                                          : fmt::format("it does not fit the card (peak {})",
                                                        FormatGB(other.peak)));
    out += fmt::format("\n{} ({}): {}\n", title, plan::LayoutName(other.candidate), verdict);
    const auto lines = plan::CompareLayouts(winner, other);
    if (lines.empty()) out += "  the same time in every component (a tie)\n";
    if (gap == 0) out += fmt::format("  tie: {}\n", plan::TieBreakRule());
    for (const std::string& line : lines) out += "  " + line + "\n";
  };
  out += fmt::format("\nwinner: {}\n", plan::LayoutName(winner.candidate));
  if (plan.top.size() > 1) explain_pair("against the runner-up", plan.top[1]);
  if (plan::LayoutName(plan.current.candidate) != plan::LayoutName(winner.candidate)) {
    explain_pair("against your layout", plan.current);
    // A faster layout of yours said why it lost on its first line.
    const bool faster = plan.current.step.step.s() < winner.step.step.s();
    if (!faster && !plan.current.fits) {
      out += "  (your layout does not fit the card)\n";
    } else if (!faster && !plan.current_rank) {
      out += "  (your layout is at risk: --fits-only leaves it unranked)\n";
    }
  } else {
    out += "your layout is the winner\n";
  }
  for (const plan::LayoutCaveat& c : plan.layout_caveats) {
    out += "\n" + plan::LayoutCaveatText(c) + "\n";
  }
  out +=
      "\nmemory: fits = even the top of the ledger's error band fits the card; at_risk = the\n"
      "prediction fits but the band reaches over it (docs/memory-validation.md).\n";
  if (plan.objective == plan::Objective::kCost) {
    out +=
        "\ncost = GPUs x step time / tokens per step, in GPU-hours per million tokens: no price\n"
        "per GPU-hour is known (data/gpus.yaml has none). The GPU count and the tokens per\n"
        "step are fixed in one search, so the order is the step time's.\n";
  } else if (plan.objective == plan::Objective::kTokensPerJoule) {
    out += fmt::format(
        "\ntokens/J = tokens per step / ({:.0f} W TDP x {} GPUs x step time). Every GPU is taken "
        "to\n"
        "draw its TDP for the whole step (GPUs only: no host, network or cooling), so the energy\n"
        "per token is an upper bound and tokens/J a lower bound. The GPU count and the tokens per\n"
        "step are fixed in one search, so the order is the step time's.\n",
        setup.job.gpu().tdp_watts, spec.cluster.world());
  }
  out +=
      "\ncomponent lines read winner -> other, exposed seconds per step, with the bandwidth-map\n"
      "level each group's traffic runs on; see `strata step --explain` for the arithmetic.\n";
  if (explain) {
    out += "\nlayouts removed by each rule (a removal prunes everything below it in the search):\n";
    for (size_t r = 0; r < plan.rules.by_rule.size(); ++r) {
      out += fmt::format("  {:>10}  {}\n", GroupDigits(static_cast<double>(plan.rules.by_rule[r])),
                         plan::RuleDescription(static_cast<Rule>(r)));
    }
    for (const plan::ModeScope& m : plan.scope.modes) {
      if (m.source.empty()) continue;
      out += fmt::format("\nwhat {} runs under sharding {} (data/frameworks.yaml): {}\n", m.engine,
                         ShardingModeName(m.mode), m.source);
    }
  }
  return out;
}

Json PlanToJson(const StepSetup& setup, const PlanResult& plan) {
  Json j = JsonDocument("plan");
  j["model"] = setup.job.model.name;
  j["gpus"] = setup.job.spec.cluster.world();
  j["gpu"] = setup.job.gpu().name;
  j["objective"] = std::string(plan::ObjectiveName(plan.objective));
  Json modes = Json::array();
  for (ShardingMode m : plan.sharding) modes.push_back(std::string(ShardingModeName(m)));
  j["sharding_searched"] = modes;
  Json framework = Json::object();
  framework["name"] = plan.scope.framework;
  framework["named"] = plan.scope.named;
  Json scopes = Json::array();
  for (const plan::ModeScope& m : plan.scope.modes) {
    Json ms = Json::object();
    ms["sharding"] = std::string(ShardingModeName(m.mode));
    ms["searched"] = m.runs_mode;
    ms["known"] = m.known;
    if (!m.engine.empty()) ms["through"] = m.engine;
    ms["not_searched"] = m.excluded;
    if (!m.why.empty()) ms["why"] = m.why;
    scopes.push_back(std::move(ms));
  }
  framework["by_sharding"] = std::move(scopes);
  j["framework"] = std::move(framework);
  j["fits_only"] = plan.fits_only;
  j["tie_break"] = std::string(plan::TieBreakRule());
  j["layouts_valid"] = plan.rules.valid;
  Json rules = Json::object();
  for (size_t r = 0; r < plan.rules.by_rule.size(); ++r) {
    rules[std::string(plan::RuleDescription(static_cast<Rule>(r)))] = plan.rules.by_rule[r];
  }
  j["removed_by_rule"] = std::move(rules);
  j["unplaceable"] = plan.unplaceable;
  j["memory_checked"] = plan.memory_checked;
  j["removed_by_memory"] = plan.removed_by_memory;
  j["not_memory_checked"] = plan.not_memory_checked;
  Json top = Json::array();
  for (const RankedLayout& r : plan.top) top.push_back(LayoutJson(setup, r));
  j["top"] = std::move(top);
  j["current"] = LayoutJson(setup, plan.current);
  if (plan.current_rank) j["current_rank"] = *plan.current_rank;
  Json caveats = Json::array();
  for (const plan::LayoutCaveat& c : plan.layout_caveats) {
    Json k = Json::object();
    k["layout_family"] = c.error.family;
    k["median_error"] = c.error.median_error;
    k["fit_rows"] = c.error.rows;
    Json layouts = Json::array();
    for (const plan::ComparedLayout& l : c.layouts) layouts.push_back(l.role);
    k["layouts"] = std::move(layouts);
    k["text"] = plan::LayoutCaveatText(c);
    caveats.push_back(std::move(k));
  }
  if (!caveats.empty()) j["layout_caveats"] = std::move(caveats);
  return j;
}

}  // namespace strata

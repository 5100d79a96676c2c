#include "strata/report/profile_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "strata/core/table.h"
#include "strata/report/straggler_lead_text.h"

namespace strata::profile {
namespace {

// Division, not multiplication by 1e-9: the quotient is correctly rounded, so 30,240 ns prints
// as 3.024e-05, not 3.0240000000000002e-05.
double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

// Adds the figures to `j` (a step's object already holds "step").
void AddFigures(const Figures& f, Json& j) {
  j["span_s"] = JsonNumber(Seconds(f.span_ns));
  j["gpu_busy_s"] = JsonNumber(Seconds(f.busy_ns));
  j["idle_s"] = JsonNumber(Seconds(f.idle_ns()));
  j["nccl_s"] = JsonNumber(Seconds(f.of(Component::kNccl)));
  j["nccl_exposed_s"] = JsonNumber(Seconds(f.nccl_exposed_ns));
  j["comm_other_s"] = JsonNumber(Seconds(f.of(Component::kCommOther)));
  j["comm_other_exposed_s"] = JsonNumber(Seconds(f.comm_other_exposed_ns));
  for (Component c : AllComponents()) {
    if (c == Component::kNccl || c == Component::kCommOther) continue;
    j[std::string(ComponentName(c)) + "_s"] = JsonNumber(Seconds(f.of(c)));
  }
  j["gpu_events"] = f.gpu_events;
  Json counts = Json::object();
  for (Component c : AllComponents()) {
    counts[std::string(ComponentName(c))] = f.component_events[static_cast<size_t>(c)];
  }
  j["events_by_component"] = std::move(counts);
  Json collectives = Json::array();
  for (const CollectiveTime& t : f.collectives) {
    Json c = Json::object();
    c["kind"] = t.collective.kind;
    c["process_group"] = t.collective.process_group;
    c["process_group_desc"] = t.collective.process_group_desc;
    c["process_group_ranks"] = t.collective.process_group_ranks;
    c["time_s"] = JsonNumber(Seconds(t.time_ns));
    c["kernels"] = t.kernels;
    collectives.push_back(std::move(c));
  }
  j["nccl_by_kind"] = std::move(collectives);
}

std::string Ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) * 1e-6); }

// Shown only for a rank that has such kernels.
constexpr const char* kDenseOrExpertLabel = "GEMM, dense or expert";

struct Row {
  const char* label;
  int64_t (*value)(const Figures&);
};

const std::vector<Row>& Rows() {
  static const std::vector<Row> kRows = {
      {"span", [](const Figures& f) { return f.span_ns; }},
      {"GPU busy", [](const Figures& f) { return f.busy_ns; }},
      {"GPU idle", [](const Figures& f) { return f.idle_ns(); }},
      {"dense GEMM", [](const Figures& f) { return f.of(Component::kGemm); }},
      {"grouped/expert GEMM", [](const Figures& f) { return f.of(Component::kGroupedGemm); }},
      {kDenseOrExpertLabel, [](const Figures& f) { return f.of(Component::kGemmDenseOrExpert); }},
      {"attention fwd", [](const Figures& f) { return f.of(Component::kAttentionFwd); }},
      {"attention bwd", [](const Figures& f) { return f.of(Component::kAttentionBwd); }},
      {"linear attention", [](const Figures& f) { return f.of(Component::kLinearAttention); }},
      {"memory-bound", [](const Figures& f) { return f.of(Component::kMemoryBound); }},
      {"NCCL", [](const Figures& f) { return f.of(Component::kNccl); }},
      {"  exposed", [](const Figures& f) { return f.nccl_exposed_ns; }},
      {"other comm", [](const Figures& f) { return f.of(Component::kCommOther); }},
      {"  exposed", [](const Figures& f) { return f.comm_other_exposed_ns; }},
      {"memcpy", [](const Figures& f) { return f.of(Component::kMemcpy); }},
      {"memset", [](const Figures& f) { return f.of(Component::kMemset); }},
      {"other", [](const Figures& f) { return f.of(Component::kOther); }},
  };
  return kRows;
}

Json RankJson(const RankProfile& r) { return r.rank ? Json(*r.rank) : Json(nullptr); }

std::string RankName(const RankProfile& r) {
  return r.rank ? fmt::format("rank {}", *r.rank) : r.file;
}

// Why the straggler of a step is late (StepSpread::reason), in words.
std::string StragglerWhy(const StepSpread& s, const std::vector<RankProfile>& ranks) {
  const std::string other = RankName(ranks[s.waited_most]);
  if (s.reason == "compute") {
    return fmt::format(
        "its compute is {} ms longer than {}'s: more or slower kernels (uneven work, "
        "a slow GPU)",
        Ms(s.reason_ns), other);
  }
  if (s.reason == "idle") {
    return fmt::format(
        "its GPU idles {} ms longer inside the step than {}'s: the host did not "
        "keep it fed",
        Ms(s.reason_ns), other);
  }
  if (s.reason == "late start") {
    return fmt::format(
        "its compute is within the ranks' range ({}-{} ms), so its GPU work began "
        "late: the delay is before its kernels (host, data loading, the previous "
        "step)",
        Ms(s.compute_min_ns), Ms(s.compute_max_ns));
  }
  if (s.reason == "idle_s") return "GPU idle: the host did not keep the GPU fed";
  return "compute: more or slower kernels (uneven work, a slow GPU)";
}

// The straggler's lead against the step-to-step noise, in words, in ms.
std::string LeadText(const StepSpread& s, const std::vector<RankProfile>& ranks) {
  return StragglerLeadText(s.margin, s.communication,
                           {.duration = [](int64_t ns) { return Ms(ns) + " ms"; },
                            .rank = [&ranks](size_t i) { return RankName(ranks[i]); },
                            .one_step_source = "the trace holds",
                            .one_step_advice = " (profile two or more steps)"});
}

std::string SpreadText(const StepSpread& s, const std::vector<RankProfile>& ranks) {
  if (s.identical) {
    return fmt::format(
        "  step {}: the {} ranks' figures are identical (span {} ms): no rank held "
        "the others up\n",
        s.step, s.ranks, Ms(s.longest_span_ns));
  }
  const std::string spans =
      fmt::format("spans {}-{} ms (longest: {}, shortest: {})", Ms(s.shortest_span_ns),
                  Ms(s.longest_span_ns), RankName(ranks[s.longest]), RankName(ranks[s.shortest]));
  const std::string who = RankName(ranks[s.straggler]);
  if (!s.margin.clear) {
    return fmt::format(
        "  step {} ({} ranks): {}: {} {} ({} ms{}), {}; {}\n", s.step, s.ranks,
        s.communication ? "no clear straggler"
                        : "no exposed communication, the ranks do not wait for each other; no "
                          "clear slowest rank",
        who, s.communication ? "waited least in collectives" : "has the longest span",
        Ms(s.margin.straggler_ns), s.communication ? " exposed communication" : "",
        LeadText(s, ranks), spans);
  }
  if (!s.communication) {
    return fmt::format(
        "  step {} ({} ranks): no exposed communication, the ranks do not wait for each other; "
        "slowest {}: its span is {}; {}: the part that differs most is {}: +{} ms\n",
        s.step, s.ranks, who, LeadText(s, ranks), spans, StragglerWhy(s, ranks), Ms(s.reason_ns));
  }
  return fmt::format(
      "  step {} ({} ranks): straggler {}: it waited least in collectives, {} ms exposed "
      "communication (most: {} ms on {}), so the others waited for it; its lead: {}; {}; {}\n",
      s.step, s.ranks, who, Ms(s.straggler_wait_ns), Ms(s.most_wait_ns),
      RankName(ranks[s.waited_most]), LeadText(s, ranks), StragglerWhy(s, ranks), spans);
}

std::string RankTitle(const RankProfile& r) {
  std::string who = r.rank ? fmt::format("rank {}", *r.rank) : std::string("rank ?");
  if (r.world_size) who += fmt::format(" of {}", *r.world_size);
  std::string what = r.file;
  if (!r.device.empty()) what += ", " + r.device;
  return fmt::format("{} ({}): {} step{}, {} GPU events", who, what, r.steps.size(),
                     r.steps.size() == 1 ? "" : "s", r.whole_trace.gpu_events);
}

}  // namespace

Json ProfileJson(const ProfileReport& report) {
  Json doc = JsonDocument("profile");
  doc["rules_file"] = report.rules_file;
  Json ranks = Json::array();
  for (const RankProfile& r : report.ranks) {
    Json j = Json::object();
    j["file"] = r.file;
    j["rank"] = RankJson(r);
    j["world_size"] = r.world_size ? Json(*r.world_size) : Json(nullptr);
    j["device"] = r.device;
    j["complete"] = r.cut.empty();
    if (!r.cut.empty()) j["cut"] = r.cut;
    j["unlaunched_gpu_events"] = r.unlaunched_events;
    j["gpu_events_between_steps"] = r.events_between_steps;
    Json whole = Json::object();
    AddFigures(r.whole_trace, whole);
    j["whole_trace"] = std::move(whole);
    Json steps = Json::array();
    for (const StepProfile& s : r.steps) {
      Json step = Json::object();
      step["step"] = s.step;
      // A cut trace's events are not written in time order: any step may miss some.
      step["complete"] = r.cut.empty();
      AddFigures(s.figures, step);
      steps.push_back(std::move(step));
    }
    j["steps"] = std::move(steps);
    if (!r.devices.empty()) {
      Json devices = Json::array();
      for (const DeviceBusy& d : r.devices) {
        devices.push_back({{"device", d.device},
                           {"gpu_events", d.gpu_events},
                           {"gpu_busy_s", JsonNumber(Seconds(d.busy_ns))},
                           {"gpu_idle_s", JsonNumber(Seconds(r.whole_trace.span_ns - d.busy_ns))}});
      }
      j["devices"] = std::move(devices);
    }
    ranks.push_back(std::move(j));
  }
  doc["ranks"] = std::move(ranks);
  Json spread = Json::array();
  for (const StepSpread& s : report.spread) {
    Json j = Json::object();
    j["step"] = s.step;
    j["ranks"] = s.ranks;
    j["identical"] = s.identical;
    // The rank the others waited for is named only when its lead is more than the step-to-step
    // noise (StragglerMargin): otherwise straggler_rank is null and candidate_rank says which rank
    // the rule would have named.
    const StragglerMargin& m = s.margin;
    const bool named = m.clear && !s.identical;
    j["straggler_verdict"] = s.identical  ? "identical"
                             : m.clear    ? "clear"
                             : m.noise_ns ? "within step-to-step noise"
                                          : "one step: no step-to-step noise to weigh it against";
    j["straggler_rank"] = named ? RankJson(report.ranks[s.straggler]) : Json(nullptr);
    j["straggler_file"] = named ? Json(report.ranks[s.straggler].file) : Json(nullptr);
    j["candidate_rank"] = RankJson(report.ranks[s.straggler]);
    j["candidate_file"] = report.ranks[s.straggler].file;
    j["straggler_basis"] = s.communication ? "least exposed communication" : "longest span";
    j["candidate_figure_s"] = JsonNumber(Seconds(m.straggler_ns));
    j["runner_up_rank"] = RankJson(report.ranks[m.runner_up]);
    j["runner_up_figure_s"] = JsonNumber(Seconds(m.runner_up_ns));
    j["lead_s"] = JsonNumber(Seconds(m.lead_ns));
    j["step_to_step_noise_s"] = m.noise_ns ? JsonNumber(Seconds(*m.noise_ns)) : Json(nullptr);
    j["step_to_step_noise_rank"] =
        m.noise_ns ? RankJson(report.ranks[m.noise_index]) : Json(nullptr);
    j["step_to_step_noise_steps"] = m.noise_steps;
    j["candidate_exposed_comm_s"] = JsonNumber(Seconds(s.straggler_wait_ns));
    j["candidate_compute_s"] = JsonNumber(Seconds(s.straggler_compute_ns));
    j["candidate_reason"] = s.reason;
    j["candidate_reason_s"] = JsonNumber(Seconds(s.reason_ns));
    j["waited_most_rank"] = RankJson(report.ranks[s.waited_most]);
    j["waited_most_exposed_comm_s"] = JsonNumber(Seconds(s.most_wait_ns));
    j["compute_min_s"] = JsonNumber(Seconds(s.compute_min_ns));
    j["compute_max_s"] = JsonNumber(Seconds(s.compute_max_ns));
    j["longest_span_rank"] = RankJson(report.ranks[s.longest]);
    j["longest_span_s"] = JsonNumber(Seconds(s.longest_span_ns));
    j["shortest_span_rank"] = RankJson(report.ranks[s.shortest]);
    j["shortest_span_s"] = JsonNumber(Seconds(s.shortest_span_ns));
    spread.push_back(std::move(j));
  }
  doc["steps_across_ranks"] = std::move(spread);
  doc["warnings"] = report.warnings;
  return doc;
}

std::string ProfileText(const ProfileReport& report) {
  std::string out;
  for (const RankProfile& r : report.ranks) {
    out += RankTitle(r) + "\n";
    if (!r.cut.empty()) {
      out += "  INCOMPLETE: " + r.cut + "\n";
      if (!r.steps.empty()) {
        out +=
            "  every step below may miss GPU events that lay past the cut (the profiler writes "
            "events in no time order): its figures are lower bounds\n";
      }
    }
    std::vector<Column> columns = {{"component", Align::kLeft}, {"whole trace (ms)"}};
    for (const StepProfile& s : r.steps) columns.push_back({fmt::format("step {} (ms)", s.step)});
    Table table(columns);
    for (const Row& row : Rows()) {
      if (std::string_view(row.label) == kDenseOrExpertLabel &&
          r.whole_trace.component_events[static_cast<size_t>(Component::kGemmDenseOrExpert)] == 0) {
        continue;
      }
      std::vector<std::string> cells = {row.label, Ms(row.value(r.whole_trace))};
      for (const StepProfile& s : r.steps) cells.push_back(Ms(row.value(s.figures)));
      table.AddRow(std::move(cells));
      if (std::string_view(row.label) == "GPU idle") table.AddSeparator();
    }
    out += table.Render();
    for (const CollectiveTime& t : r.whole_trace.collectives) {
      std::string group =
          t.collective.process_group.empty()
              ? std::string("process group not recorded")
              : fmt::format("process group {} ({}) ranks {}", t.collective.process_group,
                            t.collective.process_group_desc, t.collective.process_group_ranks);
      out += fmt::format("  NCCL {}: {} ms in {} kernels, {}\n",
                         t.collective.kind.empty() ? "?" : t.collective.kind, Ms(t.time_ns),
                         t.kernels, group);
    }
    for (const DeviceBusy& d : r.devices) {
      out += fmt::format(
          "  GPU {} alone: busy {} ms, idle {} ms of the trace's {} ms span ({} GPU events)\n",
          d.device, Ms(d.busy_ns), Ms(r.whole_trace.span_ns - d.busy_ns), Ms(r.whole_trace.span_ns),
          d.gpu_events);
    }
    if (r.unlaunched_events > 0) {
      out += fmt::format(
          "  {} GPU events have no launch in the trace (queued before the profiler started): "
          "whole trace only\n",
          r.unlaunched_events);
    }
    out += "\n";
  }
  if (!report.spread.empty()) out += "across ranks\n";
  for (const StepSpread& s : report.spread) out += SpreadText(s, report.ranks);
  if (!report.spread.empty()) out += "\n";
  out +=
      "span: first to last GPU event; busy: union of kernel, memcpy and memset intervals; a\n"
      "component's time is the union of its kernels'; exposed: time no other kernel overlaps.\n"
      "Kernels belong to the step whose CPU launch issued them.\n";
  return out;
}

}  // namespace strata::profile

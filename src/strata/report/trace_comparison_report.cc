#include "strata/report/trace_comparison_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "strata/core/table.h"
#include "strata/report/straggler_lead_text.h"

namespace strata::calibrate {
namespace {

Json RatioJson(const std::optional<double>& r) { return r ? JsonNumber(*r) : Json(nullptr); }

std::string RatioText(const std::optional<double>& r) {
  return r ? fmt::format("{:.2f}x", *r) : "-";
}

std::string S(double s) { return fmt::format("{:.4f}", s); }

// "rank N" where the trace says its rank, else its file.
std::string RankLabel(const TraceComparison& c, size_t i) {
  const std::optional<int64_t>& r = c.trace_ranks.at(i);
  return r ? fmt::format("rank {}", *r) : c.trace_files.at(i);
}

// The slowest rank's lead over the next rank against the step-to-step swing, in words, in s.
std::string LeadText(const TraceComparison& c) {
  return profile::StragglerLeadText(
      c.slowest.margin, c.slowest.communication,
      {.duration = [](int64_t ns) { return S(static_cast<double>(ns) / 1e9) + " s"; },
       .rank = [&c](size_t i) { return RankLabel(c, i); },
       .one_step_source = "the traces hold",
       .one_step_advice = ""});
}

}  // namespace

Json ComparisonJson(const TraceComparison& c) {
  Json j = Json::object();
  j["job_file"] = c.job_file;
  j["traces"] = c.trace_files;
  j["steps_measured"] = c.steps_measured;
  j["steps_left_out"] = c.steps_left_out;
  j["complete"] = c.cut_files.empty();
  j["cut_traces"] = c.cut_files;
  j["measured_step_s"] = JsonNumber(c.measured_step_s);
  j["measured_step_rank"] = c.trace_ranks.at(c.measured_step_index)
                                ? Json(*c.trace_ranks.at(c.measured_step_index))
                                : Json(nullptr);
  j["measured_step_file"] = c.trace_files.at(c.measured_step_index);
  j["measured_step_basis"] = "the longest mean span of any rank";
  j["predicted_step_s"] = JsonNumber(c.predicted_step_s);
  j["step_ratio"] = RatioJson(c.step_ratio);
  Json rows = Json::array();
  for (const ComponentMapping& m : ComponentMappings()) {
    const RowComparison& r = c[m.row];
    Json o = {{"component", m.key},
              {"measured_s", JsonNumber(r.measured_s)},
              {"predicted_s", JsonNumber(r.predicted_s)},
              {"ratio", RatioJson(r.ratio)},
              {"model_terms", m.model}};
    Json classes = Json::array();
    for (profile::Component t : m.trace) classes.push_back(profile::ComponentName(t));
    o["trace_classes"] = std::move(classes);
    if (m.row == CompareRow::kCommunication) {
      o["measured_exposed_s"] = JsonNumber(r.measured_exposed_s);
      o["predicted_exposed_s"] = JsonNumber(r.predicted_exposed_s);
      o["exposed_ratio"] =
          RatioJson(r.measured_exposed_s > 0 && r.predicted_exposed_s > 0
                        ? std::optional(r.measured_exposed_s / r.predicted_exposed_s)
                        : std::nullopt);
    }
    rows.push_back(std::move(o));
  }
  j["components"] = std::move(rows);
  if (c.all_gemm) {
    j["all_gemm"] = {
        {"measured_s", JsonNumber(c.all_gemm->measured_s)},
        {"predicted_s", JsonNumber(c.all_gemm->predicted_s)},
        {"ratio", RatioJson(c.all_gemm->ratio)},
        {"dense_or_expert_gemm_s", JsonNumber(c.dense_or_expert_gemm_s)},
        {"dense_or_expert_gemm_kernels", c.dense_or_expert_gemm_events},
        {"trace_classes", {"gemm", "grouped_gemm", "gemm_dense_or_expert"}},
        {"why",
         "the traces hold GEMM kernels whose names do not say dense or expert: the dense and "
         "expert rows hold only the kernels whose names tell, so only all GEMM time is compared"}};
  }
  Json unmapped = Json::array();
  for (size_t i = 0; i < c.unmapped_s.size(); ++i) {
    unmapped.push_back({{"trace_class", profile::ComponentName(c.unmapped_s[i].first)},
                        {"measured_s", JsonNumber(c.unmapped_s[i].second)},
                        {"why", UnmappedClasses()[i].why}});
  }
  j["unmapped"] = std::move(unmapped);
  const SlowestRank& s = c.slowest;
  auto rank_json = [&](size_t i) -> Json {
    const std::optional<int64_t>& r = c.trace_ranks.at(i);
    return r ? Json(*r) : Json(nullptr);
  };
  j["slowest_rank"] = {
      {"rank", s.rank ? Json(*s.rank) : Json(nullptr)},
      {"file", c.trace_files.at(s.index)},
      {"basis", s.communication ? "least exposed communication" : "longest span"},
      {"clear", s.margin.clear},
      {"lead_s", JsonNumber(static_cast<double>(s.margin.lead_ns) / 1e9)},
      {"runner_up_rank", rank_json(s.margin.runner_up)},
      {"step_to_step_noise_s", s.margin.noise_ns
                                   ? JsonNumber(static_cast<double>(*s.margin.noise_ns) / 1e9)
                                   : Json(nullptr)},
      {"span_s", JsonNumber(s.span_s)},
      {"exposed_comm_s", JsonNumber(s.wait_s)},
      {"reference_rank", rank_json(s.reference_index)},
      {"reference_file", c.trace_files.at(s.reference_index)},
      {"reference_span_s", JsonNumber(s.reference_span_s)},
      {"reference_exposed_comm_s", JsonNumber(s.reference_wait_s)},
      {"fastest_span_s", JsonNumber(s.fastest_span_s)},
      {"longest_span_s", JsonNumber(s.longest_span_s)},
      {"ranks_compared", s.ranks_compared},
      {"cause", s.cause},
      {"cause_extra_s", JsonNumber(s.cause_extra_s)},
      {"explanation", s.explanation}};
  j["warnings"] = c.warnings;
  return j;
}

std::string ComparisonText(const TraceComparison& c) {
  std::string out = "\nmeasured against the model";
  out += c.job_file.empty() ? ":\n" : fmt::format(" of {}:\n", c.job_file);
  out += fmt::format("measured: {} ({}), {}; predicted: the most loaded rank's step\n",
                     RankLabel(c, c.slowest.index),
                     c.slowest.ranks_compared < 2 || c.slowest.margin.clear
                         ? "the slowest rank"
                         : "the rank the slowest-rank rule picks, not clearly slower: see below",
                     c.steps_measured == 0 ? "its whole trace as one step"
                                           : fmt::format("mean of {} step{}", c.steps_measured,
                                                         c.steps_measured == 1 ? "" : "s"));
  if (!c.steps_left_out.empty()) {
    // Only the last step can be the one torch.profiler opens as it stops; in a cut trace any
    // step may have lost its events past the cut.
    const std::string why =
        c.slowest_cut ? "no GPU event read: the trace is cut and its events may lie past the cut"
        : c.last_step_left_out && c.steps_left_out.size() == 1
            ? "no GPU event: the ProfilerStep#N that torch.profiler opens as it stops, not a step "
              "that ran in 0 s"
            : "no GPU event launched inside the step";
    out += fmt::format("left out: step{} {} ({})\n", c.steps_left_out.size() == 1 ? "" : "s",
                       fmt::join(c.steps_left_out, ", "), why);
  }
  if (c.slowest_cut) {
    out +=
        "incomplete: the slowest rank's trace is cut: every step's figures may miss GPU events "
        "past the cut (lower bounds)\n";
  }
  Table table(
      {{"component", Align::kLeft}, {"measured (s)"}, {"predicted (s)"}, {"measured/predicted"}});
  for (const ComponentMapping& m : ComponentMappings()) {
    const RowComparison& r = c[m.row];
    table.AddRow({std::string(m.label), S(r.measured_s), S(r.predicted_s), RatioText(r.ratio)});
    if (m.row == CompareRow::kCommunication) {
      const std::optional<double> ratio =
          r.measured_exposed_s > 0 && r.predicted_exposed_s > 0
              ? std::optional(r.measured_exposed_s / r.predicted_exposed_s)
              : std::nullopt;
      table.AddRow(
          {"  exposed", S(r.measured_exposed_s), S(r.predicted_exposed_s), RatioText(ratio)});
      table.AddRow({"  overlapped", S(r.measured_s - r.measured_exposed_s),
                    S(r.predicted_s - r.predicted_exposed_s), "-"});
    }
    if (m.row == CompareRow::kExpertGemm && c.all_gemm) {
      table.AddRow({"GEMM, dense or expert", S(c.dense_or_expert_gemm_s), "-", "-"});
      table.AddRow({"all GEMM", S(c.all_gemm->measured_s), S(c.all_gemm->predicted_s),
                    RatioText(c.all_gemm->ratio)});
    }
  }
  table.AddSeparator();
  table.AddRow({"step", S(c.measured_step_s), S(c.predicted_step_s), RatioText(c.step_ratio)});
  out += table.Render();
  if (c.slowest.ranks_compared > 1) {
    // Every rank waits for the others at the collectives: the rank that began first spans the
    // whole step, the straggler's own span lacks its late start.
    out += fmt::format(
        "  step: {}'s mean span, the longest of {} ranks: every rank waits for the others at the "
        "collectives, so the step lasts at least the longest span{}\n",
        RankLabel(c, c.measured_step_index), c.slowest.ranks_compared,
        c.measured_step_index == c.slowest.index
            ? ""
            : fmt::format(" ({}'s own span, {} s, lacks the delay before its first kernel)",
                          RankLabel(c, c.slowest.index), S(c.slowest.span_s)));
  }
  for (size_t i = 0; i < c.unmapped_s.size(); ++i) {
    out += fmt::format("  no counterpart: {} {} s measured: {}\n",
                       profile::ComponentName(c.unmapped_s[i].first), S(c.unmapped_s[i].second),
                       UnmappedClasses()[i].why);
  }
  out += "what each row compares (trace kernel classes = model terms):\n";
  for (const ComponentMapping& m : ComponentMappings()) {
    std::string classes;
    for (profile::Component t : m.trace) {
      classes += (classes.empty() ? "" : " + ") + std::string(profile::ComponentName(t));
    }
    if (m.row == CompareRow::kIdle) classes = "span - GPU busy";
    out += fmt::format("  {}: {} = {}\n", m.label, classes, m.model);
    if (m.row == CompareRow::kExpertGemm && c.all_gemm) {
      out +=
          "  all GEMM: gemm + grouped_gemm + gemm_dense_or_expert = the dense and expert rows' "
          "terms (the trace's names do not split dense from expert GEMMs)\n";
    }
  }
  const SlowestRank& s = c.slowest;
  const std::string who = RankLabel(c, s.index);
  if (s.cause.empty()) {
    out += fmt::format("slowest rank: {} ({} s per step): {}\n", who, S(s.span_s), s.explanation);
  } else if (!s.margin.clear) {
    out += fmt::format(
        "no clear slowest rank of {}: {} {} ({} s{} per step), {}\n", s.ranks_compared, who,
        s.communication ? "waited least in collectives" : "has the longest mean span",
        S(s.communication ? s.wait_s : s.span_s), s.communication ? " exposed communication" : "",
        LeadText(c));
  } else if (s.communication) {
    out += fmt::format(
        "slowest rank: {} of {}, the straggler: it waited least in collectives ({} s exposed "
        "communication per step against {} s on {}), so the others waited for it; its lead: {}; "
        "{}: {} ({} s more)\n",
        who, s.ranks_compared, S(s.wait_s), S(s.reference_wait_s), RankLabel(c, s.reference_index),
        LeadText(c), s.cause, s.explanation, S(s.cause_extra_s));
  } else {
    out += fmt::format(
        "slowest rank: {} of {}, no exposed communication: the longest step, {} s against {} s on "
        "{}; its lead: {}; {}: {} ({} s more)\n",
        who, s.ranks_compared, S(s.span_s), S(s.reference_span_s), RankLabel(c, s.reference_index),
        LeadText(c), s.cause, s.explanation, S(s.cause_extra_s));
  }
  return out;
}

std::string CalibrationText(const AppliedCalibration& a) {
  std::string traces;
  for (const std::string& t : a.traces) traces += (traces.empty() ? "" : ", ") + t;
  // Nothing applied: the prediction is the uncalibrated model's, and must not read as calibrated.
  std::string out = fmt::format(
      "{} {} (traces {}{}{})\n",
      a.applied.empty() ? "not calibrated: no kernel rate of the calibration applies:"
                        : "calibrated: kernel rates from",
      a.file, traces.empty() ? "unnamed" : traces, a.job_file.empty() ? "" : ", job " + a.job_file,
      a.created.empty() ? "" : ", " + a.created);
  if (a.gpu_warning.empty()) {
    out += fmt::format("  measured on: {}{}\n", a.trace_gpu,
                       a.trace_device.empty() ? "" : fmt::format(" (\"{}\")", a.trace_device));
  } else {
    out += fmt::format("  unchecked: {}\n", a.gpu_warning);
  }
  for (const std::string& s : a.applied) out += fmt::format("  scaled: {}\n", s);
  for (const std::string& s : a.not_carried) out += fmt::format("  not carried over: {}\n", s);
  for (const std::string& s : a.warnings) out += fmt::format("  warning: {}\n", s);
  return out;
}

Json CalibrationNoteJson(const AppliedCalibration& a) {
  auto or_null = [](const std::string& v) { return v.empty() ? Json(nullptr) : Json(v); };
  return {{"file", a.file},
          {"calibrated", !a.applied.empty()},
          {"traces", a.traces},
          {"job_file", a.job_file},
          {"created", a.created},
          {"trace_gpu", or_null(a.trace_gpu)},
          {"trace_device", or_null(a.trace_device)},
          {"gpu_warning", or_null(a.gpu_warning)},
          {"applied", a.applied},
          {"not_carried", a.not_carried},
          {"warnings", a.warnings}};
}

}  // namespace strata::calibrate

// strata plan [job.yaml] [--set k=v] [--gpus N | --nodes N] [--top K] [--fix tp=1 ...]
// [--fix recompute=full] [--fix sharding=zero3] [--fits-only]
// [--objective time|cost|tokens-per-joule] [--sharding job|megatron|zero3|fsdp2|any]: every
// valid layout the job's framework can run, ranked by predicted step time, with the reason for
// the winner. All arithmetic is in src/strata/plan/; this file parses flags and renders.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/job_options.h"
#include "strata/core/did_you_mean.h"
#include "strata/eval/evaluation.h"
#include "strata/plan/planner.h"
#include "strata/report/html_report.h"
#include "strata/report/plan_report.h"
#include "strata/report/trace_comparison_report.h"

namespace strata::cli {
namespace {

/// "--fix recompute=full" / "--fix sharding=zero3": one choice of a non-numeric dimension.
template <class Enum>
Status FixChoice(const std::string& text, const std::string& value, const std::vector<Enum>& all,
                 std::string_view (*name_of)(Enum), std::vector<Enum>& out) {
  std::vector<std::string> names;
  for (Enum e : all) {
    names.emplace_back(name_of(e));
    if (value == names.back()) {
      out = {e};
      return OkStatus();
    }
  }
  Error bad = InvalidInput(
      fmt::format("'{}': expected one of: {}", text, fmt::format("{}", fmt::join(names, ", "))));
  bad.field = "--fix";
  return bad.WithHint(DidYouMeanHint(value, names));
}

/// "--fix tp=1" -> space.fixed.tp = 1. Keys are the layout dimensions, mb, recompute and
/// sharding; `sharding_fixed` says the last was given.
Status ApplyFix(const std::string& text, plan::SearchSpace& space, bool& sharding_fixed) {
  static const std::vector<std::string> kKeys = {"tp",  "pp", "vpp", "cp",        "ep",
                                                 "etp", "dp", "mb",  "recompute", "sharding"};
  const size_t eq = text.find('=');
  const std::string key = text.substr(0, eq);
  Error bad = InvalidInput(fmt::format(
      "'{}': expected KEY=N with KEY one of tp, pp, vpp, cp, ep, etp, dp, mb and N a positive "
      "integer, or recompute=none|selective|full, or sharding=none|zero1|zero2|zero3|fsdp2",
      text));
  bad.field = "--fix";
  if (eq == std::string::npos) return bad;
  const std::string value = text.substr(eq + 1);
  if (key == "recompute") {
    return FixChoice<RecomputeGranularity>(
        text, value,
        {RecomputeGranularity::kNone, RecomputeGranularity::kSelective,
         RecomputeGranularity::kFull},
        &RecomputeGranularityName, space.recompute);
  }
  if (key == "sharding") {
    sharding_fixed = true;
    return FixChoice<ShardingMode>(text, value,
                                   {ShardingMode::kNone, ShardingMode::kZero1, ShardingMode::kZero2,
                                    ShardingMode::kZero3, ShardingMode::kFsdp2},
                                   &ShardingModeName, space.sharding);
  }
  int64_t number = 0;
  try {
    size_t used = 0;
    number = std::stoll(value, &used);
    if (used != value.size() || number <= 0) return bad;
  } catch (const std::exception&) {
    return bad;
  }
  ParallelLayout& f = space.fixed;
  int64_t* slot = key == "tp"    ? &f.tp
                  : key == "pp"  ? &f.pp
                  : key == "vpp" ? &f.vpp
                  : key == "cp"  ? &f.cp
                  : key == "ep"  ? &f.ep
                  : key == "etp" ? &f.etp
                  : key == "dp"  ? &f.dp
                  : key == "mb"  ? &space.fixed_micro_batch
                                 : nullptr;
  if (slot == nullptr) return bad.WithHint(DidYouMeanHint(key, kKeys));
  *slot = number;
  return OkStatus();
}

}  // namespace

int RunPlan(int argc, char** argv) {
  CLI::App app{
      "Every valid parallel layout of a job, ranked by predicted step time, with the "
      "memory ledger deciding which fit and the reason for the winner.",
      "strata plan"};
  JobRequest request;
  std::vector<std::string> fixes;
  int64_t top_k = 5, nodes = 0, gpus = 0;
  unsigned threads = 0;
  std::string objective = "time";
  std::string sharding = "job";
  OutputOptions out;
  AddJobOptions(app, request);
  app.add_option("--nodes", nodes, "search on this many nodes of the job's cluster")
      ->check(CLI::PositiveNumber);
  app.add_option("--gpus", gpus, "search on this many GPUs (a multiple of the GPUs per node)")
      ->check(CLI::PositiveNumber);
  app.add_option("--top", top_k, "how many layouts to list")->check(CLI::Range(1, 1000));
  app.add_option(
      "--fix", fixes,
      "keep a dimension fixed: --fix tp=1 --fix ep=8 (tp pp vpp cp ep etp dp mb), "
      "--fix recompute=none|selective|full, --fix sharding=none|zero1|zero2|zero3|fsdp2");
  bool fits_only = false;
  app.add_flag("--fits-only", fits_only,
               "list only layouts whose whole memory error band fits the card (verdict fits); "
               "at_risk layouts are left out like those over it");
  app.add_option("--objective", objective,
                 "the figure beside each layout: time (step time), cost (GPU-hours per million "
                 "tokens; no price is known) or tokens-per-joule (at the GPUs' TDP: a lower "
                 "bound). One search keeps the GPUs and the tokens per step, so the order is the "
                 "step time's for all three");
  app.add_option("--sharding", sharding,
                 "the sharding modes tried for every layout: job (the job's own, default), "
                 "megatron (distributed optimizer, zero1), zero3, fsdp2, or any (all three)");
  app.add_option("--threads", threads,
                 "threads to evaluate layouts on (default: the machine's cores); the result is "
                 "the same with any number")
      ->check(CLI::Range(1U, 256U));
  std::string calibration;
  AddCalibrationOption(app, calibration);
  AddOutputOptions(app, out, kJsonFlag | kExplainFlag | kSvgFlag,
                   "print the pruning counts of every rule");
  if (auto exit = ParseArgs(app, argc, argv)) return *exit;

  plan::PlanOptions options;
  options.top_k = top_k;
  options.threads = threads;
  auto parsed_objective = plan::ParseObjective(objective);
  if (!parsed_objective.ok()) return ReportError(parsed_objective.error());
  options.objective = *parsed_objective;
  auto modes = plan::ParseShardingChoice(sharding);
  if (!modes.ok()) return ReportError(modes.error());
  options.space.sharding = *modes;
  options.fits_only = fits_only;
  bool sharding_fixed = false;
  for (const std::string& fix : fixes) {
    if (Status st = ApplyFix(fix, options.space, sharding_fixed); !st.ok()) {
      return ReportError(st.error());
    }
  }
  if (sharding_fixed && sharding != "job") {
    Error e = InvalidInput(fmt::format(
        "--sharding {} and --fix sharding=... both choose the sharding modes: give one", sharding));
    e.field = "--fix";
    return ReportError(e);
  }
  auto workspace = Workspace::Load();
  if (!workspace.ok()) return ReportError(workspace.error());
  auto job = ResolveJobRequest(request, workspace->memory.engines);
  if (!job.ok()) return ReportError(job.error());
  const int64_t per_node = job->spec.cluster.gpus_per_node;
  if (gpus > 0) {
    if (per_node <= 0 || gpus % per_node != 0) {
      Error e = InvalidInput(
          fmt::format("--gpus {} is not a multiple of the {} GPUs per node", gpus, per_node));
      e.field = "--gpus";
      return ReportError(e);
    }
    nodes = gpus / per_node;
  }
  if (nodes > 0 && nodes != job->spec.cluster.nodes) {
    if (Status st = plan::ResizeJob(*job, nodes); !st.ok()) {
      Error e = st.error();
      return ReportError(e.WithHint(fmt::format(
          "the planner also ranks the job's own layout, which must be valid on {} nodes: change "
          "it with --set (parallel.*, batch.*){}",
          nodes, e.hint.empty() ? "" : "; " + e.hint)));
    }
  }
  // A calibration scales the kernel rates of the job's GPU: every candidate layout is priced
  // with the rates measured on the user's own run.
  std::optional<calibrate::AppliedCalibration> applied;
  if (Status st = CalibrateWorkspace(*job, calibration, *workspace, applied); !st.ok()) {
    return ReportError(st.error());
  }
  auto e = EvaluateJob(*workspace, *job, {.depth = EvalDepth::kStep});
  if (!e.ok()) return ReportError(e.error());
  options.layout_errors = &workspace->step_layout_errors;
  auto plan = plan::PlanLayouts(*e->setup, *e->comm, workspace->memory, options);
  if (!plan.ok()) return ReportError(plan.error());
  std::string text;
  if (out.json) {
    Json j = PlanToJson(*e->setup, *plan);
    if (applied) j["calibration"] = calibrate::CalibrationNoteJson(*applied);
    text = DumpJson(j);
  } else {
    text = (applied ? calibrate::CalibrationText(*applied) : "") +
           PlanToText(*e->setup, *plan, out.explain);
  }
  return EmitOutputs(out, text, [&] { return PlanFigure(*plan).svg; });
}

}  // namespace strata::cli

// strata compare A.yaml B.yaml [...] [--variant k=v,k=v ...] [--set k=v] [--tokens N]
// [--explain] [--json]: the same training run under several systems side by side (memory peak,
// step time, days to train N tokens) and why they differ, in bandwidth-map terms. All numbers
// come from the memory ledger and the step model (src/strata/report/compare_report.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/job_options.h"
#include "strata/core/strings.h"
#include "strata/model/sequence_lengths.h"
#include "strata/report/compare_report.h"
#include "strata/report/trace_comparison_report.h"

namespace strata::cli {
namespace {

// "sharding.mode=zero3,parallel.ep=1" -> {"sharding.mode=zero3", "parallel.ep=1"}.
std::vector<std::string> SplitVariant(const std::string& variant) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= variant.size()) {
    const size_t comma = variant.find(',', start);
    const std::string part =
        variant.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string JoinSets(const std::vector<std::string>& sets) {
  std::string out;
  for (const std::string& s : sets) out += " --set " + s;
  return out;
}

}  // namespace

int RunCompare(int argc, char** argv) {
  CLI::App app{
      "The same training run under several systems side by side: per-GPU memory peak, "
      "step time, days to train N tokens, and the cause of the difference (which "
      "traffic runs on which link, in seconds). The first system is the baseline.",
      "strata compare"};
  std::vector<std::string> jobs;
  std::vector<std::string> variants;
  std::vector<std::string> sets;
  std::string tokens_text = "1000M";
  OutputOptions out;
  app.add_option("jobs", jobs,
                 "job files (YAML) or names from data/jobs/; the first is the baseline. With one "
                 "job and --variant, the job itself is the baseline");
  app.add_option("--variant", variants,
                 "a variant of the first job: comma-separated key=value overrides, e.g. "
                 "--variant sharding.mode=zero3,parallel.ep=1 (repeatable)");
  app.add_option("--set", sets, "override a field in every job: --set batch.global_batch=160");
  app.add_option("--tokens", tokens_text,
                 "tokens to train, for the time to train (100B, 15T, 500M, 2.31M, 29K; "
                 "default 1000M)");
  std::string calibration;
  AddCalibrationOption(app, calibration);
  AddOutputOptions(app, out, kJsonFlag | kExplainFlag,
                   "print each system's formulas with the numbers substituted");
  if (auto exit = ParseArgs(app, argc, argv)) return *exit;

  auto tokens = ParseTokenCount(tokens_text);
  if (!tokens.ok() || *tokens < 1) {
    Error e = tokens.ok()
                  ? InvalidInput(fmt::format("expected at least 1 token, got '{}'", tokens_text))
                  : tokens.error();
    return ReportError(e.InField("--tokens"));
  }
  if (jobs.empty()) jobs.push_back(kReferenceJobName);
  if (jobs.size() + variants.size() < 2) {
    return ReportError(InvalidInput("nothing to compare: give two or more jobs, or one job and "
                                    "--variant k=v,...")
                           .WithHint(fmt::format("strata compare {} {}-zero3", kReferenceJobName,
                                                 kReferenceJobName)));
  }
  std::vector<JobRequest> requests;
  std::vector<std::string> labels;
  for (const std::string& job : jobs) {
    JobRequest r;
    r.job = job;
    r.overrides = sets;
    requests.push_back(r);
    labels.push_back(job + JoinSets(sets));
  }
  for (const std::string& variant : variants) {
    const std::vector<std::string> extra = SplitVariant(variant);
    if (extra.empty()) return ReportError(InvalidInput("empty --variant").InField("--variant"));
    JobRequest r;
    r.job = jobs.front();
    r.overrides = sets;
    r.overrides.insert(r.overrides.end(), extra.begin(), extra.end());
    requests.push_back(r);
    labels.push_back(jobs.front() + JoinSets(r.overrides));
  }
  // One workspace for every system: its engines resolve each job (data/frameworks.yaml is read
  // once, not once a system).
  auto workspace = Workspace::Load();
  if (!workspace.ok()) return ReportError(workspace.error());
  std::vector<ResolvedJob> resolved;
  for (size_t i = 0; i < requests.size(); ++i) {
    auto job = ResolveJobRequest(requests[i], workspace->memory.engines);
    if (!job.ok()) return ReportError(job.error());
    resolved.push_back(*std::move(job));
  }
  // A calibration is checked against the baseline (its model and GPU) and scales that GPU's
  // kernel rates: systems on other GPUs keep the uncalibrated ones.
  std::optional<calibrate::AppliedCalibration> applied;
  if (Status st = CalibrateWorkspace(resolved.front(), calibration, *workspace, applied);
      !st.ok()) {
    return ReportError(st.error());
  }
  auto report = CompareSystems(*workspace, resolved, labels, *tokens);
  if (!report.ok()) return ReportError(report.error());
  std::string text;
  if (out.json) {
    Json j = CompareToJson(*report);
    if (applied) j["calibration"] = calibrate::CalibrationNoteJson(*applied);
    text = DumpJson(j);
  } else {
    text = (applied ? calibrate::CalibrationText(*applied) : "") +
           RenderCompareText(*report, out.explain);
  }
  return EmitOutputs(out, text);
}

}  // namespace strata::cli

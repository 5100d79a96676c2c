// strata report [JOB] [--set k=v] [--top K] -o report.html: one self-contained HTML page of a
// job's evaluation (report/html_report.h): the memory ledger by phase against the card, one
// micro batch and the step by component, the bandwidth map with the traffic on each level, and
// the planner's layouts as step time against peak memory. Every figure has its numbers in a
// table beside it. With nothing given, the reference job.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/job_options.h"
#include "strata/eval/evaluation.h"
#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/job/placement.h"
#include "strata/profile/profile.h"
#include "strata/report/hang_figure.h"
#include "strata/report/html_report.h"
#include "strata/report/log_figure.h"
#include "strata/report/trace_figure.h"

namespace strata::cli {

int RunReport(int argc, char** argv) {
  CLI::App app{
      "One self-contained HTML page of a job: memory by phase, the step's time by component, "
      "the bandwidth map with its traffic and the planner's layouts, each figure with its "
      "numbers in a table. No arguments: the reference job.",
      "strata report"};
  JobRequest request;
  int64_t top_k = 20;
  OutputOptions out;
  std::vector<std::string> hang_paths;
  std::vector<std::string> logs;
  std::vector<std::string> traces;
  AddJobOptions(app, request);
  app.add_option("--hang", hang_paths,
                 "hang evidence (bundle directories from `strata collect`, dumps, logs): adds "
                 "who waits for whom");
  app.add_option("--log", logs, "a training log: adds its loss, step time and throughput curves");
  app.add_option("--trace", traces,
                 "PyTorch profiler traces (files or directories, one per rank): adds the "
                 "measured GPU time of each rank");
  app.add_option("--top", top_k, "layouts of the planner drawn (the fastest that fit)")
      ->check(CLI::Range(1, 200))
      ->capture_default_str();
  AddOutputOptions(app, out, 0, "", "the page");
  if (auto exit = ParseArgs(app, argc, argv)) return *exit;

  auto workspace = Workspace::Load();
  if (!workspace.ok()) return ReportError(workspace.error());
  auto job = ResolveJobRequest(request, workspace->memory.engines);
  if (!job.ok()) return ReportError(job.error());
  auto evaluation = EvaluateJob(*workspace, *job);
  if (!evaluation.ok()) return ReportError(evaluation.error());
  plan::PlanOptions options;
  options.top_k = top_k;
  auto plan = plan::PlanLayouts(*evaluation->setup, *evaluation->comm, workspace->memory, options);
  if (!plan.ok()) return ReportError(plan.error());

  std::vector<ReportFigure> figures = {
      MemoryFigure(evaluation->ledger), StepFigure(*evaluation->step),
      MapFigure(evaluation->comm->map(), *evaluation->traffic), PlanFigure(*plan)};
  for (const std::string& log : logs) {
    auto figure = ReadLogFigure(log);
    if (!figure.ok()) return ReportError(figure.error());
    figures.push_back(std::move(*figure));
  }
  if (!traces.empty()) {
    auto files = profile::ExpandTracePaths(traces);
    if (!files.ok()) return ReportError(files.error());
    auto rules = profile::KernelClassifier::Load();
    if (!rules.ok()) return ReportError(rules.error());
    auto measured = profile::ProfileTraces(*files, *rules);
    if (!measured.ok()) return ReportError(measured.error());
    for (const std::string& w : measured->warnings) Warn(w);
    figures.push_back(TraceFigure(*measured));
  }
  if (!hang_paths.empty()) {
    auto frameworks = hang::LoadFrameworkTimeouts();
    if (!frameworks.ok()) return ReportError(frameworks.error());
    auto evidence = hang::LoadEvidence(hang_paths);
    if (!evidence.ok()) return ReportError(evidence.error());
    for (const hang::Unreadable& u : evidence->unreadable) {
      Warn(fmt::format("skipped unreadable file {}: {}", u.file, u.reason));
    }
    figures.push_back(HangFigure(hang::Analyze(*evidence, {std::move(frameworks).value()})));
  }
  return EmitOutputs(out, RenderHtmlReport(*evaluation, figures));
}

}  // namespace strata::cli

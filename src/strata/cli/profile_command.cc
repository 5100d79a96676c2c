// strata profile TRACE...: where the GPU time of each rank and step went, measured from PyTorch
// profiler traces (plain or gzip Chrome-trace JSON, one file per rank, or directories of them).
#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/job_options.h"
#include "strata/core/json_output.h"
#include "strata/eval/evaluation.h"
#include "strata/profile/profile.h"
#include "strata/report/profile_report.h"
#include "strata/report/trace_comparison_report.h"

namespace strata::cli {

namespace {

// Now in UTC, or SOURCE_DATE_EPOCH's time when it is set (reproducible output).
std::string CreatedDate() {
  std::time_t t = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    const long long v = std::strtoll(epoch, &end, 10);
    if (end != epoch && *end == '\0') t = static_cast<std::time_t>(v);
  }
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

int RunProfile(int argc, char** argv) {
  CLI::App app{
      "Measured step breakdown from PyTorch profiler (Kineto) traces: per rank and per "
      "ProfilerStep#N, GPU busy and idle time, dense and grouped GEMM, attention, "
      "linear attention, memory-bound kernels, NCCL (overlapped and exposed) and other "
      "communication, memcpy, memset.\n"
      "With --job: the measured step beside the step model's prediction for the job, per "
      "component, with the ratio measured/predicted, the slowest rank and why; "
      "--write-calibration keeps the ratios for `strata step --calibration`.\n"
      "Exit codes: 0 read, 2 bad usage or a file that is not a trace, 3 traces read but no GPU "
      "event in any of them.",
      "strata profile"};
  std::vector<std::string> paths;
  OutputOptions out;
  std::string rules;
  app.add_option("traces", paths, "trace files (.json, .json.gz), one per rank, or directories");
  AddOutputOptions(app, out, kJsonFlag, "", "the breakdown");
  app.add_option("--rules", rules,
                 "kernel classification rules (default: data/profile/kernel_classes.yaml)");
  JobRequest job_request;
  std::string calibration_out;
  app.add_option("--job", job_request.job,
                 "compare with the step model's prediction for this job (a job file or a name "
                 "from data/jobs/)");
  app.add_option("--set", job_request.overrides,
                 "override a field of the --job job: --set parallel.ep=16 (repeatable)");
  app.add_option("--write-calibration", calibration_out,
                 "write the measured/predicted ratio of each component (JSON) for `strata step "
                 "--calibration` (needs --job)");
  bool allow_cut = false;
  app.add_flag("--allow-cut-trace", allow_cut,
               "write the calibration even from a trace that ends early (it records "
               "provenance.complete: false; its steps may miss events past the cut)");
  if (auto code = ParseArgs(app, argc, argv)) return *code;
  if (job_request.job.empty() && !job_request.overrides.empty()) {
    return ReportError(InvalidInput("--set needs --job: it overrides a field of the job"));
  }
  if (job_request.job.empty() && !calibration_out.empty()) {
    return ReportError(
        InvalidInput("--write-calibration needs --job: the ratios are against its prediction"));
  }

  auto files = profile::ExpandTracePaths(paths);
  if (!files.ok()) return ReportError(files.error());
  auto classifier = profile::KernelClassifier::Load(rules);
  if (!classifier.ok()) return ReportError(classifier.error());
  auto report = profile::ProfileTraces(*files, *classifier);
  if (!report.ok()) return ReportError(report.error());
  // The default rules by their place in the tree, so output does not depend on the checkout.
  if (rules.empty()) report->rules_file = "data/profile/kernel_classes.yaml";
  for (const std::string& w : report->warnings) Warn(w);
  std::optional<calibrate::TraceComparison> comparison;
  std::optional<Evaluation> evaluation;
  if (!job_request.job.empty()) {
    auto workspace = Workspace::Load();
    if (!workspace.ok()) return ReportError(workspace.error());
    auto job = ResolveJobRequest(job_request, workspace->memory.engines);
    if (!job.ok()) return ReportError(job.error());
    auto e = EvaluateJob(*workspace, *job, {.depth = EvalDepth::kStep});
    if (!e.ok()) return ReportError(e.error());
    auto c = calibrate::CompareWithJob(*report, *e);
    if (!c.ok()) return ReportError(c.error());
    for (const std::string& w : c->warnings) Warn(w);
    comparison = std::move(c).value();
    evaluation = std::move(e).value();
  }
  std::string text;
  if (out.json) {
    Json j = profile::ProfileJson(*report);
    if (comparison) j["comparison"] = calibrate::ComparisonJson(*comparison);
    text = DumpJson(j);
  } else {
    text = profile::ProfileText(*report);
    if (comparison) text += calibrate::ComparisonText(*comparison);
  }
  if (comparison && !calibration_out.empty()) {
    // A calibration is keyed to the job's GPU: another GPU's kernel rates under that key would
    // be applied to every job on it by `step --calibration`.
    const GpuSpec& gpu = evaluation->job.gpu();
    const std::string job_gpu = gpu.catalog_name.empty() ? gpu.name : gpu.catalog_name;
    if (!comparison->trace_gpu.empty() && comparison->trace_gpu != job_gpu) {
      return ReportError(
          InvalidInput(fmt::format("the traces ran on {}, the job's GPU is {}: a calibration for "
                                   "{} would carry {}'s kernel rates",
                                   comparison->trace_gpu, gpu.name, gpu.name,
                                   comparison->trace_gpu))
              .InFile(calibration_out)
              .WithHint(fmt::format(
                  "compare with a job on {} (--set cluster.gpu=NAME or another job file)",
                  comparison->trace_gpu)));
    }
    if (!comparison->trace_gpu_other_family.empty()) {
      return ReportError(
          InvalidInput(
              fmt::format("the traces ran on \"{}\" (model number {}), the job's GPU is {}: a "
                          "calibration for {} would carry another GPU's kernel rates",
                          comparison->trace_device, comparison->trace_gpu_other_family, gpu.name,
                          gpu.name))
              .InFile(calibration_out)
              .WithHint("compare with a job on the GPU the traces ran on"));
    }
    // A cut trace's steps may miss events past the cut (a profiler writes events in no time
    // order): its ratios are of partial steps, so it is refused unless asked for.
    if (!comparison->cut_files.empty() && !allow_cut) {
      return ReportError(
          InvalidInput(fmt::format("{} is cut (the file ends early): its steps may miss GPU "
                                   "events past the cut, so its measured/predicted ratios are "
                                   "of partial steps",
                                   comparison->cut_files.front()))
              .InFile(calibration_out)
              .WithHint("profile a complete trace, or pass --allow-cut-trace to write it anyway "
                        "(the file records provenance.complete: false)"));
    }
    if (comparison->trace_gpu.empty()) {
      Warn(fmt::format(
          "{}: the traces {}: the calibration records their GPU as unknown, and `--calibration` "
          "applies it unchecked, saying so",
          calibration_out,
          comparison->trace_device.empty()
              ? "do not name their GPU (no deviceProperties)"
              : fmt::format("ran on \"{}\", which data/gpus.yaml does not list",
                            comparison->trace_device)));
    }
    const calibrate::Calibration c =
        calibrate::MakeCalibration(*comparison, *evaluation, CreatedDate());
    if (calibrate::UsableRates(c).empty()) {
      Warn(fmt::format(
          "{}: no kernel rate in it is usable (every carried component's ratio is absent or "
          "outside {:.1f}x-{:.0f}x): `--calibration` will apply nothing and says so",
          calibration_out, 1 / calibrate::kPlausibleRatio, calibrate::kPlausibleRatio));
    }
    if (auto st = calibrate::WriteCalibration(c, calibration_out); !st.ok()) {
      return ReportError(st.error());
    }
  }
  if (int code = EmitOutputs(out, text); code != kExitOk) return code;
  for (const profile::RankProfile& r : report->ranks) {
    if (r.whole_trace.gpu_events > 0) return kExitOk;
  }
  return kExitNoVerdict;  // read, but nothing on the GPU to break down: never "all clear"
}

}  // namespace strata::cli

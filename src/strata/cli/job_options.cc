#include "strata/cli/job_options.h"

#include <string>

#include "strata/cli/cli_common.h"
#include "strata/importer/import_job.h"
#include "strata/job/engine_chain.h"
#include "strata/job/inapplicable_fields.h"
#include "strata/job/resolve_with_engines.h"
#include "strata/model/model_config.h"

namespace strata::cli {

namespace {

// `--set cluster.nodes=4` is how a user answers what a launch command does not say; the
// importer asks for those three before any --set is applied, so they go in as its options.
Status ApplyClusterSets(const std::vector<std::string>& sets, ImportOptions& options) {
  for (const std::string& set : sets) {
    const size_t eq = set.find('=');
    if (eq == std::string::npos) continue;  // the importer reports a malformed --set
    const std::string key = set.substr(0, eq);
    const std::string value = set.substr(eq + 1);
    if (key == "cluster.gpu") {
      options.gpu = value;
    } else if (key == "cluster.nodes" || key == "cluster.gpus_per_node") {
      int64_t n = 0;
      try {
        size_t used = 0;
        n = std::stoll(value, &used);
        if (used != value.size()) n = 0;
      } catch (const std::exception&) {
        n = 0;
      }
      if (n <= 0) {
        Error e = InvalidInput("--set " + set + ": expected a positive integer");
        e.field = key;
        return e;
      }
      (key == "cluster.nodes" ? options.nodes : options.gpus_per_node) = n;
    }
  }
  return OkStatus();
}

}  // namespace

void AddJobOptions(CLI::App& app, JobRequest& request) {
  CLI::Option* job = app.add_option(
      "job", request.job,
      "job file (YAML) or a name from data/jobs/; default: the reference job when no "
      "--model or --from is given either");
  CLI::Option* from = app.add_option(
      "--from", request.from,
      "import the job from a launch command or script, a Megatron log, ms-swift args.json, a "
      "torchtitan TOML, a DeepSpeed/HF config or a verl YAML (as `strata import` does); "
      "--set cluster.gpu=... answers what the launch does not say");
  job->excludes(from);
  from->excludes(job);
  app.add_option("--model", request.model,
                 "model: catalog name or config.json (replaces the job's; without a job file, "
                 "--set must give cluster, parallel, batch and sequence)");
  app.add_option("--set", request.overrides,
                 "override a job field: --set parallel.ep=16 (repeatable; see docs/job-file.md)");
}

Result<ResolvedJob> ResolveJobRequest(const JobRequest& request) {
  STRATA_ASSIGN_OR_RETURN(FrameworkEngines engines, LoadFrameworkEngines());
  return ResolveJobRequest(request, engines);
}

namespace {

// Fields the job gives that do nothing for it: warned about, once each (stderr).
Result<ResolvedJob> WarnInapplicable(Result<ResolvedJob> job, const FrameworkEngines& engines) {
  if (job.ok()) {
    for (const std::string& w : InapplicableFields(job->spec, job->model, engines)) Warn(w);
  }
  return job;
}

Result<ResolvedJob> ResolveRequest(const JobRequest& request, const FrameworkEngines& engines);

}  // namespace

Result<ResolvedJob> ResolveJobRequest(const JobRequest& request, const FrameworkEngines& engines) {
  return WarnInapplicable(ResolveRequest(request, engines), engines);
}

namespace {

Result<ResolvedJob> ResolveRequest(const JobRequest& request, const FrameworkEngines& engines) {
  if (request.from.empty()) return ResolveJob(request, engines);
  ImportOptions options;
  options.model = request.model;
  options.overrides = request.overrides;
  STRATA_RETURN_IF_ERROR(ApplyClusterSets(request.overrides, options));
  auto report = ImportJobFile(request.from, options);
  if (!report.ok()) {
    Error e = std::move(report).error();
    if (e.file.empty()) e.InFile(request.from);
    // The importer's hints name `strata import` flags; here the same answers are --set.
    if (e.hint.find("--gpus-per-node") != std::string::npos) {
      e.hint = "give it with --set cluster.gpus_per_node=N";
    } else if (e.hint.find("--nodes") != std::string::npos) {
      e.hint = "give it with --set cluster.nodes=N";
    } else if (e.hint.find("--gpu") != std::string::npos) {
      e.hint = "give it with --set cluster.gpu=NAME, e.g. --set cluster.gpu=H20";
    }
    e.message = "--from: " + e.message;
    return e;
  }
  Result<ResolvedJob> job = [&]() -> Result<ResolvedJob> {
    // --set applies to the imported job as to a job file (the importer keeps only the fields a
    // launch can hold: `cluster=h20-5x8` or a throughput section are the job file's).
    std::vector<std::string> sets = request.overrides;
    if (!request.model.empty()) sets.insert(sets.begin(), "model=" + request.model);
    STRATA_ASSIGN_OR_RETURN(JobSpec spec, ParseJobSpec(report->yaml, report->job.file, sets));
    if (report->model_json.empty() || !request.model.empty()) return ResolveJob(spec, engines);
    // The launch described the model by its arguments (Megatron): no file to point at.
    STRATA_ASSIGN_OR_RETURN(
        ModelConfig model,
        ParseModelConfig(report->model_json, request.from + " (model arguments)"));
    return ResolveJobWithModel(spec, std::move(model), engines);
  }();
  if (!job.ok()) {
    Error e = std::move(job).error();
    e.message = "the job imported from " + request.from + ": " + e.message;
    return e;
  }
  job->request = request;
  return job;
}

}  // namespace

void AddCalibrationOption(CLI::App& app, std::string& path) {
  app.add_option("--calibration", path,
                 "scale the kernel efficiencies by measured/predicted ratios written by `strata "
                 "profile TRACE... --job JOB --write-calibration FILE`");
}

Status CalibrateWorkspace(const ResolvedJob& job, const std::string& calibration_path,
                          Workspace& workspace,
                          std::optional<calibrate::AppliedCalibration>& applied) {
  if (calibration_path.empty()) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(calibrate::Calibration c, calibrate::LoadCalibration(calibration_path));
  STRATA_ASSIGN_OR_RETURN(applied,
                          calibrate::ApplyCalibration(c, calibration_path, job, workspace));
  // Also on stderr: rates of an unchecked GPU are the one thing a calibrated answer can get
  // silently wrong.
  if (!applied->gpu_warning.empty()) Warn(calibration_path + ": " + applied->gpu_warning);
  for (const std::string& w : applied->warnings) Warn(calibration_path + ": " + w);
  return OkStatus();
}

}  // namespace strata::cli

// strata rl [rl-job.yaml] [--set key=value ...] [--explain] [--json] [--log VERL_LOG
// [--verl-version X.Y.Z]]: memory per GPU in each phase of an RL step, where the step's time goes
// (generation, log-prob passes, update, weight sync, idle), and colocated against every split of
// the GPUs; with --log, verl's or OpenRLHF's measured phases beside the prediction. With no job:
// the reference RL job (data/jobs/qwen3.6-35b-a3b-grpo-h20x40.yaml). All arithmetic is in
// src/strata/rl/, the text in src/strata/report/; this file parses flags.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/exit_status.h"
#include "strata/core/file_io.h"
#include "strata/report/rl_report.h"
#include "strata/rl/measured_lengths.h"

namespace strata::cli {

int RunRl(int argc, char** argv) {
  CLI::App app{
      "An RL step (verl: megatron-core actor, vLLM rollout): memory per GPU in each phase, "
      "where the step's time goes, and colocated against every split of the GPUs.",
      "strata rl"};
  std::string job;
  std::vector<std::string> overrides;
  OutputOptions out;
  std::string log_path;
  std::string verl_version;
  app.add_option("job", job,
                 "RL job file (YAML) or a name from data/jobs/; default: the reference RL job (" +
                     std::string(kReferenceRlJobName) + ")");
  app.add_option("--set", overrides,
                 "override an RL job key (rollout.tp=4) or the actor's job "
                 "(actor.parallel.ep=16); repeatable");
  app.add_option("--log", log_path,
                 "the console log of this RL job's run, verl's (timing_s/*, perf/throughput, "
                 "response_length/*) or OpenRLHF's (\"Global step N: {...}\" with timing/*): "
                 "its phases beside the prediction");
  auto* version = app.add_option("--verl-version", verl_version,
                                 "verl's release that wrote --log (0.7.0: timing_s/gen includes "
                                 "the weight sync; 0.7.1 on: timing_s/update_weights holds it); "
                                 "default: from the log");
  AddOutputOptions(app, out, kJsonFlag | kExplainFlag);
  if (auto exit = ParseArgs(app, argc, argv)) return *exit;
  if (!verl_version.empty() && log_path.empty()) {
    return ReportError(InvalidInput("--verl-version: only with --log"));
  }
  std::optional<VerlVersion> version_flag;
  if (version->count() > 0) {
    version_flag = ParseVerlVersion(verl_version);
    if (!version_flag) {
      return ReportError(InvalidInput(
          fmt::format("--verl-version: expected a release such as 0.7.1, got '{}'", verl_version)));
    }
  }

  auto spec = LoadRlSpec(job.empty() ? kReferenceRlJobName : job, overrides);
  if (!spec.ok()) return ReportError(spec.error());
  auto workspace = Workspace::Load();
  if (!workspace.ok()) return ReportError(workspace.error());
  auto eval = EvaluateRl(*workspace, *spec);
  if (!eval.ok()) return ReportError(eval.error());
  if (!log_path.empty()) {
    auto text = ReadFile(log_path);
    if (!text.ok()) return ReportError(text.error());
    // A log read, the job must be able to run for there to be a prediction to compare with.
    auto runnable = [&]() -> Status {
      if (eval->configured.valid) return OkStatus();
      Error e = InvalidInput(fmt::format(
          "the RL job as configured cannot run ({}): no prediction to compare with the log",
          eval->configured.reason));
      e.code = ErrorCode::kCheckFailed;
      return e;
    };
    if (LooksLikeOpenRlhfLog(*text)) {
      if (version_flag) {
        return ReportError(
            InvalidInput("--verl-version: the log is OpenRLHF's (\"Global step N: {...}\"), "
                         "not verl's")
                .InFile(log_path));
      }
      auto log = ParseOpenRlhfLog(*text);
      if (!log.ok()) {
        Error e = log.error();
        return ReportError(e.InFile(log_path));
      }
      if (Status st = runnable(); !st.ok()) return ReportError(st.error());
      const OpenRlhfComparison c = CompareOpenRlhfLogAtMeasuredLengths(*workspace, *eval, *log);
      return EmitOutputs(out, out.json ? RenderOpenRlhfLogJson(*eval, *log, c, log_path)
                                       : RenderOpenRlhfLogText(*eval, *log, c, log_path));
    }
    auto log = ParseVerlLog(*text);
    if (!log.ok()) {
      Error e = log.error();
      return ReportError(e.InFile(log_path));
    }
    if (Status st = runnable(); !st.ok()) return ReportError(st.error());
    const VerlComparison c = CompareVerlLogAtMeasuredLengths(*workspace, *eval, *log, version_flag);
    return EmitOutputs(out, out.json ? RenderVerlLogJson(*eval, *log, c, log_path)
                                     : RenderVerlLogText(*eval, *log, c, log_path));
  }
  const int status =
      EmitOutputs(out, out.json ? RenderRlJson(*eval) : RenderRlText(*eval, out.explain));
  // The job as configured cannot run: a check found a problem.
  return status == kExitOk && !eval->configured.valid ? kExitCheckFailed : status;
}

}  // namespace strata::cli

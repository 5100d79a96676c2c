// strata step [job.yaml] [--set key=value ...] [--explain] [--json]: how long one training step
// takes and where the time goes. With no job file: the reference job, compared with the 120 s
// the course measured. All arithmetic is in src/strata/sim/, the text in src/strata/report/; this
// file parses flags.
#include <nlohmann/json.hpp>
#include <string>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/job_options.h"
#include "strata/eval/evaluation.h"
#include "strata/report/html_report.h"
#include "strata/report/step_json.h"
#include "strata/report/step_text.h"
#include "strata/report/trace_comparison_report.h"

namespace strata::cli {

int RunStep(int argc, char** argv) {
  CLI::App app{
      "Predicted time of one training step and where it goes: compute, recompute, "
      "each group's communication (exposed or hidden), the pipeline bubble, "
      "stragglers, the optimizer.",
      "strata step"};
  JobRequest request;
  OutputOptions out;
  std::string calibration;
  AddJobOptions(app, request);
  AddCalibrationOption(app, calibration);
  AddOutputOptions(app, out, kJsonFlag | kExplainFlag | kSvgFlag,
                   "print each formula with the numbers substituted and a timeline of one micro "
                   "batch");
  if (auto exit = ParseArgs(app, argc, argv)) return *exit;

  auto workspace = Workspace::Load();
  if (!workspace.ok()) return ReportError(workspace.error());
  auto job = ResolveJobRequest(request, workspace->memory.engines);
  if (!job.ok()) return ReportError(job.error());
  std::optional<calibrate::AppliedCalibration> applied;
  if (Status st = CalibrateWorkspace(*job, calibration, *workspace, applied); !st.ok()) {
    return ReportError(st.error());
  }
  auto e = EvaluateJob(*workspace, *job, {.depth = EvalDepth::kStep, .assumption_effects = true});
  if (!e.ok()) return ReportError(e.error());
  // The band and the model's record measure the uncalibrated model; a calibration replaced its
  // rates. One that applied nothing left the model as it was: its band still holds.
  if (applied && !applied->applied.empty()) {
    e->step_band.reset();
    e->model_runs.clear();
  }
  std::string text;
  if (out.json) {
    Json j = StepToJson(*e);
    if (applied) j["calibration"] = calibrate::CalibrationNoteJson(*applied);
    text = DumpJson(j);
  } else {
    text = (applied ? calibrate::CalibrationText(*applied) : "") +
           RenderStepText(*e, out.explain, job->reference);
  }
  return EmitOutputs(out, text, [&] { return StepFigure(*e->step).svg; });
}

}  // namespace strata::cli

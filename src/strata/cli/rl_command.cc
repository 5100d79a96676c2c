// strata rl [rl-job.yaml] [--set key=value ...] [--explain] [--json]: memory per GPU in each
// phase of an RL step, where the step's time goes (generation, log-prob passes, update, weight
// sync, idle), and colocated against every split of the GPUs. With no job: the reference RL job
// (data/jobs/qwen3.6-35b-a3b-grpo-h20x40.yaml). All arithmetic is in src/strata/rl/, the text in
// src/strata/report/; this file parses flags.
#include <string>
#include <vector>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/cli/exit_status.h"
#include "strata/report/rl_report.h"

namespace strata::cli {

int RunRl(int argc, char** argv) {
  CLI::App app{
      "An RL step (verl: megatron-core actor, vLLM rollout): memory per GPU in each phase, "
      "where the step's time goes, and colocated against every split of the GPUs.",
      "strata rl"};
  std::string job;
  std::vector<std::string> overrides;
  OutputOptions out;
  app.add_option("job", job,
                 "RL job file (YAML) or a name from data/jobs/; default: the reference RL job (" +
                     std::string(kReferenceRlJobName) + ")");
  app.add_option("--set", overrides,
                 "override an RL job key (rollout.tp=4) or the actor's job "
                 "(actor.parallel.ep=16); repeatable");
  AddOutputOptions(app, out, kJsonFlag | kExplainFlag);
  if (auto exit = ParseArgs(app, argc, argv)) return *exit;

  auto spec = LoadRlSpec(job.empty() ? kReferenceRlJobName : job, overrides);
  if (!spec.ok()) return ReportError(spec.error());
  auto workspace = Workspace::Load();
  if (!workspace.ok()) return ReportError(workspace.error());
  auto eval = EvaluateRl(*workspace, *spec);
  if (!eval.ok()) return ReportError(eval.error());
  const int status =
      EmitOutputs(out, out.json ? RenderRlJson(*eval) : RenderRlText(*eval, out.explain));
  // The job as configured cannot run: a check found a problem.
  return status == kExitOk && !eval->configured.valid ? kExitCheckFailed : status;
}

}  // namespace strata::cli

// The job arguments every job-reading command takes, in one place so that `memory`, `mfu`,
// `map`, `step`, `plan`, `checkpoint` (and every later command) accept the same flags with the
// same defaults:
//   [JOB]              a job file or a name under data/jobs/ (none: the reference job)
//   --from FILE        import the job from how it is launched (a Megatron-LM or ms-swift command
//                      or script, a Megatron log, args.json, a torchtitan TOML, a DeepSpeed / HF
//                      config, a verl YAML): what `strata import FILE` writes, without the file
//   --model NAME       a model (catalog name or config.json); with no JOB, the --set flags
//                      must give the cluster, layout, batch and sequence
//   --set key=value    override any job field (repeatable; docs/job-file.md lists them)
#ifndef STRATA_CLI_JOB_OPTIONS_H_
#define STRATA_CLI_JOB_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "strata/calibrate/calibration.h"
#include "strata/core/result.h"
#include "strata/eval/workspace.h"
#include "strata/job/resolved_job.h"

namespace strata::cli {

/// Registers JOB, --from, --model and --set on `app`, filling `request`. JOB and --from
/// exclude each other (CLI11 rejects both, exit 2).
void AddJobOptions(CLI::App& app, JobRequest& request);

/// The job the request names: ResolveJob, or for --from the importer's job with --model and
/// --set applied (cluster.gpu, cluster.nodes and cluster.gpus_per_node given by --set also
/// answer what a launch command does not say). Errors name the --from file.
Result<ResolvedJob> ResolveJobRequest(const JobRequest& request);

/// The same with data/frameworks.yaml's engines already loaded: a command that loads its
/// Workspace first passes workspace.memory.engines, and the file is read once.
Result<ResolvedJob> ResolveJobRequest(const JobRequest& request, const FrameworkEngines& engines);

/// Registers --calibration FILE (a `strata profile --write-calibration` file) on `app`.
void AddCalibrationOption(CLI::App& app, std::string& path);

/// Scales `workspace`'s kernel efficiencies by the calibration at `calibration_path` when one is
/// given (`applied` then says what was scaled and what does not carry over); checked against
/// `job` (its model and GPU).
Status CalibrateWorkspace(const ResolvedJob& job, const std::string& calibration_path,
                          Workspace& workspace,
                          std::optional<calibrate::AppliedCalibration>& applied);

}  // namespace strata::cli

#endif  // STRATA_CLI_JOB_OPTIONS_H_

// The job arguments every job-reading command takes, in one place so that `memory`, `mfu`,
// `map` (and every later command) accept the same flags with the same defaults:
//   [JOB]              a job file or a name under data/jobs/ (none: the reference job)
//   --model NAME       a model (catalog name or config.json); with no JOB, the --set flags
//                      must give the cluster, layout, batch and sequence
//   --set key=value    override any job field (repeatable; docs/job-file.md lists them)
#ifndef STRATA_CLI_JOB_OPTIONS_H_
#define STRATA_CLI_JOB_OPTIONS_H_

#include <CLI/CLI.hpp>

#include "strata/job/resolved_job.h"

namespace strata::cli {

/// Registers JOB, --model and --set on `app`, filling `request`.
void AddJobOptions(CLI::App& app, JobRequest& request);

}  // namespace strata::cli

#endif  // STRATA_CLI_JOB_OPTIONS_H_

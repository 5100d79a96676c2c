#include "strata/cli/job_options.h"

namespace strata::cli {

void AddJobOptions(CLI::App& app, JobRequest& request) {
  app.add_option("job", request.job,
                 "job file (YAML) or a name from data/jobs/; default: the reference job when no "
                 "--model is given either");
  app.add_option("--model", request.model,
                 "model: catalog name or config.json (replaces the job's; without a job file, "
                 "--set must give cluster, parallel, batch and sequence)");
  app.add_option("--set", request.overrides,
                 "override a job field: --set parallel.ep=16 (repeatable; see docs/job-file.md)");
}

}  // namespace strata::cli

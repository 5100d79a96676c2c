// ResolveJob (strata/job/resolved_job.h) with data/frameworks.yaml's engines already loaded, for a
// caller that holds them (a command's Workspace: workspace.memory.engines), so that the file is
// not read again for each job resolved.
#ifndef STRATA_JOB_RESOLVE_WITH_ENGINES_H_
#define STRATA_JOB_RESOLVE_WITH_ENGINES_H_

#include "strata/core/result.h"
#include "strata/job/engine_chain.h"
#include "strata/job/resolved_job.h"

namespace strata {

/// ResolveJob(spec), the engines given.
Result<ResolvedJob> ResolveJob(const JobSpec& spec, const FrameworkEngines& engines);

/// ResolveJob(request), the engines given.
Result<ResolvedJob> ResolveJob(const JobRequest& request, const FrameworkEngines& engines);

}  // namespace strata

#endif  // STRATA_JOB_RESOLVE_WITH_ENGINES_H_

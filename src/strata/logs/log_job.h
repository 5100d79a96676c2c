// The job a log is recomputed against, from a job file or name and --set overrides (as
// `strata memory` takes them). One function, so the shared job views can replace it.
#ifndef STRATA_LOGS_LOG_JOB_H_
#define STRATA_LOGS_LOG_JOB_H_

#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/logs/log_mfu.h"
#include "strata/logs/titan_header.h"

namespace strata {

/// Loads and validates the job (job/ResolveJob), then takes what the recomputation needs: the
/// model, the GPU's dense bf16 peak, the GPU count, the sequence lengths, the batch and the
/// recompute; plus every catalog GPU's peak, to recognise an MFU against the wrong one.
/// Without `job_name`, the job is `model` and the overrides alone (the log's own job, whose
/// missing sections the error names); never the reference job, whose numbers are not the log's.
Result<LogJob> LoadLogJob(const std::string& job_name, const std::vector<std::string>& sets,
                          const std::string& model = "");

/// A job the log's trainer ran inside another's: an RL job's actor (the CLI reads the RL job,
/// which this module cannot include). `overrides` come before --model and --set.
struct ActorLogJob {
  std::string job;  // a job file or data/jobs/ name
  std::vector<std::string> overrides;
  double prompt_cap_tokens = 0;  // the RL job's prompt cap (LogJob::prompt_cap_tokens)
  std::string source;            // what LogJob::source says of it
};
Result<LogJob> LoadActorLogJob(const ActorLogJob& actor, const std::vector<std::string>& sets,
                               const std::string& model = "");

/// The job a torchtitan log's header describes, as LoadLogJob takes it: the catalog model its
/// "Building" line names, the GPU its capacity line names, the GPU count from its device mesh
/// (or global / (local x accumulation) batch, data parallel only, when it prints no mesh), the
/// batch and the sequence length; `source` names the line of each. An error names what the
/// header lacks and the --model / --set that gives it.
struct HeaderJob {
  std::string model;
  std::vector<std::string> sets;  // "cluster.gpu=H100 SXM", "batch.global_batch=8", ...
  std::string source;
};
/// `model` (from --model) replaces the header's; `sets` (from --set) answer what it lacks
/// (cluster.gpu for a GPU the catalog does not know) and, applied after, override the rest.
Result<HeaderJob> JobFromTitanHeader(const TitanHeader& header, const std::string& model = "",
                                     const std::vector<std::string>& sets = {});

}  // namespace strata

#endif  // STRATA_LOGS_LOG_JOB_H_

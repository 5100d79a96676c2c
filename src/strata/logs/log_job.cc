#include "strata/logs/log_job.h"

#include "strata/core/file_io.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/job/job_spec.h"
#include "strata/job/job_validation.h"
#include "strata/model/model_catalog.h"
#include "strata/sim/mfu_job.h"

namespace strata {

Result<LogJob> LoadLogJob(const std::string& job_name, const std::vector<std::string>& sets,
                          const std::string& model) {
  // `--set` alone used to start from the reference job: its GPU count, lengths and recompute
  // changed the log's MFU and HFU, and its file was quoted in the log's errors.
  if (job_name.empty() && model.empty()) {
    return InvalidInput("--set changes a job, and no job was given")
        .InField("--set")
        .WithHint(
            "give the log's job: --job FILE|NAME, or --model NAME with --set cluster.gpu=G "
            "--set cluster.gpus_per_node=N --set cluster.nodes=N --set batch.micro_batch=N "
            "--set batch.global_batch=N --set sequence.max_tokens=N");
  }
  std::vector<std::string> overrides = sets;
  if (!job_name.empty() && !model.empty()) overrides.insert(overrides.begin(), "model=" + model);
  STRATA_ASSIGN_OR_RETURN(JobSpec spec, job_name.empty() ? BuildJobSpec(model, overrides)
                                                         : LoadJobSpec(job_name, overrides));
  STRATA_ASSIGN_OR_RETURN(Job job, ResolveJob(spec));
  LogJob j;
  j.model = job.model;
  j.gpu_name = job.gpu().name;
  j.peak_per_gpu = job.gpu().bf16_dense;
  j.gpus = job.spec.cluster.world();
  j.seq_max_tokens = job.spec.sequence.max_tokens;
  j.seq_mean_tokens =
      job.spec.sequence.mean_tokens > 0 ? job.spec.sequence.mean_tokens : j.seq_max_tokens;
  j.global_batch = static_cast<double>(job.spec.global_batch);
  j.recompute = RecomputeOf(job.spec);
  j.include_mtp = job.spec.mtp;
  STRATA_ASSIGN_OR_RETURN(auto entry, FindCatalogModel(job.model.name));
  if (entry) j.nominal_active_params = entry->nominal_active_params;
  STRATA_ASSIGN_OR_RETURN(auto catalog, LoadGpuCatalog(DataDir() + "/gpus.yaml"));
  for (const auto& g : catalog) j.other_peaks.emplace_back(g.name, g.bf16_dense);
  return j;
}

}  // namespace strata

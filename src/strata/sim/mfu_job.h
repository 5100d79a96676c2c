// MFU of a resolved job: the one place that turns a job (model, GPU count, sequence lengths,
// recompute, throughput) into MfuInputs, chooses the peak to divide by, and refuses results that
// cannot be true (MFU or HFU above 100% means the throughput or the job is wrong).
#ifndef STRATA_SIM_MFU_JOB_H_
#define STRATA_SIM_MFU_JOB_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "strata/core/result.h"
#include "strata/job/resolved_job.h"
#include "strata/sim/mfu.h"

namespace strata {

/// The GPU's dense tensor-core peak for `dtype` ("bf16" or "fp8"); an error naming the GPU when
/// it has no such tensor cores.
Result<FlopPerSecond> DensePeak(const GpuSpec& gpu, std::string_view dtype);

struct MfuOptions {
  std::string_view peak_dtype = "bf16";
  std::optional<int64_t> nominal_active_params;  // default: data/models/catalog.yaml
};

/// MFU and HFU of the job at its throughput. Errors: no throughput in the job; MFU or HFU over
/// 100% of the peak (the error names the throughput and what to check).
Result<MfuReport> ComputeJobMfu(const ResolvedJob& job, const MfuOptions& options = {});

}  // namespace strata

#endif  // STRATA_SIM_MFU_JOB_H_

#include "strata/sim/mfu_job.h"

#include <fmt/format.h>

#include <algorithm>

#include "strata/core/strings.h"
#include "strata/model/model_catalog.h"
#include "strata/sim/recompute_share.h"
#include "strata/sim/step_job.h"
#include "strata/sim/step_model.h"

namespace strata {

Result<FlopPerSecond> DensePeak(const GpuSpec& gpu, std::string_view dtype) {
  if (dtype == "bf16") return gpu.bf16_dense;
  if (dtype == "fp8") {
    if (!gpu.has_fp8()) {
      return InvalidInput(gpu.name + " has no FP8 tensor cores")
          .InField("--peak-dtype")
          .WithHint("use --peak-dtype bf16");
    }
    return gpu.fp8_dense;
  }
  return InvalidInput(fmt::format("unknown peak dtype '{}'", dtype))
      .InField("--peak-dtype")
      .WithHint("expected one of: bf16, fp8");
}

Result<MfuReport> ComputeJobMfu(const ResolvedJob& job, const MfuOptions& options) {
  if (!job.throughput) {
    return InvalidInput(fmt::format("MFU needs the job's throughput, and {} gives none",
                                    job.spec.file.empty() ? "the job" : job.spec.file))
        .InField("throughput")
        .WithHint(
            "give --tokens-per-s N, or --step-time T (with --tokens-per-step N, else "
            "global batch x mean length), or a throughput: section in the job file");
  }
  MfuInputs in;
  in.model = job.model;
  in.sequence = job.step.sequence;
  STRATA_ASSIGN_OR_RETURN(in.throughput,
                          ThroughputFromRate(job.throughput->tokens_per_s, job.world()));
  STRATA_ASSIGN_OR_RETURN(in.peak_per_gpu, DensePeak(job.gpu(), options.peak_dtype));
  in.gpu_name = job.gpu().name;
  const RecomputeShare recompute = RecomputeShareOf(
      job.spec, static_cast<int64_t>(job.model.layers.size()), job.layout().pp, job.layout().vpp);
  in.recompute = recompute.hfu_kind();
  in.recompute_layer_fraction = recompute.full_layer_fraction;
  in.include_mtp = job.spec.mtp;
  if (options.nominal_active_params) {
    in.nominal_active_params = options.nominal_active_params;
  } else {
    STRATA_ASSIGN_OR_RETURN(auto entry, FindCatalogModel(in.model.name));
    if (entry) in.nominal_active_params = entry->nominal_active_params;
  }
  if (job.spec.adapter.on() || !job.spec.frozen.empty()) {
    STRATA_ASSIGN_OR_RETURN(const StepSetup setup, PrepareStep(job));
    in.trained_flop_adjustment = TrainedFlopAdjustmentPerToken(setup.tables, setup.layout.frozen);
  }
  MfuReport report = ComputeMfu(in);
  // A GPU cannot do more than its peak: above 100% the inputs are wrong, not the GPU fast.
  for (const MfuPoint& point : report.points) {
    double worst = point.hfu;
    for (const MfuRow& row : point.rows) worst = std::max(worst, row.mfu);
    if (worst > 1.0) {
      return InvalidInput(
                 fmt::format(
                     "{:.2f}% of the {} dense peak at {} tokens/s on {} x {} ({}): no GPU runs "
                     "above its peak, so the throughput or the job is wrong",
                     100.0 * worst, options.peak_dtype,
                     GroupDigits(job.throughput->tokens_per_s, 1), job.world(), job.gpu().name,
                     point.label))
          .InField("throughput")
          .WithHint(
              "check the tokens/s (whole job, not per GPU), the GPU count, the model and "
              "the sequence lengths of the job");
    }
  }
  return report;
}

}  // namespace strata

#include "strata/sim/step_job.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata {

StepLayout StepLayoutOf(const ResolvedJob& job) {
  const JobSpec& spec = job.spec;
  StepLayout s;
  s.layout = job.layout;
  s.micro_batch = job.step.micro_batch;
  s.micro_batches = std::max<int64_t>(1, job.step.micro_batches);
  s.recompute = spec.recompute.granularity;
  if (s.recompute == RecomputeGranularity::kFull &&
      spec.recompute.method == RecomputeMethod::kBlock) {
    // block: only the first num_layers layers of each (virtual) stage are recomputed.
    const double per_stage = static_cast<double>(job.model.layers.size()) /
                             static_cast<double>(job.layout.pp * job.layout.vpp);
    s.recompute_layer_fraction =
        std::min(1.0, static_cast<double>(spec.recompute.num_layers) / per_stage);
  }
  s.overlap = spec.overlap;
  s.distributed_optimizer = spec.optimizer.distributed;
  s.param_bytes = DTypeBytes(spec.param_dtype);
  s.grad_bytes = DTypeBytes(spec.grad_dtype);
  s.master_bytes = DTypeBytes(spec.optimizer.master_dtype);
  s.moment_bytes = DTypeBytes(spec.optimizer.moment_dtype);
  s.sharding = spec.sharding;
  s.fp8 = spec.fp8;
  return s;
}

Result<StepSetup> PrepareStep(const ResolvedJob& job) {
  if (job.layout.world() > job.cluster.gpus_per_node &&
      job.cluster.DataNicBandwidthPerNode().value() <= 0) {
    return InvalidInput(
               fmt::format("the job spans {} nodes but its cluster describes no data NICs, "
                           "so the network between nodes is unknown",
                           (job.layout.world() + job.cluster.gpus_per_node - 1) /
                               job.cluster.gpus_per_node))
        .InField("cluster")
        .WithHint(
            "name a cluster file in the job (cluster: h20-5x8) or give one with --set "
            "cluster=PATH");
  }
  StepSetup setup{job, {}, {}, {}};
  STRATA_ASSIGN_OR_RETURN(setup.efficiency, LoadKernelEfficiency());
  StepTableInputs in;
  in.model = &setup.job.model;
  in.sequence = job.step.sequence;
  in.packed = job.spec.sequence.packing;
  in.gpu = &setup.job.gpu;
  in.efficiency = &setup.efficiency;
  in.mtp = job.spec.mtp;
  in.cross_entropy = job.spec.cross_entropy;
  setup.tables = BuildStepTables(in);
  setup.layout = StepLayoutOf(job);
  return setup;
}

}  // namespace strata

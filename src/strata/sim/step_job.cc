#include "strata/sim/step_job.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/hw/gpu_catalog.h"

namespace strata {

Result<Cluster> ClusterForJob(const JobSpec& spec) {
  if (!spec.cluster.name.empty()) return LoadCluster(spec.cluster.name);
  auto gpu = FindGpu(spec.cluster.gpu);
  if (!gpu.ok()) return gpu.error();
  std::vector<std::string> names = ShippedClusterNames();
  for (const std::string& name : names) {
    auto cluster = LoadCluster(name);
    if (!cluster.ok()) continue;
    if (cluster->gpu.name == gpu->name && cluster->gpus_per_node == spec.cluster.gpus_per_node) {
      cluster->nodes = spec.cluster.nodes;
      return cluster;
    }
  }
  return InvalidInput(fmt::format("no shipped cluster has {} GPUs of type {} per node, so the "
                                  "network between the nodes is unknown",
                                  spec.cluster.gpus_per_node, gpu->name))
      .InField("cluster")
      .WithHint(fmt::format("give a cluster file (cluster: path.yaml); shipped: {}",
                            fmt::join(names, ", ")));
}

Result<SequenceLengths> SequenceOf(const JobSpec& spec) {
  const SequenceSpec& s = spec.sequence;
  if (!s.histogram.empty()) return LoadSequenceHistogram(s.histogram);
  if (s.mean_tokens > 0 && s.mean_tokens < s.max_tokens) {
    return SequenceLengths::MeanMax(s.mean_tokens, s.max_tokens);
  }
  return SequenceLengths::Fixed(s.max_tokens);
}

StepLayout StepLayoutOf(const JobSpec& spec, int64_t layers) {
  StepLayout s;
  s.layout = spec.layout;
  s.micro_batch = spec.micro_batch;
  s.micro_batches = std::max<int64_t>(1, spec.num_micro_batches());
  s.recompute = spec.recompute.granularity;
  if (s.recompute == RecomputeGranularity::kFull && spec.recompute.method == RecomputeMethod::kBlock) {
    // block: only the first num_layers layers of each (virtual) stage are recomputed.
    const double per_stage = static_cast<double>(layers) /
                             static_cast<double>(spec.layout.pp * spec.layout.vpp);
    s.recompute_layer_fraction =
        std::min(1.0, static_cast<double>(spec.recompute.num_layers) / per_stage);
  }
  s.overlap = spec.overlap;
  s.distributed_optimizer = spec.optimizer.distributed;
  s.param_bytes = DTypeBytes(spec.param_dtype);
  s.grad_bytes = DTypeBytes(spec.grad_dtype);
  s.master_bytes = DTypeBytes(spec.optimizer.master_dtype);
  s.moment_bytes = DTypeBytes(spec.optimizer.moment_dtype);
  return s;
}

Result<StepSetup> PrepareStep(const Job& job) {
  StepSetup setup{job, {}, {}, {}, {}};
  STRATA_ASSIGN_OR_RETURN(setup.cluster, ClusterForJob(job.spec));
  if (setup.cluster.world_size() < job.spec.layout.world()) {
    return InvalidInput(fmt::format("the layout needs {} GPUs; cluster '{}' has {}",
                                    job.spec.layout.world(), setup.cluster.name,
                                    setup.cluster.world_size()))
        .InField("cluster");
  }
  STRATA_ASSIGN_OR_RETURN(setup.efficiency, LoadKernelEfficiency());
  STRATA_ASSIGN_OR_RETURN(SequenceLengths seq, SequenceOf(job.spec));
  StepTableInputs in;
  in.model = &setup.job.model;
  in.sequence = seq;
  in.packed = job.spec.sequence.packing;
  in.gpu = &setup.job.gpu;
  in.efficiency = &setup.efficiency;
  in.mtp = job.spec.mtp;
  in.cross_entropy = job.spec.cross_entropy;
  setup.tables = BuildStepTables(in);
  setup.layout = StepLayoutOf(job.spec, static_cast<int64_t>(job.model.layers.size()));
  return setup;
}

}  // namespace strata

// strata map: the cluster's bandwidth map from HBM down to storage and, for a layout, which
// parallel group talks on which level, how much and how often. With no arguments: the reference
// cluster (data/clusters/h20-5x8.yaml) and the reference job (TP1 PP1 EP8 DP40 of
// Qwen3.6-35B-A3B).
#include <algorithm>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "strata/cli/cli_common.h"
#include "strata/cli/commands.h"
#include "strata/comm/collective_cost.h"
#include "strata/comm/map_report.h"
#include "strata/hw/cluster.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/hw/interconnects.h"
#include "strata/job/job_spec.h"
#include "strata/job/placement.h"
#include "strata/model/model_config.h"

namespace strata::cli {
namespace {

struct MapOptions {
  std::string cluster = "h20-5x8";
  std::string job = kReferenceJobName;
  std::string model;
  std::optional<int64_t> tp, pp, cp, ep, etp, dp, micro_batch, micro_batches;
  std::optional<double> seq;
  std::string rank_order = kDefaultRankOrder;
  bool no_layout = false;
  bool json = false;
  std::string output;
};

// The layout: the job's, with any flag replacing its value. When TP, PP or CP change and DP is
// not given, DP fills the cluster (world / (TP x PP x CP)), as megatron-core derives it.
Result<ParallelLayout> Layout(const MapOptions& o, ParallelLayout l, int64_t world) {
  if (o.tp) l.tp = *o.tp;
  if (o.pp) l.pp = *o.pp;
  if (o.cp) l.cp = *o.cp;
  if (o.ep) l.ep = *o.ep;
  if (o.etp) l.etp = *o.etp;
  if (o.dp) {
    l.dp = *o.dp;
  } else if (o.tp || o.pp || o.cp) {
    const int64_t model_parallel = l.tp * l.pp * l.cp;
    if (model_parallel < 1 || world % model_parallel != 0) {
      return InvalidInput(fmt::format("TP x PP x CP = {} does not divide the {} GPUs of the "
                                      "cluster",
                                      model_parallel, world))
          .InField("--tp/--pp/--cp")
          .WithHint("give --dp explicitly to use part of the cluster");
    }
    l.dp = world / model_parallel;
  }
  if (l.world() > world) {
    return InvalidInput(fmt::format("the layout needs TP x PP x CP x DP = {} GPUs, the cluster has {}",
                                    l.world(), world))
        .InField("--dp");
  }
  return l;
}

// The job names the GPUs it was written for; placing it on another cluster is allowed (that is
// how one compares clusters) but must not pass silently.
std::string ClusterMismatch(const JobSpec& job, const Cluster& cluster) {
  auto gpu = FindGpu(job.cluster.gpu);
  const bool same_gpu = gpu.ok() && gpu->name == cluster.gpu.name;
  if (same_gpu && job.cluster.nodes == cluster.nodes &&
      job.cluster.gpus_per_node == cluster.gpus_per_node) {
    return "";
  }
  return fmt::format("the job was written for {} x {} {}; its layout is placed on cluster '{}' "
                     "({} x {} {})",
                     job.cluster.nodes, job.cluster.gpus_per_node, job.cluster.gpu, cluster.name,
                     cluster.nodes, cluster.gpus_per_node, cluster.gpu.name);
}

Result<MapReport> Build(const MapOptions& o, std::string& warning) {
  STRATA_ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(o.cluster));
  STRATA_ASSIGN_OR_RETURN(Interconnects links, LoadInterconnects());
  STRATA_ASSIGN_OR_RETURN(CollectiveModel model, CollectiveModel::Create(cluster, links));
  MapReport report{cluster, model.map(), std::nullopt};
  if (o.no_layout) return report;

  STRATA_ASSIGN_OR_RETURN(JobSpec job, LoadJobSpec(o.job));
  warning = ClusterMismatch(job, cluster);
  STRATA_ASSIGN_OR_RETURN(ParallelLayout layout, Layout(o, job.layout, cluster.world_size()));
  const std::string model_name = o.model.empty() ? job.model : o.model;
  STRATA_ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(model_name));

  LayoutSection s;
  s.model = config.name;
  s.rank_order = o.rank_order;
  s.inputs.layout = layout;
  s.inputs.micro_batch = o.micro_batch.value_or(job.micro_batch);
  s.inputs.tokens_per_sample =
      o.seq.value_or(job.sequence.mean_tokens > 0 ? job.sequence.mean_tokens
                                                  : job.sequence.max_tokens);
  const int64_t batch_per_step = s.inputs.micro_batch * layout.dp;
  s.inputs.micro_batches_per_step =
      o.micro_batches.value_or(batch_per_step > 0 ? std::max<int64_t>(1, job.global_batch / batch_per_step) : 1);
  s.inputs.param_bytes = DTypeBytes(job.param_dtype);
  s.inputs.grad_bytes = DTypeBytes(job.grad_dtype);
  s.inputs.distributed_optimizer = job.optimizer.distributed;
  s.inputs.full_recompute = job.recompute.granularity == RecomputeGranularity::kFull;
  if (s.inputs.micro_batch < 1) return InvalidInput("micro batch must be at least 1").InField("--micro-batch");
  if (!(s.inputs.tokens_per_sample > 0)) return InvalidInput("--seq must be positive").InField("--seq");
  if (s.inputs.micro_batches_per_step < 1)
    return InvalidInput("micro batches per step must be at least 1").InField("--micro-batches");

  STRATA_ASSIGN_OR_RETURN(s.groups, PlaceGroups(layout, cluster.gpus_per_node, o.rank_order));
  const auto items = LayoutTraffic(TrafficShapeOf(config, job.mtp), s.inputs);
  STRATA_ASSIGN_OR_RETURN(s.traffic, PriceTraffic(items, s.groups, model));
  report.layout = std::move(s);
  return report;
}

}  // namespace

int RunMap(int argc, char** argv) {
  CLI::App app{"The bandwidth map of a cluster (HBM, GPU fabric, PCIe, data NICs, management "
               "network, storage) and where a layout's traffic runs on it. No arguments: the "
               "reference cluster and job.",
               "strata map"};
  MapOptions o;
  app.add_option("--cluster", o.cluster, "cluster file, or a name under data/clusters/")
      ->capture_default_str();
  app.add_option("--job", o.job, "job file, or a name under data/jobs/ (model, layout, batch)")
      ->capture_default_str();
  app.add_option("--model", o.model, "model config.json or catalog name (default: the job's)");
  app.add_option("--tp", o.tp, "tensor parallel size (default: the job's)");
  app.add_option("--pp", o.pp, "pipeline parallel size");
  app.add_option("--cp", o.cp, "context parallel size");
  app.add_option("--ep", o.ep, "expert parallel size");
  app.add_option("--etp", o.etp, "expert tensor parallel size");
  app.add_option("--dp", o.dp, "data parallel size (default: fills the cluster)");
  app.add_option("--micro-batch", o.micro_batch, "samples per micro batch");
  app.add_option("--micro-batches", o.micro_batches,
                 "micro batches per step (default: global batch / (micro batch x DP))");
  app.add_option("--seq", o.seq, "tokens per sample (default: the job's mean length)");
  app.add_option("--rank-order", o.rank_order, "megatron-core rank order, fastest first")
      ->capture_default_str();
  app.add_flag("--no-layout", o.no_layout, "the bandwidth map only");
  app.add_flag("--json", o.json, "JSON for scripts");
  app.add_option("-o,--output", o.output, "write to this file (atomically) instead of stdout");
  if (auto code = ParseArgs(app, argc, argv)) return *code;

  std::string warning;
  auto report = Build(o, warning);
  if (!report.ok()) return ReportError(report.error());
  if (!warning.empty()) Warn(warning);
  return EmitOutput(o.json ? DumpJson(MapJson(*report)) : RenderMapText(*report), o.output);
}

}  // namespace strata::cli

#include "strata/preflight/checkpoint.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"
#include "strata/memory/ledger.h"
#include "strata/memory/sharding.h"
#include "strata/memory/static_memory.h"
#include "strata/model/adapter.h"
#include "strata/model/param_count.h"

namespace strata::preflight {
namespace {

std::optional<ModuleKind> WeightKind(const std::string& item_name) {
  for (ModuleKind k : AllModuleKinds()) {
    if (item_name == "weights: " + std::string(ModuleKindName(k))) return k;
  }
  return std::nullopt;
}

// How many distinct shards one GPU's copy of a module kind is: the memory module splits dense
// modules over TP, routed experts over EP x ETP, and keeps router, norms and the vision tower
// whole on every TP rank; under ZeRO-3 and FSDP2 each of those is split again over the
// data-parallel shard group (experts over expert-DP). Multiplying the per-GPU bytes by this
// counts every parameter once.
double ShardWays(ModuleKind k, const Job& job, const ShardGroups& groups) {
  const ParallelLayout& l = job.spec.layout;
  const bool sharded = job.spec.sharding.shards_weights();
  if (k == ModuleKind::kRoutedExperts)
    return static_cast<double>(l.ep * l.etp * (sharded ? groups.expert : 1));
  const auto dp = static_cast<double>(sharded ? groups.dense : 1);
  if (k == ModuleKind::kRouter || k == ModuleKind::kNorms || k == ModuleKind::kVision) return dp;
  return static_cast<double>(l.tp) * dp;
}

// Bytes per parameter of a weight item as the ledger stores it on the GPU: FSDP2's sharded
// parameter in the master dtype, GEMM weights in FP8 under Transformer Engine's fp8 param
// gather, the parameter dtype otherwise (static_memory.cc).
double StoredBytesPerParam(ModuleKind k, const Job& job) {
  if (job.spec.adapter.quantized_base() && IsGemmKind(k)) return Nf4BitsPerWeight() / 8.0;
  if (job.spec.sharding.mode == ShardingMode::kFsdp2)
    return static_cast<double>(DTypeBytes(job.spec.optimizer.master_dtype));
  if (job.spec.fp8.transformer_engine() && job.spec.fp8.param_gather && IsGemmKind(k)) return 1.0;
  return static_cast<double>(DTypeBytes(job.spec.param_dtype));
}

// An item's bytes wherever they are: offload moves them to the host list (same name) and
// leaves 0 on the GPU. A checkpoint holds them either way.
Bytes Anywhere(const LedgerItem& item, const StaticMemory& m) {
  if (item.bytes.count() > 0) return item.bytes;
  for (const LedgerItem& h : m.host) {
    if (h.name == item.name) return h.bytes;
  }
  return item.bytes;
}

}  // namespace

Result<FailureRate> LoadFailureRate(const std::string& path_in) {
  const std::string path = path_in.empty() ? DataDir() + "/checkpoint/failure_rate.yaml" : path_in;
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  STRATA_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, path));
  STRATA_ASSIGN_OR_RETURN(YamlMap m, YamlMap::Of(root, path, ""));
  FailureRate rate;
  STRATA_ASSIGN_OR_RETURN(rate.per_gpu_hour, m.Number("failure_rate_per_gpu_hour"));
  STRATA_ASSIGN_OR_RETURN(rate.derivation, m.String("derivation"));
  STRATA_ASSIGN_OR_RETURN(rate.source, m.String("source"));
  STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
  if (!(rate.per_gpu_hour > 0))
    return m.ErrorAt("failure_rate_per_gpu_hour", "expected a positive rate");
  return rate;
}

std::string_view CheckpointFormatName(CheckpointFormat format) {
  switch (format) {
    case CheckpointFormat::kMegatronTorchDist:
      return "megatron distributed (torch_dist)";
    case CheckpointFormat::kDeepSpeedZero:
      return "DeepSpeed ZeRO (per-rank zero_pp_rank_* files)";
    case CheckpointFormat::kTorchDcp:
      return "torch DCP (FSDP2, torchtitan)";
  }
  return "?";
}

CheckpointFormat CheckpointFormatOf(ShardingMode mode) {
  switch (mode) {
    case ShardingMode::kNone:
    case ShardingMode::kZero1:
      return CheckpointFormat::kMegatronTorchDist;
    case ShardingMode::kZero2:
    case ShardingMode::kZero3:
      return CheckpointFormat::kDeepSpeedZero;
    case ShardingMode::kFsdp2:
      return CheckpointFormat::kTorchDcp;
  }
  return CheckpointFormat::kMegatronTorchDist;
}

CheckpointSizes ComputeCheckpointSizes(const Job& job) {
  const ParallelLayout& l = job.spec.layout;
  const ShardingSpec& sh = job.spec.sharding;
  const ParamBreakdown params = CountParams(job.model);
  const ShardGroups groups = DataShardGroups(job);
  const bool fsdp2 = sh.mode == ShardingMode::kFsdp2;
  const auto param_b = static_cast<double>(DTypeBytes(job.spec.param_dtype));
  const auto master_b = static_cast<double>(DTypeBytes(job.spec.optimizer.master_dtype));
  // FSDP2's sharded parameter is the master copy; its checkpoint has no other weights.
  const bool fsdp2_master = fsdp2 && master_b != param_b;
  CheckpointSizes s;
  s.format = CheckpointFormatOf(sh.mode);
  s.weights_saved = sh.mode != ShardingMode::kZero3 && !fsdp2_master;
  s.world = l.tp * l.pp * l.cp * l.dp;
  // PEFT's save_pretrained and the Trainer's checkpoints hold the adapters and their optimizer
  // state; the frozen base is not written (merging writes the base's size instead).
  s.adapters_only = job.spec.adapter.on();
  // The distributed optimizer's shards are disjoint within a shard group; HSDP's replicas of
  // the group are written once.
  const double optimizer_ranks =
      static_cast<double>(s.world / l.pp) / static_cast<double>(sh.replicate);
  Bytes most_loaded;
  for (int64_t stage = 0; stage < l.pp; ++stage) {
    const StaticMemory m = ComputeStaticMemory(job, params, stage);
    double gpu_params = 0, unique_params = 0;
    Bytes adapter_gpu;
    for (const LedgerItem& w : m.weights) {
      const std::optional<ModuleKind> k = WeightKind(w.name);
      if (!k) {
        // The adapters: split over TP like the attention and MLP layers they sit on.
        if (w.name.starts_with("weights: adapters")) {
          adapter_gpu += Anywhere(w, m);
          s.adapter_total += Anywhere(w, m) * ShardWays(ModuleKind::kAttention, job, groups);
        }
        continue;
      }
      const double n = Anywhere(w, m).count() / StoredBytesPerParam(*k, job);
      gpu_params += n;
      unique_params += n * ShardWays(*k, job, groups);
    }
    s.weights_total += Bytes::Count(unique_params * param_b);
    const Bytes master =
        fsdp2_master ? Bytes::Count(gpu_params * master_b) : Anywhere(m.master_weights, m);
    const Bytes moments = Anywhere(m.moments, m);
    if (fsdp2_master) {
      s.master_total += Bytes::Count(unique_params * master_b);
    } else if (sh.shards_optimizer()) {
      s.master_total += master * optimizer_ranks;
    } else if (gpu_params > 0) {
      // Without sharding each rank holds the states of all its weights: they dedup like them.
      s.master_total += master * (unique_params / gpu_params);
    }
    if (sh.shards_optimizer()) {
      s.moments_total += moments * optimizer_ranks;
    } else if (gpu_params > 0) {
      s.moments_total += moments * (unique_params / gpu_params);
    }
    const Bytes weights = s.adapters_only ? adapter_gpu
                          : fsdp2_master  ? Bytes()
                                          : Bytes::Count(gpu_params * param_b);
    if (weights + master + moments > most_loaded) {
      most_loaded = weights + master + moments;
      s.weights_per_rank = weights;
      s.master_per_rank = master;
      s.moments_per_rank = moments;
    }
  }
  return s;
}

Result<CheckpointTimes> ComputeCheckpointTimes(const CheckpointSizes& sizes,
                                               const BandwidthMap& map, int64_t nodes) {
  for (const MapLevel& level : map.levels) {
    if (level.kind != MapLevelKind::kStorage) continue;
    CheckpointTimes t;
    t.storage = level.name;
    t.storage_kind = level.calibration;
    t.per_node = level.per_node;
    t.nodes = nodes;
    const BytesPerSecond all_nodes = level.per_node * static_cast<double>(nodes);
    t.checkpoint_write = sizes.checkpoint_total() / all_nodes;
    t.checkpoint_load = sizes.checkpoint_total() / all_nodes;
    t.hf_write = sizes.hf_total() / level.per_node;
    t.hf_load = sizes.hf_total() / level.per_node;
    return t;
  }
  return InvalidInput(
             fmt::format("cluster '{}' has no storage level in its bandwidth map", map.cluster))
      .InField("storage")
      .WithHint("add a storage entry (e.g. nfs with bandwidth_per_node) to the cluster file");
}

CheckpointInterval ComputeInterval(double rate, int64_t gpus, Seconds cost, Seconds restart) {
  CheckpointInterval c;
  c.failure_rate_per_gpu_hour = rate;
  c.gpus = gpus;
  c.cost = cost;
  c.restart = restart;
  c.mtbf = Seconds::Of(3600.0 / (rate * static_cast<double>(gpus)));
  const double d = cost.s(), m = c.mtbf.s();
  c.young = Seconds::Of(std::sqrt(2 * d * m));
  // Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart dumps",
  // eq. 37: for delta < 2M, tau = sqrt(2 delta M) [1 + sqrt(delta/2M)/3 + (delta/2M)/9] - delta.
  const double x = d / (2 * m);
  c.daly =
      d < 2 * m ? Seconds::Of(std::sqrt(2 * d * m) * (1 + std::sqrt(x) / 3 + x / 9) - d) : c.mtbf;
  const double tau = c.daly.s();
  // Per interval the job pays delta; per failure it loses half an interval of work on average
  // and the restart (first-order model behind Young's formula).
  c.lost_fraction = d / tau + (tau / 2 + restart.s()) / m;
  c.gpu_hours_lost_per_day = c.lost_fraction * static_cast<double>(gpus) * 24.0;
  c.checkpoints_per_day = 86400.0 / (tau + d);
  return c;
}

Result<Cluster> CheckpointCluster(const Job& job, const std::string& flag) {
  if (!flag.empty()) return LoadCluster(flag);
  if (!job.spec.cluster.name.empty()) return LoadCluster(job.spec.cluster.name);
  for (const std::string& name : ShippedClusterNames()) {
    auto c = LoadCluster(name);
    if (c.ok() && c->gpu.name == job.gpu().name &&
        c->gpus_per_node == job.spec.cluster.gpus_per_node)
      return c;
  }
  return InvalidInput(fmt::format("no cluster file describes {} x {} GPUs per node, so there is no "
                                  "storage level to time",
                                  job.gpu().name, job.spec.cluster.gpus_per_node))
      .InField("--cluster")
      .WithHint("pass --cluster <file or name under data/clusters/>");
}

Result<CheckpointPlan> PlanCheckpoint(const Job& job, const BandwidthMap& map,
                                      const FailureRate& rate) {
  CheckpointPlan plan;
  plan.sizes = ComputeCheckpointSizes(job);
  // The job's node count, on the storage of the cluster file that describes its nodes.
  STRATA_ASSIGN_OR_RETURN(plan.times,
                          ComputeCheckpointTimes(plan.sizes, map, job.spec.cluster.nodes));
  plan.interval = ComputeInterval(rate.per_gpu_hour, plan.sizes.world, plan.times.checkpoint_write,
                                  plan.times.checkpoint_load);
  return plan;
}

}  // namespace strata::preflight

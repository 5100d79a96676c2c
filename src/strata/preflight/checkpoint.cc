#include "strata/preflight/checkpoint.h"

#include <fmt/format.h>

#include <cmath>

#include "strata/core/file_io.h"
#include "strata/core/yaml_fields.h"
#include "strata/memory/ledger.h"
#include "strata/memory/static_memory.h"
#include "strata/model/param_count.h"

namespace strata::preflight {
namespace {

// How many distinct shards one GPU's copy of a module kind is: the memory module splits dense
// modules over TP, routed experts over EP x ETP, and keeps router, norms and the vision tower
// whole on every TP rank. Multiplying the per-GPU bytes by this counts every parameter once.
double ShardWays(const std::string& item_name, const ParallelLayout& l) {
  auto is = [&](ModuleKind k) { return item_name == "weights: " + std::string(ModuleKindName(k)); };
  if (is(ModuleKind::kRoutedExperts)) return static_cast<double>(l.ep * l.etp);
  if (is(ModuleKind::kRouter) || is(ModuleKind::kNorms) || is(ModuleKind::kVision)) return 1.0;
  return static_cast<double>(l.tp);
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

CheckpointSizes ComputeCheckpointSizes(const Job& job) {
  const ParallelLayout& l = job.spec.layout;
  const ParamBreakdown params = CountParams(job.model);
  CheckpointSizes s;
  s.world = l.tp * l.pp * l.cp * l.dp;
  const double ranks_per_stage = static_cast<double>(s.world / l.pp);
  for (int64_t stage = 0; stage < l.pp; ++stage) {
    const StaticMemory m = ComputeStaticMemory(job, params, stage);
    Bytes weights, unique;
    for (const LedgerItem& w : m.weights) {
      weights += w.bytes;
      unique += w.bytes * ShardWays(w.name, l);
    }
    const Bytes optimizer = m.master_weights.bytes + m.moments.bytes;
    s.weights_total += unique;
    // The distributed optimizer's shards are disjoint: every rank's shard is written once.
    // Without it, each rank holds the states of all its weights, so they dedup like weights.
    if (job.spec.optimizer.distributed) {
      s.optimizer_total += optimizer * ranks_per_stage;
    } else if (weights.count() > 0) {
      s.optimizer_total += optimizer * (unique / weights);
    }
    if (weights + optimizer > s.weights_per_rank + s.optimizer_per_rank) {
      s.weights_per_rank = weights;
      s.optimizer_per_rank = optimizer;
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
    t.per_node = level.per_node;
    t.nodes = nodes;
    const BytesPerSecond all_nodes = level.per_node * static_cast<double>(nodes);
    t.megatron_write = sizes.megatron_total() / all_nodes;
    t.megatron_load = sizes.megatron_total() / all_nodes;
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

}  // namespace strata::preflight

#include "strata/sim/step_modes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "strata/memory/sharding.h"
#include "strata/sim/step_model.h"

namespace strata {
namespace {

// The DP sub-groups HSDP uses. The replicate dimension is the outer one (torch's
// init_device_mesh((replicate, shard)) and megatron-core's distributed-optimizer instances):
// a shard group spans 1 / replicate of the DP group's nodes with the same ranks per node; a
// replicate group holds one rank per node where the DP group spans nodes.
GroupPlacement ShardGroup(const GroupPlacement& dp, int64_t replicate) {
  GroupPlacement g = dp;
  g.size = dp.size / replicate;
  g.count = dp.count * replicate;
  g.nodes_spanned = std::max<int64_t>(1, dp.nodes_spanned / replicate);
  g.ranks_per_node = std::min(g.size, dp.ranks_per_node);
  g.first_group.clear();
  return g;
}

GroupPlacement ReplicateGroup(const GroupPlacement& dp, int64_t replicate) {
  GroupPlacement g = dp;
  g.size = replicate;
  g.count = dp.count * (dp.size / replicate);
  g.nodes_spanned = std::min(replicate, dp.nodes_spanned);
  g.ranks_per_node = g.nodes_spanned > 1 ? 1 : replicate;
  g.first_group.clear();
  return g;
}

const GroupPlacement* Find(const std::vector<GroupPlacement>& groups, GroupKind kind) {
  return FindGroup(groups, kind);
}

bool IsParamGather(const PricedTraffic& p) { return p.item.op == CollectiveOp::kAllGather; }
bool IsExpert(const PricedTraffic& p) { return p.item.group == GroupKind::kExpertDp; }
bool PerLayer(const PricedTraffic& p) {
  return p.item.frequency == TrafficFrequency::kPerLayerPerMicroBatch;
}

}  // namespace

bool ShardingOwnsDpTraffic(const StepLayout& s) {
  return s.distributed_optimizer && (s.sharding.shards_gradients() || s.sharding.replicate > 1);
}

double LayerPipelinedExposure(double layers, double comm_per_layer, double compute_per_layer) {
  if (layers <= 0 || comm_per_layer <= 0) return 0;
  return comm_per_layer + (layers - 1) * std::max(0.0, comm_per_layer - compute_per_layer);
}

PassExposure PartlyPrefetchedExposure(double layers, double gather_per_layer,
                                      double other_per_layer, double compute_per_layer,
                                      double prefetch_layers) {
  const double g = gather_per_layer;
  const double r = other_per_layer;
  if (layers <= 0 || g + r <= 0) return {};
  const double f = std::clamp(prefetch_layers, 0.0, 1.0);
  const double early = f * g;  // the part of the gather that runs behind the previous layer
  const double overlapped = std::max(0.0, early + r - compute_per_layer);
  const double to_gather = early + r > 0 ? early / (early + r) : 0.0;
  const double later = layers - 1;
  return {g + later * ((1 - f) * g + overlapped * to_gather),
          r + later * overlapped * (1 - to_gather)};
}

Result<std::vector<PricedTraffic>> PriceShardedTraffic(const ModelTrafficShape& model,
                                                       const StepLayout& s,
                                                       const std::vector<GroupPlacement>& groups,
                                                       const CollectiveModel& comm, Detail detail,
                                                       PricingCache* cache) {
  const ParallelLayout& l = s.layout;
  const ShardingSpec& sh = s.sharding;
  const double layers =
      std::max(1.0, static_cast<double>(model.layers) / static_cast<double>(l.pp));
  const double m = static_cast<double>(s.micro_batches);
  // PyTorch's FSDP shards the weights at rest under zero2 too (FSDP1's SHARD_GRAD_OP, FSDP2's
  // reshard_after_forward false): each unit is gathered for its forward and kept to its
  // backward (memory/sharding.h, FsdpHoldingOf, the rule the ledger uses).
  const FsdpHolding holding = FsdpHoldingOf(sh, s.runtime);
  const bool weights_sharded = holding.weights_sharded;
  const bool reshard_after_forward = holding.reshard_after_forward;
  // FP8 all-gather (megatron --fp8-param-gather, torchao enable_fsdp_float8_all_gather).
  const double gather_bytes = GatherBytesPerParam(s);
  const double grad_bytes = static_cast<double>(s.grad_bytes);
  std::vector<PricedTraffic> out;

  auto add = [&](const GroupPlacement& group, GroupKind kind, std::string purpose, CollectiveOp op,
                 double bytes, TrafficFrequency f, double per_unit, double per_step) -> Status {
    if (group.size <= 1 || bytes <= 0) return OkStatus();
    PricedTraffic& p = out.emplace_back();
    p.item = {kind, std::move(purpose), op, Bytes::Count(bytes), f, per_unit, per_step};
    Status priced = PriceInto(p.cost, comm, op, p.item.size, ShapeOf(group), detail, cache);
    if (!priced.ok()) {
      Error e = std::move(priced).error();
      e.message = fmt::format("{} group: {}", ToString(kind), e.message);
      return e;
    }
    p.time_per_step = p.cost.time * per_step;
    p.size_per_step = p.item.size * per_step;
    return OkStatus();
  };

  struct Side {
    GroupKind kind;
    const char* what;
    double params_per_rank;     // this rank's TP/PP (or EP/ETP/PP) slice, before sharding
    double trainable_per_rank;  // of which trained: what the gradients and updates carry
  };
  // ZeRO-3 and FSDP gather every weight, frozen ones too (FSDP2 shards and gathers a frozen
  // base as any parameter); the gradients, the optimizer's updates and their gathers carry the
  // trained parameters alone.
  const GroupKind dense_kind = l.cp > 1 ? GroupKind::kDpCp : GroupKind::kDp;
  std::vector<Side> sides = {
      {dense_kind, "non-expert", model.NonExpertPerRank(l), model.TrainableNonExpertPerRank(l)}};
  if (model.expert_params > 0) {
    sides.push_back(
        {GroupKind::kExpertDp, "expert", model.ExpertPerRank(l), model.TrainableExpertPerRank(l)});
  }
  for (const Side& side : sides) {
    const GroupPlacement* dp = Find(groups, side.kind);
    if (dp == nullptr)
      return InvalidInput(fmt::format("no placement for the {} group", ToString(side.kind)));
    const int64_t replicate = std::min<int64_t>(sh.replicate, dp->size);
    const GroupPlacement shard = replicate > 1 ? ShardGroup(*dp, replicate) : *dp;
    const std::string of = fmt::format("{} parameters", side.what);
    // PyTorch's FSDP1 gathers and reduce-scatters each unit's FlatParameter padded to a multiple
    // of the shard group, W x ceil(N / W) elements (pytorch/pytorch fe03cf69
    // torch/distributed/fsdp/_flat_param.py, _get_unpadded_shard; 00ae0bc9 _runtime_utils.py,
    // _post_backward_hook's F.pad); its limit_all_gathers (at most two all-gathers in flight)
    // caps the prefetch at the next unit, as PartlyPrefetchedExposure's min(1, prefetch) does.
    const auto w = static_cast<double>(std::max<int64_t>(1, shard.size));
    // FSDP's gradient accumulation without a sync (sharding.sync_each_micro_batch false, the HF
    // Trainer's no_sync): the reduce-scatters run in the last micro batch's backward only.
    const bool unsynced = !sh.sync_each_micro_batch && m > 1 && (holding.fsdp1 || holding.fsdp2);
    auto padded = [&](double n) {
      return s.runtime == ShardingRuntime::kFsdp1 ? w * std::ceil(n / w) : n;
    };
    const double per_layer = padded(side.params_per_rank / layers);
    const double trained_per_layer = padded(side.trainable_per_rank / layers);
    if (weights_sharded) {
      // Per layer per micro batch: a gather before the forward, another before the backward
      // unless the forward kept the gathered weights; a reduce-scatter after the backward.
      // (The embedding and output layer are spread over the layers: the same bytes per step.)
      // Under torch's pipeline schedules (FSDP2 with PP, torchtitan) the stage defers the
      // gradient sync to the last micro batch's backward and keeps the weights gathered after
      // every other backward (torch/distributed/pipelining/stage.py,
      // backward_maybe_with_nosync: set_requires_gradient_sync(False) and
      // set_reshard_after_backward(False) until last_backward): one reduce-scatter per layer a
      // step, and, without reshard after forward, one gather per layer a step. The items keep
      // their per-layer frequency with fewer calls, so the exposure spreads them as one micro
      // batch's worth over the step.
      const bool pipelined = sh.mode == ShardingMode::kFsdp2 && l.pp > 1 && !s.megatron_core;
      // DeepSpeed ZeRO-3 under full recompute: the recomputed forward runs the modules' forward
      // hooks again (fetch, then release after it), before the backward hooks fetch once more:
      // a third gather per recomputed layer. FSDP (1 and 2) recomputes inside the unit's
      // unshard for its backward; megatron-core and torchtitan issue per-unit gathers too.
      const bool deepspeed_recompute = sh.mode == ShardingMode::kZero3 && s.deepspeed() &&
                                       s.recompute == RecomputeGranularity::kFull &&
                                       reshard_after_forward;
      const double gathers = (reshard_after_forward ? 2.0 : 1.0) +
                             (deepspeed_recompute ? s.recompute_layer_fraction : 0.0);
      const double gather_rounds = pipelined && !reshard_after_forward ? 1.0 : m;
      const double reduce_rounds = pipelined || unsynced ? 1.0 : m;
      STRATA_RETURN_IF_ERROR(
          add(shard, side.kind,
              fmt::format(
                  "ZeRO-3/FSDP: gather {} per layer ({}{})", of,
                  deepspeed_recompute     ? "forward + recompute + backward"
                  : reshard_after_forward ? "forward + backward"
                                          : "forward",
                  gather_rounds < m ? ", once a step: kept gathered over the micro batches" : ""),
              CollectiveOp::kAllGather, per_layer * gather_bytes,
              TrafficFrequency::kPerLayerPerMicroBatch, gathers, gathers * layers * gather_rounds));
      STRATA_RETURN_IF_ERROR(
          add(shard, side.kind,
              fmt::format("ZeRO-3/FSDP: reduce-scatter gradients of {} per layer{}", of,
                          reduce_rounds < m ? (pipelined ? ", once a step: the pipeline defers "
                                                           "the sync to the last micro batch"
                                                         : ", once a step: no_sync defers the "
                                                           "sync to the last micro batch")
                                            : ""),
              CollectiveOp::kReduceScatter, trained_per_layer * grad_bytes,
              TrafficFrequency::kPerLayerPerMicroBatch, 1.0, layers * reduce_rounds));
    } else if (sh.shards_gradients()) {
      // ZeRO-2: sharded gradients cannot accumulate whole, so every micro batch reduces them
      // (bucket by bucket, as layers finish their backward).
      STRATA_RETURN_IF_ERROR(
          add(shard, side.kind,
              unsynced ? fmt::format("ZeRO-2: reduce-scatter gradients of {} once a step: no_sync "
                                     "defers the sync to the last micro batch",
                                     of)
                       : fmt::format("ZeRO-2: reduce-scatter gradients of {} per micro batch", of),
              CollectiveOp::kReduceScatter, trained_per_layer * grad_bytes,
              TrafficFrequency::kPerLayerPerMicroBatch, 1.0, layers * (unsynced ? 1.0 : m)));
      STRATA_RETURN_IF_ERROR(add(shard, side.kind, fmt::format("updated {}", of),
                                 CollectiveOp::kAllGather, side.trainable_per_rank * gather_bytes,
                                 TrafficFrequency::kPerStep, 1.0, 1.0));
    } else {
      // ZeRO-1 over the shard group (HSDP / distributed-optimizer instances).
      STRATA_RETURN_IF_ERROR(add(shard, side.kind, fmt::format("gradients of {}", of),
                                 CollectiveOp::kReduceScatter, side.trainable_per_rank * grad_bytes,
                                 TrafficFrequency::kPerStep, 1.0, 1.0));
      STRATA_RETURN_IF_ERROR(add(shard, side.kind, fmt::format("updated {}", of),
                                 CollectiveOp::kAllGather, side.trainable_per_rank * gather_bytes,
                                 TrafficFrequency::kPerStep, 1.0, 1.0));
    }
    if (replicate > 1) {
      // HSDP: the shard's gradient is averaged over the replicas once per step.
      STRATA_RETURN_IF_ERROR(
          add(ReplicateGroup(*dp, replicate), side.kind,
              fmt::format("HSDP: all-reduce gradient shard of {} over replicas", of),
              CollectiveOp::kAllReduce,
              side.trainable_per_rank / static_cast<double>(shard.size) * grad_bytes,
              TrafficFrequency::kPerStep, 1.0, 1.0));
    }
  }
  return out;
}

namespace {
// PyTorch's FSDP1 and FSDP2 issue their all-gathers on an unshard stream and their
// reduce-scatters on a post-backward stream, always: no switch keeps them on the compute stream
// (FSDP1: pytorch/pytorch 00ae0bc9 torch/distributed/fsdp/_runtime_utils.py, _unshard runs
// handle.unshard() under state._unshard_stream, _post_backward_hook reduces under
// state._post_backward_stream). DeepSpeed's overlap_comm is DeepSpeed's alone.
bool TorchFsdp(const StepLayout& s) {
  return s.runtime == ShardingRuntime::kFsdp1 || s.runtime == ShardingRuntime::kFsdp2;
}
}  // namespace

bool ShardedOnComputeStream(const StepLayout& s) {
  const bool zero23 =
      s.sharding.mode == ShardingMode::kZero2 || s.sharding.mode == ShardingMode::kZero3;
  return zero23 && !s.megatron_core && !TorchFsdp(s) && !s.sharding.OverlapComm();
}

bool ShardedGradsOverlapBackward(const StepLayout& s) {
  const bool zero23 =
      s.sharding.mode == ShardingMode::kZero2 || s.sharding.mode == ShardingMode::kZero3;
  if (!zero23) return true;
  if (s.megatron_core) return s.overlap.grad_reduce;
  if (TorchFsdp(s)) return true;
  return s.sharding.OverlapComm();
}

std::string ShardedOverlapRule(const StepLayout& s) {
  const bool zero23 =
      s.sharding.mode == ShardingMode::kZero2 || s.sharding.mode == ShardingMode::kZero3;
  if (!zero23) return {};
  if (s.megatron_core) {
    return s.overlap.grad_reduce
               ? "megatron-core: overlap.grad_reduce on (--overlap-grad-reduce), the "
                 "reduce-scatters run behind the backward (y the layer's backward)"
               : "megatron-core: overlap.grad_reduce off (--overlap-grad-reduce not given), the "
                 "reduce-scatters wait for the compute stream: y = 0 for r, every one exposed "
                 "(sharding.overlap_comm is DeepSpeed's and does not apply)";
  }
  if (TorchFsdp(s)) {
    return fmt::format(
        "PyTorch {}: all-gathers on its unshard stream, reduce-scatters on its post-backward "
        "stream, behind compute (sharding.overlap_comm is DeepSpeed's and does not apply)",
        s.runtime == ShardingRuntime::kFsdp1
            ? "FSDP1 (FullyShardedDataParallel; padded FlatParameters, limit_all_gathers: one "
              "unit prefetched at most)"
            : "FSDP2 (fully_shard)");
  }
  return s.sharding.OverlapComm()
             ? fmt::format(
                   "DeepSpeed's overlap_comm on{}: gathers and reduce-scatters on their "
                   "own streams behind compute",
                   s.sharding.overlap_comm_given ? "" : " (its default under zero3)")
             : fmt::format(
                   "DeepSpeed's overlap_comm off{}: every gather and reduce-scatter on the "
                   "compute stream, y = 0, all exposed",
                   s.sharding.overlap_comm_given ? "" : " (its default under zero1/zero2)");
}

ShardedExposure ExposeShardedTraffic(const std::vector<PricedTraffic>& sharded, const StepLayout& s,
                                     double layers_per_stage, Seconds forward_mb,
                                     Seconds backward_mb) {
  const double m = static_cast<double>(s.micro_batches);
  if (ShardedOnComputeStream(s)) {
    // DeepSpeed with overlap_comm false enqueues every gather and reduce-scatter on the compute
    // stream, in order with the layers: none of it hides.
    ShardedExposure all;
    for (const PricedTraffic& p : sharded) {
      (IsExpert(p) ? (IsParamGather(p) ? all.edp_param : all.edp_grad)
                   : (IsParamGather(p) ? all.dp_param : all.dp_grad)) += p.time_per_step.s();
    }
    return all;
  }
  const double y_fwd = forward_mb.s() / layers_per_stage;
  const double y_bwd = backward_mb.s() / layers_per_stage;
  // Per layer per micro batch: forward gathers; backward gathers (reshard) + reduce-scatters.
  struct Pass {
    double dense_grad = 0, dense_param = 0, expert_grad = 0, expert_param = 0;
    double Total() const { return dense_grad + dense_param + expert_grad + expert_param; }
  };
  Pass fwd, bwd, once;  // once: per-step items (ZeRO-2's weight gather, HSDP's all-reduce)
  for (const PricedTraffic& p : sharded) {
    const double per_mb_layer = p.time_per_step.s() / (m * layers_per_stage);
    if (!PerLayer(p)) {
      (IsExpert(p) ? (IsParamGather(p) ? once.expert_param : once.expert_grad)
                   : (IsParamGather(p) ? once.dense_param : once.dense_grad)) +=
          p.time_per_step.s();
      continue;
    }
    if (IsParamGather(p)) {
      // calls_per_unit gathers per layer: one in the forward, the other (if any) in backward.
      const double each = per_mb_layer / p.item.calls_per_unit;
      (IsExpert(p) ? fwd.expert_param : fwd.dense_param) += each;
      (IsExpert(p) ? bwd.expert_param : bwd.dense_param) += per_mb_layer - each;
    } else {
      (IsExpert(p) ? bwd.expert_grad : bwd.dense_grad) += per_mb_layer;
    }
  }
  ShardedExposure e;
  auto spread = [&](const Pass& pass, double exposed) {
    const double total = pass.Total();
    if (total <= 0) return;
    const double share = exposed / total;
    e.dp_grad += pass.dense_grad * share;
    e.dp_param += pass.dense_param * share;
    e.edp_grad += pass.expert_grad * share;
    e.edp_param += pass.expert_param * share;
  };
  // A pass's gathers and reduce-scatters are exposed separately, then shared between the dense
  // and expert groups in proportion to their link time.
  auto spread_pass = [&](const Pass& pass, const PassExposure& exposed) {
    spread(Pass{0, pass.dense_param, 0, pass.expert_param}, exposed.gather);
    spread(Pass{pass.dense_grad, 0, pass.expert_grad, 0}, exposed.other);
  };
  // The next layer's weight gather starts early only as far as the prefetch reaches (a
  // fraction of a layer when the buffer is smaller); reduce-scatters of the layer just computed
  // run behind the next layer's backward either way. Prefetch 0: every gather waits.
  const double ahead = s.sharding.prefetch_layers;
  auto expose = [&](const Pass& pass, double y) {
    const PassExposure one =
        PartlyPrefetchedExposure(layers_per_stage, pass.dense_param + pass.expert_param,
                                 pass.dense_grad + pass.expert_grad, y, ahead);
    return PassExposure{m * one.gather, m * one.other};
  };
  spread_pass(fwd, expose(fwd, y_fwd));
  if (!ShardedGradsOverlapBackward(s)) {
    // megatron-core without --overlap-grad-reduce: the reduce-scatters wait for compute (y = 0
    // for them), every one exposed; the backward's gathers still run ahead of their layer.
    e.dp_grad += m * layers_per_stage * bwd.dense_grad;
    e.edp_grad += m * layers_per_stage * bwd.expert_grad;
    bwd.dense_grad = bwd.expert_grad = 0;
  }
  spread_pass(bwd, expose(bwd, y_bwd));
  // Per-step items: ZeRO-2's updated-weight gather sits after the optimizer (exposed, unless
  // megatron-style --overlap-param-gather hides it behind the next forward); HSDP's replica
  // all-reduce follows the last backward.
  auto once_exposed = [&](double total, bool overlapped, double capacity) {
    return overlapped ? std::max(total / layers_per_stage, total - capacity) : total;
  };
  Pass grads{once.dense_grad, 0, once.expert_grad, 0};
  Pass params{0, once.dense_param, 0, once.expert_param};
  // Under torch's FSDP2 the per-step gradient item is HSDP's replica all-reduce, which
  // foreach_reduce issues per unit right after that unit's reduce-scatter, on the same side
  // stream, behind the rest of the backward: only the last unit's share waits.
  const bool fsdp2_replicas = s.sharding.mode == ShardingMode::kFsdp2 && !s.megatron_core;
  spread(grads,
         once_exposed(grads.Total(), s.overlap.grad_reduce || fsdp2_replicas, backward_mb.s()));
  spread(params, once_exposed(params.Total(), s.overlap.param_gather, forward_mb.s()));
  return e;
}

Result<std::vector<HostTraffic>> OffloadTraffic(const ModelTrafficShape& model, const StepLayout& s,
                                                double local_params, const CollectiveModel& comm) {
  const ShardingSpec& sh = s.sharding;
  std::vector<HostTraffic> out;
  if (sh.offload_optimizer == OffloadTarget::kNone && sh.offload_param == OffloadTarget::kNone) {
    return out;
  }
  if (sh.offload_optimizer == OffloadTarget::kNvme || sh.offload_param == OffloadTarget::kNvme) {
    return InvalidInput(
               "NVMe offload: the step-time model prices only CPU offload (the NVMe "
               "path's bandwidth is not in the bandwidth map)")
        .InField("sharding.offload_optimizer")
        .WithHint("set the offload target to cpu to get a (faster) bound");
  }
  const MapLevel* pcie = nullptr;
  for (const MapLevel& level : comm.map().levels) {
    if (level.kind == MapLevelKind::kPcie) pcie = &level;
  }
  if (pcie == nullptr) return InvalidInput("the cluster's bandwidth map has no PCIe level");
  // The x16 per-direction line rate: pinned copies reach most of it; an upper bound.
  const double rate = pcie->per_gpu.bytes_per_s();
  auto add = [&](std::string purpose, double bytes) {
    out.push_back({std::move(purpose), pcie->name, Bytes::Count(bytes), Seconds::Of(bytes / rate)});
  };
  const double m = static_cast<double>(s.micro_batches);
  if (sh.offload_optimizer == OffloadTarget::kCpu) {
    add("offload_optimizer: gradient shard to the CPU",
        local_params * static_cast<double>(s.grad_bytes));
    add("offload_optimizer: updated weights back to the GPU",
        local_params * static_cast<double>(s.param_bytes));
  }
  if (sh.offload_param == OffloadTarget::kCpu) {
    // The weight shard lives on the CPU: every gather copies it up first (forward and, when
    // resharded, backward), and each micro batch's gradient shard comes down.
    const double gathers = sh.reshard_after_forward ? 2.0 : 1.0;
    const double shard = local_params;
    (void)model;
    add("offload_param: weight shard to the GPU before each gather",
        gathers * m * shard * static_cast<double>(s.param_bytes));
    if (sh.offload_optimizer != OffloadTarget::kCpu) {
      add("offload_param: gradient shard to the CPU",
          m * shard * static_cast<double>(s.grad_bytes));
    }
  }
  return out;
}

double Fp8CastBytesPerMicroBatch(const StepTables& t, const StepLayout& s, double tokens,
                                 double stage, double recompute_fraction) {
  if (!s.fp8.on()) return 0;
  const ParallelLayout& l = s.layout;
  double forward_elements = 0, backward_elements = 0;  // per token, whole model
  for (const GemmGroup& g : t.gemms) {
    if (g.kind != GemmKind::kDense && g.kind != GemmKind::kExpert) continue;
    if (g.n <= 0 || g.k <= 0) continue;
    // flop_per_token = 2 n k x (GEMM instances a token passes through, top-k included).
    const double instances = g.flop_per_token / (2 * g.n * g.k);
    forward_elements += instances * g.k;
    backward_elements += instances * g.n;
  }
  const double per_token = 4 * (forward_elements * (1 + recompute_fraction) + backward_elements);
  const double activations = per_token * tokens / static_cast<double>(l.tp) * stage;
  const double weights_on_rank = t.traffic.NonExpertPerRank(l) + t.traffic.ExpertPerRank(l);
  const bool torchao =
      s.fp8.recipe == Fp8Recipe::kTorchaoTensorwise || s.fp8.recipe == Fp8Recipe::kTorchaoRowwise;
  const double weight_casts_per_mb =
      torchao ? 1.0 : 1.0 / static_cast<double>(std::max<int64_t>(1, s.micro_batches));
  return activations + 4 * weights_on_rank * weight_casts_per_mb;
}

}  // namespace strata

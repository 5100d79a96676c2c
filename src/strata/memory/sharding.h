// How the job's sharding mode (none, ZeRO-1/2/3, FSDP2, HSDP), offload and FP8 recipe change
// what one GPU holds: the shard group of each state, the gathered weights and reduce-scatter
// buffers of ZeRO-3/FSDP2, the FP8 weight copies Transformer Engine keeps. Formulas:
// docs/formulas.md, "Sharding, offload and FP8".
#ifndef STRATA_MEMORY_SHARDING_H_
#define STRATA_MEMORY_SHARDING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/job/job_validation.h"
#include "strata/memory/ledger.h"
#include "strata/model/param_count.h"

namespace strata {

/// The ranks one state is split over: DP x CP for dense parameters and expert-DP for experts
/// (megatron-core's layout), divided by the HSDP replicate degree.
struct ShardGroups {
  int64_t dense = 1;
  int64_t expert = 1;
  std::string dense_text;   // "DP x CP 8", "DP x CP 8 / replicate 2"
  std::string expert_text;  // "expert-DP 5"
};
/// kNumbersOnly leaves the texts empty.
ShardGroups DataShardGroups(const Job& job, Detail detail = Detail::kExplained);

/// How the job's sharding runtime holds its weights: the one reading of sharding.mode and the
/// runtime (ResolvedJob::runtime) that the static states (static_memory.cc) and the working sets
/// (ComputeModeMemory) share.
///   PyTorch's FSDP (sharding.runtime fsdp1 or fsdp2) keeps every parameter sharded at rest in
///   the dtype the model was built in (the master dtype) and gathers a param-dtype copy per
///   unit: under zero3/fsdp2, and under zero2 too, which it runs as FSDP1's SHARD_GRAD_OP or
///   FSDP2's reshard_after_forward false (each unit stays gathered from its forward through its
///   backward). Only DeepSpeed's and megatron-core's ZeRO-2 replicate the weights.
struct FsdpHolding {
  bool fsdp1 = false;  // FSDP1's FlatParameters (sharding.runtime fsdp1)
  /// FSDP2's per-parameter units: sharding.mode fsdp2 outside FSDP1 (megatron-core's FSDP
  /// included, as before), and the zero2/zero3 modes FSDP2 (fully_shard) runs.
  bool fsdp2 = false;
  bool weights_sharded = false;  // the weights are sharded at rest (over DataShardGroups)
  /// The sharded parameter, in the master dtype, is the optimizer's parameter: no separate
  /// master copy, no param-dtype shard.
  bool master_is_shard = false;
  /// Each unit's gathered weights are freed after its forward (false: kept to its backward).
  bool reshard_after_forward = true;
  /// The collectives run on FSDP's own streams, whose pools keep their buffers cached
  /// (ledger_counters.h).
  bool side_streams = false;
};
FsdpHolding FsdpHoldingOf(const Job& job);
/// The same from a sharding spec and the runtime that runs it (the step model's StepLayout).
FsdpHolding FsdpHoldingOf(const ShardingSpec& sh, ShardingRuntime runtime);

/// One FSDP/ZeRO-3 unit (a decoder layer, the embedding, the output layer) on this GPU after
/// TP/EP, before data-parallel sharding.
struct ShardUnit {
  std::string name;  // "layer 3", "embedding"
  double params = 0;
  double linear = 0;  // of which in GEMM weights (FP8-eligible)
  double trainable = 0;
};
/// kNumbersOnly leaves the units' names empty.
std::vector<ShardUnit> StageUnits(const Job& job, const ParamBreakdown& params, int64_t stage,
                                  Detail detail = Detail::kExplained);

/// GEMM weights on this GPU after TP/EP (attention, linear attention, MLP, shared and routed
/// experts): what FP8 recipes quantise. Embedding, output layer, norms and routers stay bf16.
double StageLinearParams(const Job& job, const ParamBreakdown& params, int64_t stage);

/// The items the sharding mode and FP8 recipe add on the GPU, and what offload moves to host.
struct ModeMemory {
  LedgerItem gathered;        // all-gathered weights live at once (ZeRO-3/FSDP2), fwd and bwd
  LedgerItem reduce_scatter;  // one unit's unsharded gradients before reduce-scatter (bwd)
  /// FSDP2 under a pipeline schedule: every unit's unsharded gradients, accumulated over the
  /// micro batches until the last one's backward (bwd, on the compute stream).
  LedgerItem accumulated;
  /// DeepSpeed's reduce (IPG) bucket buffers: ZeRO-1/2 allocate them at each backward (bwd);
  /// ZeRO-3 at engine start, kept for the whole run (reduce_buckets_kept).
  LedgerItem reduce_buckets;
  bool reduce_buckets_kept = false;
  LedgerItem fp8_copies;  // FP8 weight copies and transposes, from the first forward on
  LedgerItem fp8_state;   // scales and amax history
  /// FSDP2: the all-gather outputs in flight at once on the copy-in stream, which its pool keeps
  /// cached (ledger_counters.h): the largest pair of neighbouring units in forward order. Not
  /// `gathered`: each unit's output is copied out into its parameters' own storage (compute
  /// stream) and freed once the next unit's copy-out is done, whether or not the unit is
  /// resharded after forward.
  Bytes all_gather_in_flight;
  Bytes forward_working() const { return gathered.bytes; }
  Bytes backward_working() const {
    return gathered.bytes + reduce_scatter.bytes + accumulated.bytes +
           (reduce_buckets_kept ? Bytes() : reduce_buckets.bytes);
  }
  /// What the engine allocates at its start and keeps: part of the after-init memory.
  Bytes kept_from_init() const { return reduce_buckets_kept ? reduce_buckets.bytes : Bytes(); }
  Bytes persistent() const { return fp8_copies.bytes + fp8_state.bytes; }
};
/// kNumbersOnly leaves the items' names, formulas and notes empty; every number is the same.
ModeMemory ComputeModeMemory(const Job& job, const ParamBreakdown& params, int64_t stage,
                             Detail detail = Detail::kExplained);

/// True for the items ComputeModeMemory adds as the runtime's working sets (the gathered
/// weights, the unsharded gradients before their reduce-scatter or accumulated over micro
/// batches, DeepSpeed's reduce buckets): tensors a step allocates and frees, not a model's
/// states, so nothing offloads or keeps them between phases. Needs the explained ledger (names).
bool IsShardingWorkingSet(const LedgerItem& item);

/// PyTorch FSDP1's FlatParameter of `numel` elements padded to a multiple of the `world` ranks
/// it is sharded over: world x ceil(numel / world) (each rank's shard is ceil(numel / world),
/// torch.chunk's first chunk; torch/distributed/fsdp/_flat_param.py, _get_unpadded_shard).
double Fsdp1PaddedNumel(double numel, double world);

/// Bytes per element of the FP8 copies a recipe keeps next to each GEMM weight (rowwise and
/// columnwise data plus block scales); 0 for torchao (casts per GEMM, keeps nothing).
double Fp8CopyBytesPerWeight(const Fp8Spec& fp8);

}  // namespace strata

#endif  // STRATA_MEMORY_SHARDING_H_

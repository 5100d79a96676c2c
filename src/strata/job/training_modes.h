// The ways a job shards and stores its training state beyond megatron-core's defaults: ZeRO
// stages and FSDP2 (with HSDP), CPU/NVMe offload, FP8 recipes. Parsed from the job file's
// `sharding:` and `precision.fp8:` sections; the memory ledger reads them (docs/formulas.md,
// "Sharding, offload and FP8").
#ifndef STRATA_JOB_TRAINING_MODES_H_
#define STRATA_JOB_TRAINING_MODES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

/// What is sharded over the data-parallel group (DP x CP for dense parameters, expert-DP for
/// experts; over the shard group only, under HSDP):
///   none   DDP: nothing (weights, gradients and optimizer state replicated);
///   zero1  optimizer state (megatron-core's distributed optimizer);
///   zero2  optimizer state and gradients (DeepSpeed stage 2);
///   zero3  optimizer state, gradients and weights (DeepSpeed stage 3, megatron FSDP);
///   fsdp2  the same, per parameter (torch FSDP2): the sharded parameter is the fp32 master.
enum class ShardingMode { kNone, kZero1, kZero2, kZero3, kFsdp2 };
inline constexpr size_t kShardingModeCount = 5;
std::string_view ShardingModeName(ShardingMode mode);

/// Whose code runs a job's sharded data parallelism: DeepSpeed's ZeRO (its stage_1_and_2
/// optimizer, or ZeRO-3's per-parameter fetch hooks), PyTorch's FSDP1 (FullyShardedDataParallel)
/// or FSDP2 (fully_shard), megatron-core's own FSDP, or megatron-core's distributed optimizer
/// (ZeRO-1). kUnstated: no sharding (sharding.mode none), or no framework on the chain says.
enum class ShardingRuntime { kUnstated, kDeepSpeed, kFsdp1, kFsdp2, kMegatronFsdp, kMegatron };

/// The runtime as data/frameworks.yaml and a job file spell it ("deepspeed", "fsdp1", "fsdp2",
/// "megatron-fsdp", "megatron"; "unstated").
std::string_view ShardingRuntimeName(ShardingRuntime runtime);

/// The runtime `name` spells, or kUnstated for a name that is none of them.
ShardingRuntime ShardingRuntimeNamed(std::string_view name);

/// Whether `runtime` can run sharding `mode`: DeepSpeed its ZeRO-1/2/3; megatron-core's
/// distributed optimizer ZeRO-1/2 and its FSDP zero3/fsdp2; PyTorch's FSDP1 and FSDP2 zero2
/// (SHARD_GRAD_OP / reshard_after_forward false), zero3 and fsdp2, not zero1 (neither shards
/// the optimizer state alone: FSDP1's strategies are FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD
/// and NO_SHARD, torch/distributed/fsdp/api.py ShardingStrategy). No runtime runs none.
bool ShardingRuntimeRuns(ShardingRuntime runtime, ShardingMode mode);

/// DeepSpeed's offload_optimizer / offload_param device (FSDP2's CPUOffloadPolicy is `cpu` on
/// offload_param and moves parameters, gradients and optimizer state together).
enum class OffloadTarget { kNone, kCpu, kNvme };
std::string_view OffloadTargetName(OffloadTarget target);

/// How FSDP2 groups the parameters into units (one all-gather each):
///   separate  torchtitan's wrapping (pytorch/torchtitan@ae3bea95, apply_fsdp): the embedding,
///             each block, and the final norm with the output layer are units;
///   root      only the blocks are wrapped and the embedding, final norm and output stay in the
///             root unit, which FSDP2 never reshards after forward (gathered from the start of
///             forward to the end of backward): earlier torchtitan (@81c12433) and plain scripts;
///   root_output  the blocks and (when untied) the embedding are units, the final norm and output
///             stay in the root unit: verl's apply_fsdp2 (volcengine/verl v0.5.0,
///             verl/utils/fsdp_utils.py). Tied, the embedding is in the root too (= root).
enum class FsdpUnits { kSeparate, kRoot, kRootOutput };

struct ShardingSpec {
  ShardingMode mode = ShardingMode::kZero1;
  /// The job's sharding.runtime: whose code runs the sharding, where the job says (Accelerate's
  /// fsdp_version, verl's actor strategy). kUnstated: the framework's (data/frameworks.yaml
  /// zero3_runtime / zero12_runtime); ResolvedJob::runtime_by_mode holds the one answer.
  ShardingRuntime runtime = ShardingRuntime::kUnstated;
  FsdpUnits units = FsdpUnits::kSeparate;
  /// The job gave fsdp_units; else the framework's layout applies (ResolvedJob::fsdp2_units:
  /// data/frameworks.yaml `fsdp2_units:`, torchtitan's separate units when none states one).
  bool units_given = false;
  /// FSDP1's use_orig_params (Accelerate's fsdp_use_orig_params; verl's fsdp_config key): the
  /// FlatParameter is built padded to a multiple of the shard group (pytorch/pytorch fe03cf69
  /// torch/distributed/fsdp/_flat_param.py, _init_flat_param_and_metadata: "Pad to be divisible
  /// by world size to avoid a copy for the post-backward reduce-scatter"), so the reduce-scatter
  /// makes no padded copy of the gradient. PyTorch's and verl's default is false; `accelerate
  /// launch` passes true unless the config says otherwise. Only FSDP1 (sharding.runtime fsdp1)
  /// reads it.
  bool use_orig_params = false;
  /// Gradient accumulation under FSDP (sharding.runtime fsdp1 or fsdp2): reduce-scatter the
  /// gradients after every micro batch (true), or only after the step's last one, the earlier
  /// ones keeping every unit's gradient unsharded (false: the HF Trainer's no_sync; accelerate's
  /// accumulate() with sync_each_batch syncs every one). The job's when given
  /// (sync_each_micro_batch_given), else the framework's (ResolvedJob::accumulation_sync:
  /// data/frameworks.yaml `accumulation_sync:`).
  bool sync_each_micro_batch = true;
  bool sync_each_micro_batch_given = false;
  /// FSDP2 reshard_after_forward / ZeRO-3: free the gathered weights after each layer's forward
  /// (gather again in backward). Off: every gathered layer stays until its backward.
  bool reshard_after_forward = true;
  /// The job gave reshard_after_forward; else the framework's default applies
  /// (ReshardAfterForwardDefault, job/training_modes.h).
  bool reshard_after_forward_given = false;
  /// HSDP: the data-parallel ranks form replicate x shard; state is sharded over the shard
  /// group only (megatron-core: --num-distributed-optimizer-instances).
  int64_t replicate = 1;
  /// How far ahead of the layer computing its weights are gathered, in layers (FSDP2 and
  /// ZeRO-3 prefetch). A fraction when the prefetch buffer is smaller than a layer: DeepSpeed
  /// prefetches stage3_prefetch_bucket_size parameters, and with an MoE block fetched whole
  /// (a ZeRO-3 leaf module) that is a small part of the next layer; the rest waits.
  double prefetch_layers = 1;
  bool prefetch_layers_given = false;  // the job gave it (it applies to zero3 / fsdp2 only)
  /// DeepSpeed ZeRO-1/2 (deepspeed/runtime/zero/stage_1_and_2.py): with contiguous_gradients
  /// (its default) each backward allocates a reduce bucket of reduce_bucket_size elements in
  /// the model's dtype, and a second one with overlap_comm; ZeRO-3 (stage3.py) allocates one at
  /// the engine's start and keeps it. The job's when given
  /// (reduce_bucket_elements_given), else what the framework writing the DeepSpeed config puts
  /// there (ResolvedJob::ReduceBucketElements; data/frameworks.yaml, `reduce_bucket:`);
  /// DeepSpeed's own default is 500,000,000.
  double reduce_bucket_elements = 5e8;
  bool reduce_bucket_elements_given = false;
  /// DeepSpeed's overlap_comm (ZeRO-1/2/3): its all-gathers and reduce-scatters run on their own
  /// streams behind compute (true), or on the compute stream, in order with the layers (false:
  /// deepspeed/runtime/zero/stage3.py and parameter_offload.py take the default stream then),
  /// and ZeRO-1/2 keep a second reduce bucket with it. The job's when given, else DeepSpeed's
  /// default (OverlapComm).
  bool overlap_comm = false;
  bool overlap_comm_given = false;
  OffloadTarget offload_optimizer = OffloadTarget::kNone;
  OffloadTarget offload_param = OffloadTarget::kNone;

  bool shards_optimizer() const { return mode != ShardingMode::kNone; }
  /// overlap_comm as DeepSpeed runs it: the job's, else DeepSpeed's default, true under ZeRO-3
  /// only (deepspeed/runtime/zero/config.py, overlap_comm_valid).
  bool OverlapComm() const {
    return overlap_comm_given ? overlap_comm : mode == ShardingMode::kZero3;
  }
  bool shards_gradients() const {
    return mode == ShardingMode::kZero2 || mode == ShardingMode::kZero3 ||
           mode == ShardingMode::kFsdp2;
  }
  bool shards_weights() const {
    return mode == ShardingMode::kZero3 || mode == ShardingMode::kFsdp2;
  }
  /// reshard_after_forward when the job does not give it: torchtitan's "default" policy keeps
  /// the gathered weights under pipeline parallelism (pytorch/torchtitan
  /// torchtitan/models/llama3/infra/parallelize.py, apply_fsdp: `reshard_after_forward = not
  /// pp_enabled`, "for PP, by default do not reshard after forward to avoid per-microbatch
  /// all-gathers"); FSDP2's and ZeRO-3's own default (true) elsewhere.
  void ApplyReshardDefault(bool torchtitan, int64_t pp) {
    if (!reshard_after_forward_given) reshard_after_forward = !(torchtitan && pp > 1);
  }
};

/// FP8 training recipes as people configure them:
///   delayed     Transformer Engine DelayedScaling (tensorwise, amax history);
///   tensorwise  TE Float8CurrentScaling;
///   blockwise   TE Float8BlockScaling (DeepSeek-V3 style: 1x128 activations, 128x128 weights);
///   mxfp8       TE MXFP8BlockScaling (Blackwell; 1x32 blocks, one E8M0 scale per block);
///   torchao_tensorwise, torchao_rowwise  torchao.float8 (cast per GEMM, no cached copies).
enum class Fp8Recipe {
  kNone,
  kDelayed,
  kTensorwise,
  kBlockwise,
  kMxfp8,
  kTorchaoTensorwise,
  kTorchaoRowwise
};
std::string_view Fp8RecipeName(Fp8Recipe recipe);

struct Fp8Spec {
  Fp8Recipe recipe = Fp8Recipe::kNone;
  /// megatron --fp8-param-gather / torchao enable_fsdp_float8_all_gather: the weights are kept
  /// (megatron) or all-gathered (torchao) in FP8 instead of bf16.
  bool param_gather = false;
  /// DelayedScaling amax_history_len (megatron --fp8-amax-history-len, default 1).
  int64_t amax_history = 1;

  bool on() const { return recipe != Fp8Recipe::kNone; }
  bool transformer_engine() const {
    return recipe == Fp8Recipe::kDelayed || recipe == Fp8Recipe::kTensorwise ||
           recipe == Fp8Recipe::kBlockwise || recipe == Fp8Recipe::kMxfp8;
  }
};

/// megatron-core --recompute-modules (granularity selective): which parts of a layer re-run
/// their forward in backward instead of keeping what they saved. The default, as
/// megatron-core's, is core_attn alone.
struct RecomputeModules {
  bool core_attn = true;        // flash attention's softmax statistics
  bool mlp = false;             // the whole dense MLP (keeps its input)
  bool moe = false;             // the whole MoE layer (keeps its input)
  bool moe_act = false;         // the experts' activation function output
  bool layernorm = false;       // the norm outputs (input_layernorm, pre_mlp_layernorm)
  bool mla_up_proj = false;     // MLA's up-projected q, k, v (keeps the compressed latents)
  bool shared_experts = false;  // the shared experts (keeps their input)
};
/// torchtitan's `[activation_checkpoint] mode = "selective"`, by `selective_ac_option`
/// (torchtitan/distributed/activation_checkpoint.py):
///   "op"  every block checkpointed with the per-op policy: the outputs of the save-list ops
///         (every other aten.mm of the block, SDPA, reduce_scatter, max) are kept, the rest is
///         recomputed (model/op_sac.h);
///   "N"   every N-th block (the N-th, 2N-th, ... of the rank) in full AC, the others keep
///         everything. torchtitan's default option is "2".
/// Neither set: granularity selective means megatron-core's --recompute-modules.
struct TitanSelectiveAc {
  bool op = false;
  int64_t every_n_layers = 0;
  bool on() const { return op || every_n_layers > 0; }
};

/// megatron-core --cpu-offloading --cpu-offloading-num-layers N: the tensors the first N
/// transformer layers save for backward are copied to pinned host memory on a side stream after
/// each layer's forward and copied back one layer ahead in backward (Transformer Engine's
/// cpu_offload.py). 0 = off.
struct ActivationOffloadSpec {
  int64_t num_layers = 0;
  bool on() const { return num_layers > 0; }
};

/// "core_attn", "mlp", ...: every name, in megatron-core's spelling.
const std::vector<std::string>& RecomputeModuleNames();
/// Sets the named module; false when the name is unknown.
bool SetRecomputeModule(RecomputeModules& modules, const std::string& name);

}  // namespace strata

#endif  // STRATA_JOB_TRAINING_MODES_H_

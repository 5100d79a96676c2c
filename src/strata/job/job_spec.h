// A training job as the user writes it (job.yaml): which model, which GPUs, the parallel layout,
// batch, sequence, recompute, precision and optimizer. Parsing checks types and names only; the
// layout rules that need the model (heads, experts, layers) live in job_validation.h.
#ifndef STRATA_JOB_JOB_SPEC_H_
#define STRATA_JOB_JOB_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/job/parallel_layout.h"
#include "strata/job/training_modes.h"
#include "strata/model/adapter.h"
#include "strata/model/param_count.h"

namespace strata {

enum class DType { kFp32, kBf16, kFp16, kFp8 };
std::string_view DTypeName(DType dtype);  // "fp32", "bf16", ...
/// Bytes one element takes: fp32 4, bf16/fp16 2, fp8 1.
int64_t DTypeBytes(DType dtype);

enum class RecomputeGranularity { kNone, kSelective, kFull };
std::string_view RecomputeGranularityName(RecomputeGranularity g);

/// megatron-core --recompute-method: uniform checkpoints the input of every group of
/// `num_layers` layers; block recomputes only the first `num_layers` layers of each stage.
enum class RecomputeMethod { kUniform, kBlock };
std::string_view RecomputeMethodName(RecomputeMethod m);

/// How the loss is computed from the logits. kFused: the gradient overwrites the bf16 logits in
/// place (megatron-core --cross-entropy-loss-fusion --cross-entropy-fusion-impl te). kNative:
/// megatron-core's vocab_parallel_cross_entropy, which keeps an fp32 softmax of the logits.
enum class CrossEntropyImpl { kFused, kNative };

/// How core attention runs. flash: one fused kernel (FlashAttention, cuDNN, Transformer Engine):
/// the scores never reach HBM. unfused: QK^T and AV as batched GEMMs with the S x S scores written
/// to HBM and through softmax (and dropout) kernels: Megatron-LM before flash attention (its
/// FusedScaleMaskSoftmax path), HF "eager".
enum class AttentionKernel { kFlash, kUnfused };

struct AttentionSpec {
  AttentionKernel kernel = AttentionKernel::kFlash;
  /// Attention-probability dropout. With the unfused kernel it is one more pass over the scores
  /// and a 1-byte mask kept for backward; flash attention applies it inside the kernel.
  double dropout = 0;
};
std::string_view CrossEntropyImplName(CrossEntropyImpl impl);

/// Either a cluster file (data/clusters/<name>.yaml or a path), or a GPU type and counts.
struct ClusterSpec {
  std::string name;  // the cluster file's name when the job refers to one, else ""
  std::string file;  // the path or catalog name it was loaded from, else ""
  std::string gpu;   // a GPU catalog name ("H20")
  int64_t gpus_per_node = 0;
  int64_t nodes = 0;
  /// gpus_per_node of each of the file's nodes, the node's other GPUs running the rest of the
  /// work (an RL split's rollout, hw/cluster.h SharedNodes): written by `strata rl`.
  bool shared_nodes = false;
  /// The GPU as the job or cluster file defined it (a catalog entry or a custom variant);
  /// empty for a job built in code, which is then looked up by `gpu`.
  std::optional<GpuSpec> gpu_spec;
  int64_t world() const { return gpus_per_node * nodes; }
};

struct SequenceSpec {
  double max_tokens = 0;   // the longest sample (activations are sized for it)
  double mean_tokens = 0;  // 0 when not given: all samples are max_tokens long
  /// The samples' length spread (standard deviation), with packing: packed samples attend only
  /// within themselves, so attention sees (mean^2 + std^2) / mean, not max_tokens.
  double std_tokens = -1;  // -1 when not given: read as 0 (the documented default), said so
  std::string histogram;   // a length histogram file, when given
  bool packing = false;    // samples packed up to max_tokens: every micro batch has one shape
  /// Image tokens per sample, on average (part of the sample's tokens): the vision tower encodes
  /// merge^2 patches for each. 0: text only (printed as an assumption for a model with a tower).
  double image_tokens = 0;
  bool image_tokens_given = false;
  /// Shapes change from micro batch to micro batch (fragments the allocator's cache).
  bool variable_length() const {
    return !packing && ((mean_tokens > 0 && mean_tokens < max_tokens) || !histogram.empty());
  }
};

struct RecomputeSpec {
  RecomputeGranularity granularity = RecomputeGranularity::kNone;
  RecomputeMethod method = RecomputeMethod::kUniform;
  int64_t num_layers = 1;
  RecomputeModules modules;  // granularity selective: which modules (default core_attn)
  TitanSelectiveAc titan;    // granularity selective: torchtitan's selective_ac_option
};

struct OptimizerSpec {
  /// adam / adamw: two moments; muon: one momentum buffer on the hidden matrices (AdamW on
  /// embeddings, output layer, norms and biases); adam8bit: two moments of 1 byte each with
  /// one fp32 scale per 2048-element block (bitsandbytes).
  std::string name = "adam";
  bool distributed = true;  // megatron-core --use-distributed-optimizer (ZeRO-1)
  DType master_dtype = DType::kFp32;
  DType moment_dtype = DType::kFp32;  // exp_avg and exp_avg_sq
};

/// Which communication overlaps with compute (megatron-core's flags). What is not overlapped
/// sits on the step's critical path; see docs/formulas.md, "Step time".
struct OverlapSpec {
  bool tp_comm = false;  // --tp-comm-overlap: TP collectives behind the layer's GEMMs
  bool moe_a2a = false;  // --overlap-moe-expert-parallel-comm: EP all-to-all behind compute
  bool cp_comm = true;   // ring attention overlaps its K/V exchange with attention
  // Pipeline send/recv behind compute (megatron's overlap_p2p_comm). Unless the job says
  // (pp_p2p_given), the step model decides from the schedule and the engine: megatron-core's
  // training arguments turn it on for the interleaved schedule (--no-overlap-p2p-communication
  // turns it off) and off for 1F1B (sim/step_model.h, PpP2pOverlapped).
  bool pp_p2p = false;
  bool pp_p2p_given = false;
  // --overlap-grad-reduce: DP reduce-scatter behind the backward. Under DeepSpeed's ZeRO-1/2
  // it is derived from sharding.overlap_comm at resolve time (or, given alone, sets it), so the
  // two cannot disagree (job/resolved_job.cc).
  bool grad_reduce = false;
  bool grad_reduce_given = false;
  bool param_gather = false;  // --overlap-param-gather: DP all-gather behind the forward
};

/// Under DeepSpeed's ZeRO-1/2 (`deepspeed`: its runtime runs `sh`'s mode) the gradient reduce
/// runs behind the backward exactly when overlap_comm is on (stage_1_and_2.py, reduce_ipg_grads
/// on its reduction stream), so overlap.grad_reduce is sharding.overlap_comm's value: for the
/// job's own mode when it is resolved, and for each mode a layout search tries.
inline void DeriveDeepSpeedGradReduce(const ShardingSpec& sh, bool deepspeed, OverlapSpec& o) {
  if (deepspeed && (sh.mode == ShardingMode::kZero1 || sh.mode == ShardingMode::kZero2)) {
    o.grad_reduce = sh.OverlapComm();
  }
}

/// The software that runs the job: the step model adds what it costs beyond the kernels
/// (data/frameworks.yaml, sim/framework_profile.h). megatron-core unless the job says otherwise.
struct FrameworkSpec {
  std::string name = "megatron-core";
  std::string version;   // "" = the latest release data/frameworks.yaml knows (an assumption)
  bool compile = false;  // torch.compile (torchtitan's compile.enable)
  bool given = false;    // the job names the framework; else the default is an assumption
  /// Gated DeltaNet's kernel: fla | flashqla | torch (transformers' PyTorch fallback); "" =
  /// fla, printed as an assumption.
  std::string gdn_kernel;
  /// PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the caching allocator grows one segment
  /// per stream instead of one per request (memory/allocator.h).
  bool expandable_segments = false;
  /// Liger kernels (HF TrainingArguments use_liger_kernel, ms-swift --use_liger_kernel,
  /// LLaMA-Factory enable_liger_kernel): fused RMSNorm, rotary, SwiGLU and cross entropy in HF
  /// model code, so the eager module code's extra traffic does not apply.
  bool liger_kernel = false;
};

/// How an FSDP job under the HF Trainer (Accelerate) saves: each rank its shards through
/// torch.distributed.checkpoint (SHARDED_STATE_DICT), or rank 0 the whole model and optimizer
/// gathered to it (FULL_STATE_DICT, Accelerate's default under FSDP1).
enum class StateDictKind { kSharded, kFull };

/// What each checkpoint holds beyond the framework's default contents (`strata checkpoint`).
struct CheckpointSpec {
  /// The optimizer state (fp32 master weights and Adam moments) is saved; false: Megatron's
  /// --no-save-optim (ms-swift's --no_save_optim true), the model's weights alone.
  bool optimizer = true;
  /// Rank 0 also writes the whole model in the parameter dtype (model.safetensors): the HF
  /// Trainer under DeepSpeed ZeRO-3 with stage3_gather_16bit_weights_on_model_save true.
  bool save_16bit_model = false;
  /// Accelerate's fsdp_state_dict_type (sharded unless the job says full).
  StateDictKind state_dict = StateDictKind::kSharded;
  /// The save runs in the background: training waits only for the copy of each rank's part to
  /// host memory (Megatron's --async-save with --use-persistent-ckpt-worker; torchtitan's
  /// checkpoint.async_mode "async" or "async_with_pinned_mem").
  bool async_save = false;
};

/// The names `framework.gdn_kernel` accepts.
const std::vector<std::string>& GdnKernelNames();

/// The names `framework.name` accepts, in the order the docs list them.
const std::vector<std::string>& FrameworkNames();

/// A measured or planned speed: a rate, or a step time (with the tokens of one step, which
/// default to global batch x mean sample length).
struct ThroughputSpec {
  double tokens_per_s = 0;
  double tokens_per_step = 0;
  double step_time_s = 0;
  bool given() const { return tokens_per_s > 0 || step_time_s > 0; }
};

struct JobSpec {
  std::string file;   // where it was read from ("" for a job built in code)
  std::string model;  // catalog name or config.json path
  ClusterSpec cluster;
  ParallelLayout layout;
  int64_t micro_batch = 1;
  int64_t global_batch = 1;
  SequenceSpec sequence;
  RecomputeSpec recompute;
  DType param_dtype = DType::kBf16;
  // megatron-core's defaults unless the job says otherwise: an fp32 gradient accumulation
  // buffer (--accumulate-allreduce-grads-in-fp32 is how Megatron-LM trains bf16) and the
  // unfused vocab_parallel_cross_entropy (--cross-entropy-loss-fusion is off by default).
  DType grad_dtype = DType::kFp32;
  OptimizerSpec optimizer;
  CrossEntropyImpl cross_entropy = CrossEntropyImpl::kNative;
  AttentionSpec attention;          // flash unless the job says otherwise
  std::vector<std::string> frozen;  // module kinds without gradients ("vision")
  AdapterSpec adapter;              // LoRA / QLoRA / DoRA: the whole base frozen (none by default)
  bool mtp = false;                 // build the multi-token-prediction block
  ShardingSpec sharding;            // ZeRO / FSDP2 / HSDP and offload (default zero1)
  Fp8Spec fp8;                      // FP8 recipe (default none: bf16 GEMMs)
  /// Tokens the busiest EP rank receives over the mean (dropless routing); 1 = balanced.
  double moe_routing_imbalance = 1.0;
  bool moe_routing_imbalance_given = false;  // the job states it (the step model's default else)
  // Routed experts as one grouped GEMM (true) or one expert after another (megatron-core's
  // SequentialMLP, false); unset: the framework's default (data/frameworks.yaml).
  std::optional<bool> moe_grouped_gemm;
  // The router's load-balancing loss coefficient (megatron-core's moe_aux_loss_coeff, default 0:
  // none). Above 0 the router all-reduces its token counts over its TP x CP group.
  double moe_aux_loss_coeff = 0;
  ActivationOffloadSpec activation_offload;  // megatron-core --cpu-offloading (default off)
  OverlapSpec overlap;
  FrameworkSpec framework;    // megatron-core by default
  CheckpointSpec checkpoint;  // what a checkpoint holds (the optimizer state by default)
  ThroughputSpec throughput;  // optional
  /// The micro batch count is not the job's to say: verl's dynamic batch packs the samples and
  /// rounds the count up to the pipeline's group (rl/), so a looped schedule's count rule
  /// (job/pipeline_rules.h) is not checked on the nominal batch. Not a job-file key.
  bool micro_batches_by_packing = false;

  /// Micro batches per step per data-parallel rank (gradient accumulation).
  int64_t num_micro_batches() const { return global_batch / (micro_batch * layout.dp); }
};

/// Whether the job trains no weight of the module kind: `frozen:` names it, or an adapter
/// freezes the whole base (the adapters are the only trainable parameters).
bool IsFrozen(const JobSpec& job, ModuleKind kind);

/// Parses job YAML. `overrides` are "key=value" pairs (`--set`), dotted keys as in the file
/// ("parallel.ep=16"); they replace the file's values before any check runs.
Result<JobSpec> ParseJobSpec(const std::string& text, const std::string& file,
                             const std::vector<std::string>& overrides = {});

/// Reads a job file by path, or by name from data/jobs/ ("qwen3.6-35b-a3b-sft-h20x40").
Result<JobSpec> LoadJobSpec(const std::string& path_or_name,
                            const std::vector<std::string>& overrides = {});

/// A job from a model and `--set` overrides alone (no file). The sections a job cannot do
/// without (cluster, parallel, batch, sequence) must all be set: the error names the missing ones.
Result<JobSpec> BuildJobSpec(const std::string& model, const std::vector<std::string>& overrides);

/// Every key a job file may hold, dotted ("parallel.tp"): for --set and "did you mean".
const std::vector<std::string>& JobSpecKeys();

/// The reference job of the reference case, run when no job file is given.
inline constexpr const char* kReferenceJobName = "qwen3.6-35b-a3b-sft-h20x40";

}  // namespace strata

#endif  // STRATA_JOB_JOB_SPEC_H_

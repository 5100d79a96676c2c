// The framework profile: what the software that runs a job adds to the step beyond the kernels
// (data/frameworks.yaml), resolved for one job's framework, release, sharding mode and GPU. The
// step model applies it in framework_overhead.h; `strata step` prints it with every assumption
// it rests on. Formulas: docs/formulas.md, "Framework overhead".
#ifndef STRATA_SIM_FRAMEWORK_PROFILE_H_
#define STRATA_SIM_FRAMEWORK_PROFILE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/release.h"
#include "strata/core/result.h"
#include "strata/job/engine_chain.h"
#include "strata/job/job_spec.h"
#include "strata/sim/framework_parallelism.h"

namespace strata {

/// Element-wise passes that a framework's module code runs for particular model features, outside
/// the fused kernels the step's memory-bound term counts (data/frameworks.yaml `model_code:`):
/// bytes moved per element beyond those kernels, forward and backward. clamped_glu: per element
/// of the experts' fc1 output when the GLU's inputs are clamped (GPT-OSS); expert_output_bias:
/// per element of the experts' output when each expert adds its own output bias; yarn_rotary:
/// per element of q and k when the rotary is YaRN's and runs unfused.
struct ModelCodeTraffic {
  double clamped_glu_forward = 0, clamped_glu_backward = 0;
  double expert_bias_forward = 0, expert_bias_backward = 0;
  double yarn_rotary_forward = 0, yarn_rotary_backward = 0;
  bool any() const {
    return clamped_glu_forward + clamped_glu_backward + expert_bias_forward + expert_bias_backward +
               yarn_rotary_forward + yarn_rotary_backward >
           0;
  }
};

/// One framework's entry of data/frameworks.yaml, as written.
struct FrameworkEntry {
  std::string name;
  // Its `latest` release and `runs_as` (a wrapper's engine by sharding mode) are read once,
  // into FrameworkCatalog::engines (job/engine_chain.h).
  double layer_ops = 0;           // eager ops of one decoder layer, forward
  double compiled_layer_ops = 0;  // the same under torch.compile; 0: no compile
  double moe_ops = 0;             // an MoE FFN's extra ops over a dense MLP
  double moe_host_syncs = 0;      // device-to-host waits per MoE layer forward
  double expert_loop_ops = 0;     // per expert, forward; 0: grouped GEMM
  std::string expert_loop_until;  // first release without the loop; "" = none
  // megatron-core's SequentialMLP (moe_grouped_gemm off): host ops per expert, forward; the
  // loop splits the tokens with counts already on the host, so no sync per expert.
  double sequential_expert_ops = 0;
  std::string attention = "cudnn";          // cudnn | sdpa_flash2
  bool attention_given = false;             // a wrapper's own choice for HF code
  std::string sdpa_cudnn_from;              // first release whose SDPA prefers cuDNN
  double zero3_ops_per_param = 0;           // DeepSpeed ZeRO-3 fetch, per parameter
  double zero3_ops_per_param_per_rank = 0;  // and per parameter per DP rank
  // Eager (uncompiled) module code moves more bytes than the fused kernels the step's
  // memory-bound term counts: per kind, the bytes moved over the fused kernel's (1: as fused),
  // and whether attention's layout copies (GQA's repeated K/V, the output made contiguous) run.
  double eager_norm = 1, eager_rotary = 1, eager_activation = 1;
  bool eager_attention_copies = false;
  // Liger's kernels patch this framework's model code (HF transformers' modules): the job's
  // framework.liger_kernel is refused for any other engine.
  bool liger_kernel = false;
  ModelCodeTraffic model_code;  // a wrapper's own entries override its engine's
  /// What it can run, by sharding mode name or "default" (`parallel:`); empty: not stated, so
  /// a wrapper's engine (runs_as) decides, and with no engine every dimension is searched.
  std::map<std::string, ParallelSupport> parallel;
  std::string source;
};

struct FrameworkCatalog {
  double host_op_s = 0;                            // CPU time of one eager op
  double flash2_forward = 1, flash2_backward = 1;  // FlashAttention-2 / cuDNN on `flash2_gpus`
  std::vector<std::string> flash2_gpus;
  double fsdp2_ops_per_fetch = 0, fsdp2_ops_per_param = 0;
  // FSDP2 copies each all-gather's output into the parameters' unsharded tensors on the compute
  // stream: bytes moved per gathered byte (a read and a write).
  double fsdp2_copy_out_bytes_per_byte = 0;
  std::map<std::string, FrameworkEntry> frameworks;
  FrameworkEngines engines;                    // every entry's `latest` and `runs_as`
  std::map<std::string, std::string> sources;  // section -> source text
};

Result<FrameworkCatalog> ParseFrameworkCatalog(const std::string& text, const std::string& file);
/// Reads data/frameworks.yaml (via DataDir()).
Result<FrameworkCatalog> LoadFrameworkCatalog();

/// The profile of one job: the numbers the step model uses, and what it assumed to get them.
struct FrameworkProfile {
  std::string name = "none";  // as the job names it
  std::string version;        // as given, or the latest (version_assumed)
  std::string engine;         // the framework whose code trains (runs_as), e.g. megatron-core
  bool on = false;            // false: no framework costs (the kernels alone)
  double host_op_s = 0;
  double layer_ops = 0;  // forward, per decoder layer (compiled count under compile)
  double moe_ops = 0;
  double moe_host_syncs = 0;
  double expert_loop_ops = 0;    // 0: grouped GEMM
  double expert_loop_syncs = 1;  // host syncs per expert, forward (HF's torch.where: 1)
  // megatron-core only: the routed experts run as one grouped GEMM (moe.grouped_gemm), and
  // whether the job said so (else an assumption `step` prints with its alternative).
  bool experts_grouped = true;
  bool experts_grouped_assumed = false;
  double attention_forward_factor = 1, attention_backward_factor = 1;
  // DeepSpeed ZeRO-3's host ops per parameter fetched: zero3_ops_per_param + per_rank x DP.
  double zero3_ops_per_param = 0, zero3_ops_per_param_per_rank = 0;
  double fsdp2_ops_per_fetch = 0, fsdp2_ops_per_param = 0;  // with sharding fsdp2
  double fsdp2_copy_out_bytes_per_byte = 0;                 // with sharding fsdp2
  // The eager module code's traffic over the fused kernels' (FrameworkEntry); all 1 / false
  // under torch.compile, whose Inductor fuses the element-wise ops.
  double eager_norm = 1, eager_rotary = 1, eager_activation = 1;
  bool eager_attention_copies = false;
  // The release repeats K and V to the query heads for GQA (FrameworkEngines' gqa_repeat; off
  // under torch.compile): the copies' bytes join the layout copies, and its host ops run on
  // every grouped-query attention layer.
  bool eager_gqa_repeat = false;
  double gqa_repeat_ops = 0;
  // Model-specific module code outside the fused kernels (ModelCodeTraffic), and whether the
  // routed experts run as one fused MLP (megatron-core's TE op fuser / fused grouped MLP, which
  // clamp, activate and add the biases inside their kernels: no clamped_glu or expert bias
  // passes then). Set in code (the validation rows whose recipes say so); no job key yet.
  ModelCodeTraffic model_code;
  bool fused_expert_mlp = false;
  // Gated DeltaNet: the kernel (fla | flashqla | torch), whether the job chose it, and whose
  // module runs it (megatron-core | transformers).
  std::string gdn_kernel = "fla";
  bool gdn_kernel_assumed = true;
  std::string gdn_module = "transformers";
  /// The same profile under each sharding mode (indexed by ShardingMode), for the planner's
  /// candidates: a wrapper trains through other code, and ZeRO-3 adds hooks, by mode. Empty in
  /// the per-mode copies themselves and in profiles built by hand (then this one applies).
  std::vector<FrameworkProfile> by_mode;

  double Zero3OpsPerParam(int64_t dp) const {
    return zero3_ops_per_param + zero3_ops_per_param_per_rank * static_cast<double>(dp);
  }
  /// The profile a layout with sharding `mode` runs under.
  const FrameworkProfile& ForMode(ShardingMode mode) const {
    const auto i = static_cast<size_t>(mode);
    return i < by_mode.size() ? by_mode[i] : *this;
  }
  /// Each implementation choice the profile made, in words, with "ASSUMED" where the job did
  /// not say: printed by `strata step` (text, JSON, --explain).
  std::vector<std::string> assumptions;
  // How the routed experts run (one grouped GEMM, or a loop): printed for MoE models only.
  std::string experts_assumption;
};

/// Resolves `job`'s framework on `gpu_name` (the catalog name the kernel file keys by). Fails
/// when the data file has no entry for the name (a catalog out of step with FrameworkNames()).
/// DeepSpeed's ZeRO-3 hooks are priced where the sharding runtime under the profile's mode
/// (ResolveShardingRuntime of job/engine_chain.h, the job's sharding.runtime for its own mode)
/// is DeepSpeed's.
Result<FrameworkProfile> ResolveFramework(const FrameworkCatalog& catalog, const JobSpec& job,
                                          const std::string& gpu_name);

/// What a `framework.gdn_kernel` value runs: "flash-linear-attention's chunked kernels",
/// "FlashQLA's kernels", "transformers' PyTorch fallback". One wording for every output.
std::string_view GdnKernelName(std::string_view kernel);

/// The implementation line for a model with Gated DeltaNet layers: which kernel, in whose
/// module, and whether the job chose it.
std::string GdnKernelAssumption(const FrameworkProfile& profile);

}  // namespace strata

#endif  // STRATA_SIM_FRAMEWORK_PROFILE_H_

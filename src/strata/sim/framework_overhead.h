// What the framework adds to one micro batch beyond the kernels (framework_profile.h): the
// host-bound layers (a layer whose ops take the CPU longer to issue than the GPU to run), the
// fetch hooks of ZeRO-3 and FSDP2, HF's per-expert loop and a slower attention backend. Each is
// its own row of the step's breakdown. Formulas: docs/formulas.md, "Framework overhead".
#ifndef STRATA_SIM_FRAMEWORK_OVERHEAD_H_
#define STRATA_SIM_FRAMEWORK_OVERHEAD_H_

#include <string>
#include <vector>

#include "strata/core/units.h"
#include "strata/model/model_config.h"
#include "strata/sim/framework_profile.h"

namespace strata {

struct StepTables;
struct ParallelLayout;
struct StepLayout;
struct MicroBatchCompute;

/// The model's side of the framework costs: how many of its decoder layers are MoE and how many
/// parameter tensors a layer holds (what ZeRO-3 and FSDP2 touch one by one on the host).
struct FrameworkModelCounts {
  double layers = 0;
  double moe_layers = 0;
  double params_per_layer = 0;  // mean parameter tensors of one decoder layer
  double gqa_layers = 0;        // attention layers with fewer KV heads than query heads
};
FrameworkModelCounts CountFrameworkModel(const ModelConfig& model);

/// One micro batch's framework costs on the most loaded rank, exposed (on the critical path).
struct FrameworkOverhead {
  Seconds host_bound_layers;  // ops the GPU waits for, and one launch after each host sync
  Seconds fetch_hooks;        // the host part added by ZeRO-3 / FSDP2 parameter fetches
  Seconds expert_loop;        // HF's per-expert Python loop (host time the GPU waits for)
  Seconds attention_backend;  // attention at FlashAttention-2's rate instead of cuDNN's
  // Memory-bound kernels beyond the fused ones the step counts: the eager module code's extra
  // bytes (norms, rotary, activation, attention's layout copies) in the three passes, and
  // FSDP2's copy of each gathered unit into its parameters.
  Seconds eager_elementwise;
  Seconds fsdp2_copy_out;
  Seconds total() const {
    return host_bound_layers + fetch_hooks + expert_loop + attention_backend + eager_elementwise +
           fsdp2_copy_out;
  }
  /// The parts that do not grow with a sample's length (per layer, per expert, per gather): the
  /// stragglers' fit takes them out of the per-token cost. Attention's backend and the eager
  /// element-wise traffic grow with the tokens.
  Seconds fixed() const { return host_bound_layers + fetch_hooks + expert_loop + fsdp2_copy_out; }
};

/// The bytes the eager module code moves beyond the fused kernels, per token of one micro batch
/// on one rank, forward, all layers: norms split by TP only under sequence parallelism, the
/// rest by TP (docs/formulas.md, "eager element-wise ops"). 0 without eager traffic.
double EagerExtraBytesPerToken(const StepTables& tables, const FrameworkProfile& profile,
                               const ParallelLayout& layout);

/// Of those, the eager attention code's layout copies per token, all layers, before the TP split:
/// the output made contiguous, and GQA's K and V repeated where the release repeats them.
double AttentionCopyBytesPerToken(const StepTables& tables, const FrameworkProfile& profile);

/// The bytes the framework's model-specific module code moves outside the fused kernels
/// (FrameworkProfile::model_code) per token of one micro batch on one rank, all layers, forward
/// and backward: TP-split like the tensors they pass over (docs/formulas.md, "model-specific
/// module code"). 0 without such code or such model features.
struct ModelCodeBytes {
  double clamped_glu_forward = 0, clamped_glu_backward = 0;
  double expert_bias_forward = 0, expert_bias_backward = 0;
  double yarn_rotary_forward = 0, yarn_rotary_backward = 0;
  double forward() const { return clamped_glu_forward + expert_bias_forward + yarn_rotary_forward; }
  double backward() const {
    return clamped_glu_backward + expert_bias_backward + yarn_rotary_backward;
  }
};
ModelCodeBytes ModelCodeBytesPerToken(const StepTables& tables, const FrameworkProfile& profile,
                                      const ParallelLayout& layout);

/// The implementation lines for the model-specific module code the profile prices on this model
/// (`strata step` prints them with the framework's other assumptions); empty when none applies.
std::vector<std::string> ModelCodeAssumptions(const StepTables& tables,
                                              const FrameworkProfile& profile);

/// Bytes one parameter takes in a ZeRO-3/FSDP gather: 1 with an FP8 all-gather (megatron
/// --fp8-param-gather, torchao enable_fsdp_float8_all_gather), else the parameters' dtype.
double GatherBytesPerParam(const StepLayout& layout);

/// The framework costs of one micro batch, given its kernel times `c` (ComputeMicroBatch). Zero
/// when tables.framework is off.
FrameworkOverhead ComputeFrameworkOverhead(const StepTables& tables, const StepLayout& layout,
                                           const MicroBatchCompute& c);

}  // namespace strata

#endif  // STRATA_SIM_FRAMEWORK_OVERHEAD_H_

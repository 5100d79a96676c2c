// Low-rank adapters (LoRA, QLoRA, DoRA) on a frozen base: which linear layers carry one, their
// shapes and parameter counts, the tensors they keep for backward and their FLOP. The memory
// ledger, the step model and the checkpoint sizes all read these numbers from here.
// Formulas: docs/formulas.md, "Adapters (LoRA, QLoRA, DoRA)".
#ifndef STRATA_MODEL_ADAPTER_H_
#define STRATA_MODEL_ADAPTER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/model/model_config.h"

namespace strata {

/// lora: W x + (alpha / r) B A x with W frozen in bf16 (Hu et al. 2021, arXiv 2106.09685);
/// qlora: the same over a base quantised to 4-bit NF4 with double quantisation (Dettmers et al.
/// 2023, arXiv 2305.14314); dora: LoRA plus a trained magnitude vector per output feature
/// (Liu et al. 2024, arXiv 2402.09353).
enum class AdapterKind { kNone, kLora, kQlora, kDora };
std::string_view AdapterKindName(AdapterKind kind);

struct AdapterSpec {
  AdapterKind kind = AdapterKind::kNone;
  int64_t rank = 0;
  double alpha = 0;  // scales B A by alpha / rank; costs nothing
  /// PEFT's target_modules ("q_proj", ..., see PeftTargetNames), or the one entry
  /// "all-linear": every linear layer of the decoder (not the output layer). megatron-core's
  /// fused linears ("linear_qkv", "linear_proj", "linear_fc1", "linear_fc2") carry one adapter
  /// each, over the fused matrix, in place of the separate ones they fuse; "router" is its
  /// TopKRouter.
  std::vector<std::string> targets;
  double dropout = 0;  // lora_dropout on the adapter's input
  /// transformers 5's MoE layout (set by ResolveAdapterTargets from the HF engine's release):
  /// the routed experts are 3-D parameters and the router a bare weight, which PEFT's nn.Linear
  /// matching reaches neither of; the shared expert and its gate stay nn.Linear. false: 4.x's
  /// layout, every routed expert an nn.Linear per projection and the router an nn.Linear.
  bool fused_experts = false;

  bool on() const { return kind != AdapterKind::kNone; }
  bool quantized_base() const { return kind == AdapterKind::kQlora; }
};

/// PEFT's names (transformers' module names, matched as suffixes): "q_proj", "k_proj",
/// "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj" (the dense MLP, every routed expert
/// and the shared expert alike), "gate" (the MoE router, an nn.Linear in transformers 4.x),
/// "shared_expert_gate", the Gated DeltaNet's "in_proj_qkvz", "in_proj_ba", "out_proj", and
/// "all-linear".
const std::vector<std::string>& PeftTargetNames();

/// megatron-core's fused linears, each carrying one adapter: "linear_qkv", "linear_proj",
/// "linear_fc1", "linear_fc2" (what all-linear names on megatron-core).
const std::vector<std::string>& MegatronFusedTargetNames();

/// Names only megatron-core has: its fused linears and "router" (the TopKRouter, which
/// ms-swift's "all-router" adds; all-linear leaves it out).
const std::vector<std::string>& MegatronTargetNames();

/// PeftTargetNames and MegatronTargetNames: what a job's adapter.targets accepts.
const std::vector<std::string>& AdapterTargetNames();

/// The megatron-core module that holds a PEFT-spelled one ("k_proj" -> "linear_qkv", "gate" ->
/// "router"); "" for any other name.
std::string_view FusedTargetOf(std::string_view name);

/// What all-linear expands to on megatron-core (ms-swift's get_target_modules): the fused
/// linears, and on a model with Gated DeltaNet layers their three nn.Linear projections.
std::vector<std::string> MegatronAllLinear(const ModelConfig& model);

/// Where an adapted matrix sits: it decides its copies and how they are sharded. kGatedDeltaNet:
/// a Gated DeltaNet projection, split over TP or whole on every TP rank as its layer is
/// (ResolvedJob::gdn).
enum class AdapterSite { kLayer, kRoutedExperts, kSharedExperts, kRouter, kGatedDeltaNet };
std::string_view AdapterSiteName(AdapterSite site);

/// One adapted linear layer of a decoder layer: x (d_in) -> W x (d_out), held `copies` times
/// (one per routed expert: one A and one B each) of which a token passes `copies_per_token`
/// (top_k for routed experts).
struct AdaptedMatrix {
  std::string_view name;
  int64_t d_in = 0;
  int64_t d_out = 0;
  AdapterSite site = AdapterSite::kLayer;
  int64_t copies = 1;
  int64_t copies_per_token = 1;
};

/// The linear layers of `layer` the adapter targets: softmax attention, Gated DeltaNet, dense
/// MLPs, routed and shared experts and the router (other mixers are rejected by job
/// validation). "all-linear" left as it is means PEFT's: every nn.Linear but the output layer,
/// transformers 4.x's module layout (experts in an nn.ModuleList, the router an nn.Linear), or,
/// with adapter.fused_experts, 5.x's (neither the routed experts nor the router).
std::vector<AdaptedMatrix> AdaptedMatrices(const ModelConfig& model, const AdapterSpec& adapter,
                                           const LayerSpec& layer);

/// Per decoder layer, all counted on the whole (unsharded) layer; the routed_ fields are the
/// routed experts' share of the totals (sharded over EP x ETP, their state over expert-DP), the
/// gdn_ fields the Gated DeltaNet projections' (split over TP unless the layer is replicated).
struct AdapterLayerCost {
  /// copies x r x (d_in + d_out) per adapted matrix (A is r x d_in, B is d_out x r); DoRA adds
  /// d_out per copy.
  int64_t params = 0;
  int64_t routed_params = 0;
  /// Elements saved for backward per token: the r-wide A x of each matrix a token passes (B's
  /// weight gradient) and, with dropout, the dropped copy of the input (d_in, A's weight
  /// gradient).
  double saved_elements_per_token = 0;
  double routed_saved_elements_per_token = 0;
  double mask_bytes_per_token = 0;  // dropout > 0: one bool per input element and matrix
  double routed_mask_bytes_per_token = 0;
  /// Forward FLOP per token: 2 r (d_in + d_out) per matrix a token passes (x A, then (x A) B).
  double flop_per_token = 0;
  double routed_flop_per_token = 0;
  /// DoRA: the column norm of W + (alpha / r) B A, formed once per forward: 2 r d_in d_out
  /// FLOP per matrix, whatever the tokens.
  double flop_per_forward = 0;
  int64_t gdn_params = 0;
  double gdn_saved_elements_per_token = 0;
  double gdn_mask_bytes_per_token = 0;
  double gdn_flop_per_token = 0;
  double gdn_flop_per_forward = 0;
};
AdapterLayerCost AdapterCostOfLayer(const ModelConfig& model, const AdapterSpec& adapter,
                                    const LayerSpec& layer);

/// The adapter over the whole model: its parameters and, per adapted matrix, where it sits and
/// on how many layers, e.g. "linear_fc1 (routed experts, 128 per layer, top 8 a token; 48
/// layers)". What memory, step and checkpoint print.
struct AdapterCoverage {
  int64_t params = 0;
  int64_t routed_params = 0;
  std::vector<std::string> matrices;
};
AdapterCoverage CoverageOf(const ModelConfig& model, const AdapterSpec& adapter);

/// The lines a report prints for the adapter: its parameters and matrices, and, where
/// all-linear is PEFT's on an MoE model, the transformers layout its rule stands for (4.x's,
/// or 5.x's with adapter.fused_experts).
std::vector<std::string> AdapterAssumptions(const ModelConfig& model, const AdapterSpec& adapter);

/// The NF4 storage format as QLoRA defines it (section 2, "Double Quantization") and
/// bitsandbytes implements it (Linear4bit: blocksize 64; compress_statistics quantises the
/// absmax values in blocks of 256): a data type's definition, like bf16's 2 bytes.
inline constexpr int64_t kNf4Block = 64;
inline constexpr int64_t kNf4SecondBlock = 256;

/// Bits one NF4 weight takes with double quantisation: 4 + 8 / 64 + 32 / (64 x 256) =
/// 4.127 (an fp8 absmax per 64 weights, an fp32 constant per 256 of those); the paper's
/// 0.127 bits per parameter for the constants.
double Nf4BitsPerWeight();

}  // namespace strata

#endif  // STRATA_MODEL_ADAPTER_H_

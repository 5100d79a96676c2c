// Parameter accounting: by module kind, per layer, totals and active parameters per token, and
// the expert / non-expert split the memory ledger shards (experts by EP x ETP, the rest by
// TP x PP). Counts are exact integers. Formulas: docs/formulas.md, "Parameters".
#ifndef STRATA_MODEL_PARAM_COUNT_H_
#define STRATA_MODEL_PARAM_COUNT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "strata/model/model_config.h"

namespace strata {

enum class ModuleKind {
  kEmbedding,        // input token embedding (and a learned position table)
  kHead,             // output projection to the vocabulary (0 when tied)
  kAttention,        // softmax attention and MLA projections, q/k norms, sinks
  kLinearAttention,  // Gated DeltaNet and Mamba-2 projections, conv, decay and norm parameters
  kDenseMlp,         // dense SwiGLU MLPs
  kRouter,           // MoE router (and its bias)
  kSharedExperts,    // shared experts and their gate
  kRoutedExperts,    // all routed experts
  kNorms,            // layer norms of the decoder layers and the final norm
  kMtp,              // multi-token-prediction blocks, whole
  kVision,           // vision tower, whole
};
inline constexpr size_t kModuleKindCount = 11;

std::string_view ModuleKindName(ModuleKind kind);  // "embedding", "routed_experts", ...
const std::array<ModuleKind, kModuleKindCount>& AllModuleKinds();

/// Parameter counts indexed by ModuleKind.
class ModuleParams {
 public:
  int64_t& operator[](ModuleKind kind) { return counts_[static_cast<size_t>(kind)]; }
  int64_t operator[](ModuleKind kind) const { return counts_[static_cast<size_t>(kind)]; }
  int64_t Total() const;
  ModuleParams& operator+=(const ModuleParams& other);
  bool operator==(const ModuleParams& other) const = default;

 private:
  std::array<int64_t, kModuleKindCount> counts_{};
};

struct LayerParams {
  int64_t index = 0;  // 0-based position in the decoder stack
  LayerSpec spec;
  ModuleParams modules;    // only the kinds a decoder layer has
  int64_t per_expert = 0;  // one routed expert (0 in dense layers)
  int64_t active = 0;      // parameters one token touches: top_k of the routed experts

  int64_t total() const { return modules.Total(); }
  int64_t expert() const { return modules[ModuleKind::kRoutedExperts]; }
  int64_t non_expert() const { return total() - expert(); }
};

/// The MTP block (DeepSeek / Qwen3.5 style): eh_proj 2h -> h, two pre-norms, one decoder layer
/// (full attention; MoE when the main stack ends in MoE), a final norm. It shares the embedding
/// and the head with the main model.
struct MtpParams {
  int64_t total = 0;
  int64_t expert = 0;  // routed experts inside the MTP layers
};

struct VisionParams {
  int64_t patch_embed = 0;
  int64_t position_embed = 0;
  int64_t per_block = 0;
  int64_t blocks = 0;   // all blocks
  int64_t mergers = 0;  // the merger plus any deepstack mergers
  int64_t total = 0;
};

struct ParamBreakdown {
  std::vector<LayerParams> layers;
  /// The text model: decoder layers + embedding + head + final norm. kMtp and kVision are 0
  /// here; see mtp and vision. This is what model cards call "total parameters".
  ModuleParams text;
  int64_t final_norm = 0;
  MtpParams mtp;
  VisionParams vision;

  /// Active per token, matmul only: every decoder layer with top_k experts, plus the head.
  int64_t active_matmul = 0;
  /// Active per token including the input embedding and the final norm.
  int64_t active_with_embedding = 0;

  int64_t text_total() const { return text.Total(); }
  int64_t text_expert() const { return text[ModuleKind::kRoutedExperts]; }
  int64_t text_non_expert() const { return text_total() - text_expert(); }
  /// Everything: text + MTP + vision.
  int64_t Total() const { return text_total() + mtp.total + vision.total; }
  /// By kind including MTP and vision in their own rows.
  ModuleParams AllModules() const;
};

/// Pure arithmetic on a validated config; it cannot fail.
ParamBreakdown CountParams(const ModelConfig& config);

/// One decoder layer's parameters (also used for the MTP block's layer).
LayerParams CountLayerParams(const ModelConfig& config, const LayerSpec& spec, int64_t index);

}  // namespace strata

#endif  // STRATA_MODEL_PARAM_COUNT_H_

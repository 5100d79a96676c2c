// Per-family architecture traits: one row per Hugging Face model_type, as llama.cpp keeps one
// table of architectures instead of a branch per model. The config parser reads the shapes from
// config.json and takes from the row only what configs do not say (norm type, biases, where the
// MoE and sliding-window layers sit, which keys a family names differently).
#ifndef STRATA_MODEL_FAMILY_TRAITS_H_
#define STRATA_MODEL_FAMILY_TRAITS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata {

enum class NormKind {
  kRmsNorm,          // weight only (Gemma's 1 + w is still one vector)
  kLayerNorm,        // weight and bias (GPT-2, StarCoder2, Nemotron's LayerNorm1p, PhiMoE)
  kLayerNormNoBias,  // weight only (DBRX)
};

enum class MlpKind {
  kGated,  // gate and up h -> f, down f -> h: 3 h f (SwiGLU, GeGLU)
  kPlain,  // up h -> f, down f -> h: 2 h f (GELU in GPT-2, squared ReLU in Nemotron)
};

/// Where the MoE layers sit and how shared experts are described.
enum class MoeStyle {
  kQwen,      // decoder_sparse_step / mlp_only_layers; one gated shared expert of its own width
  kDeepSeek,  // first_k_dense_replace / moe_layer_freq; n_shared_experts of the routed width
  kPlain,     // every layer MoE, no shared expert (Mixtral, OLMoE, DBRX, PhiMoE)
  kErnie,     // moe_layer_start_index..end_index every moe_layer_interval; shared experts of the
              // routed width (ERNIE 4.5)
};

/// Which layers use the sliding window when config.json has no layer_types.
enum class WindowLayers {
  kNone,          // a sliding_window key is ignored (Qwen2 without use_sliding_window)
  kAll,           // every layer (Mistral 7B v0.1, Phi-3, StarCoder2)
  kEvenLayers,    // layers 0, 2, 4, ... (Gemma 2)
  kEveryNthFull,  // all but every sliding_window_pattern-th layer (Gemma 3)
};

/// How a hybrid says which layer has which mixer and FFN: one character per layer
/// (Nemotron-H); attn_layer_period/offset and expert_layer_period/offset (Jamba); attn_type_list
/// with 0 lightning and 1 softmax attention (MiniMax-Text-01).
enum class LayerPattern { kUniform, kNemotronH, kJamba, kMiniMax };

/// Which vision tower a vision-language wrapper carries (model_config.h VisionKind).
enum class VisionTower { kNone, kQwen3Vl, kQwen25Vl, kClip, kInternVit, kSiglip };

struct FamilyTraits {
  std::string_view model_type;
  NormKind norm = NormKind::kRmsNorm;
  int64_t norms_per_layer = 2;  // 4 for sandwich norms (Gemma 2/3, GLM-4)
  MlpKind mlp = MlpKind::kGated;
  bool mlp_bias = false;              // biases in the MLP (GPT-2, StarCoder2)
  bool attention_bias = false;        // q/k/v/o biases without a config key (GPT-2, PhiMoE)
  bool qkv_bias = false;              // q/k/v biases, no o bias (Qwen2, GLM-4)
  bool qk_norm = false;               // per-head RMSNorm on q and k (Qwen3, Gemma 3)
  bool qk_norm_full_width = false;    // one norm over all q heads and one over all k (OLMo 2)
  bool learned_positions = false;     // an absolute position table (GPT-2)
  bool tied_by_default = false;       // tie_word_embeddings when the key is absent
  bool head_bias = false;             // lm_head has a bias (PhiMoE)
  bool output_gate = false;           // attention output gate (Qwen3-Next)
  bool sinks = false;                 // attention sinks (GPT-OSS)
  bool bias_key_is_qkv = false;       // attention_bias: true means q/k/v only (GLM-4)
  bool multi_query_key = false;       // multi_query: true means one KV head (GPT-BigCode)
  bool expert_biases = false;         // router and expert biases (GPT-OSS)
  bool router_score_bias = false;     // e_score_correction_bias on every router (GLM-4.5, ERNIE)
  bool mtp_embedding_copies = false;  // the MTP block stores embedding and head copies (GLM-4.5)
  VisionTower vision = VisionTower::kNone;    // a wrapper's tower: its vision_config's layout
  std::string_view text_key = "text_config";  // where a wrapper keeps the language model
  MoeStyle moe = MoeStyle::kQwen;
  WindowLayers window = WindowLayers::kNone;
  LayerPattern pattern = LayerPattern::kUniform;
  /// Keys this family spells differently: {family key (dotted for nested), strata's key}.
  std::vector<std::pair<std::string_view, std::string_view>> aliases;
};

/// The row for `model_type`, or nullptr when strata does not know the family.
const FamilyTraits* FindFamily(std::string_view model_type);

/// Every known model_type, sorted.
std::vector<std::string> KnownFamilies();

/// For an unknown model_type: the known families that are close (by name, or by the keys the
/// config has), and the keys strata would need that the config lacks. Human-readable.
std::string DescribeUnknownFamily(std::string_view model_type,
                                  const std::vector<std::string>& config_keys);

}  // namespace strata

#endif  // STRATA_MODEL_FAMILY_TRAITS_H_

// The architecture of a model, parsed from a Hugging Face config.json: one LayerSpec per decoder
// layer (which token mixer, which feed-forward), the shapes each kind needs, the vision tower
// and the MTP block. Everything counted in param_count.h and flops.h comes from this struct.
#ifndef STRATA_MODEL_MODEL_CONFIG_H_
#define STRATA_MODEL_MODEL_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/model/family_traits.h"

namespace strata {

/// The token mixer of one decoder layer.
enum class MixerKind {
  kFullAttention,     // softmax attention over the whole (causal) prefix
  kSlidingAttention,  // softmax attention over the last `sliding_window` tokens
  kGatedDeltaNet,     // linear attention with the gated delta rule (Qwen3-Next, Qwen3.5)
  kMla,               // multi-head latent attention (DeepSeek-V2/V3)
  kMamba2,            // Mamba-2 selective state space (Nemotron-H)
  kMamba1,            // Mamba-1 selective state space, per-channel decay (Jamba)
  kLightning,         // lightning attention: linear attention with a decay (MiniMax-Text-01)
  kNone,              // no token mixer: an MLP-only block of a hybrid (Nemotron-H "-")
};

/// The feed-forward block of one decoder layer.
/// kNone: a mixer-only block of a hybrid (Nemotron-H "M" and "*" blocks have no MLP).
enum class FfnKind { kDense, kMoe, kNone };

std::string_view MixerKindName(MixerKind kind);  // "full_attention", "gated_deltanet", ...
std::string_view FfnKindName(FfnKind kind);      // "dense", "moe"

/// Softmax attention (GQA/MHA). Used by kFullAttention and kSlidingAttention layers.
struct AttentionConfig {
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  bool output_gate = false;  // q_proj also produces a sigmoid gate on the output (2x q width)
  bool bias = false;         // q/k/v/o projections carry biases (GPT-OSS)
  bool qkv_bias = false;     // q/k/v carry biases but o does not (Qwen2)
  bool qk_norm = false;      // per-head RMSNorm on q and k (Qwen3 family)
  bool qk_norm_full_width = false;  // one RMSNorm over all q heads, one over all k (OLMo 2)
  bool sinks = false;               // one learned attention-sink logit per head (GPT-OSS)
  int64_t sliding_window = 0;       // tokens, for kSlidingAttention layers; 0 when none
  bool rope_yarn = false;           // rope_scaling's type is yarn (GPT-OSS, long-context variants)

  /// The K and V heads a TP group of `tp` ranks holds between them: num_kv_heads split over
  /// TP, or one per rank when TP exceeds them (megatron-core gathers the QKV output and keeps
  /// its query group's head on each of the TP / groups ranks that share it:
  /// job/job_validation.h, QueryGroupSplit). One rank holds this / tp of them.
  int64_t KvHeadsOverTp(int64_t tp) const {
    return num_kv_heads > 0 && tp > num_kv_heads ? tp : num_kv_heads;
  }
};

/// DeepSeek multi-head latent attention.
struct MlaConfig {
  int64_t num_heads = 0;
  int64_t q_lora_rank = 0;  // 0: q is projected directly from the hidden state
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

/// Gated DeltaNet linear attention.
struct LinearAttentionConfig {
  int64_t num_key_heads = 0;
  int64_t num_value_heads = 0;
  int64_t key_head_dim = 0;
  int64_t value_head_dim = 0;
  int64_t conv_kernel = 0;  // depthwise causal conv over q, k, v

  int64_t key_dim() const { return num_key_heads * key_head_dim; }
  int64_t value_dim() const { return num_value_heads * value_head_dim; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
};

/// Mamba-2 mixer (Nemotron-H): in_proj h -> (z, x, B, C, dt), depthwise conv over (x, B, C),
/// A_log, D and dt_bias per head, a gated RMSNorm over the inner width, out_proj.
/// Mamba-1 (Jamba) in the same struct with version 1: one "head" per channel (head_dim 1),
/// in_proj h -> (x, z), conv over x only, x_proj inner -> (dt, B, C), dt_proj dt_rank -> inner
/// with a bias, A_log inner x d_state, D per channel, out_proj; Jamba adds RMSNorms on dt, B, C.
struct MambaConfig {
  int version = 2;
  int64_t num_heads = 0;
  int64_t head_dim = 0;
  int64_t state_size = 0;  // d_state
  int64_t n_groups = 0;    // B and C are shared by the heads of a group
  int64_t conv_kernel = 0;
  bool conv_bias = true;
  bool proj_bias = false;
  int64_t dt_rank = 0;       // Mamba-1: width of the low-rank dt projection
  bool dt_bc_norms = false;  // Mamba-1 (Jamba): RMSNorm weights on dt (dt_rank), B and C (d_state)

  int64_t inner() const { return num_heads * head_dim; }
  int64_t conv_dim() const { return version == 1 ? inner() : inner() + 2 * n_groups * state_size; }
  int64_t in_proj_width() const {
    return version == 1 ? 2 * inner() : 2 * inner() + 2 * n_groups * state_size + num_heads;
  }
  /// Mamba-1's x_proj and dt_proj weights (0 for Mamba-2): GEMMs beside in_proj and out_proj.
  int64_t dt_proj_weights() const {
    return version == 1 ? inner() * (dt_rank + 2 * state_size) + dt_rank * inner() : 0;
  }
};

/// Lightning attention (MiniMax-Text-01): qkv_proj h -> 3 H d, a sigmoid output gate h -> H d,
/// an RMSNorm over H d, out_proj; the state is d x d per head with a fixed per-head decay.
struct LightningConfig {
  int64_t num_heads = 0;
  int64_t head_dim = 0;
  int64_t width() const { return num_heads * head_dim; }
};

/// The MLP: gated (gate and up h -> f, down f -> h) or plain (up, down), per FamilyTraits.
struct DenseMlpConfig {
  int64_t intermediate_size = 0;
};

struct MoeConfig {
  int64_t num_experts = 0;
  int64_t top_k = 0;
  int64_t expert_intermediate_size = 0;         // each routed expert is a SwiGLU h -> f -> h
  int64_t num_shared_experts = 0;               // always active
  int64_t shared_expert_intermediate_size = 0;  // per shared expert
  bool shared_expert_gate = false;              // sigmoid gate h -> 1 on the shared expert
  bool router_bias = false;                     // per-expert bias (DeepSeek, GPT-OSS)
  bool expert_bias = false;                     // biases inside every expert (GPT-OSS)
  bool activation_clamp = false;                // gate and up clamped before the GLU (swiglu_limit)
};

struct LayerSpec {
  MixerKind mixer = MixerKind::kFullAttention;
  FfnKind ffn = FfnKind::kDense;
};

/// A Qwen2.5/3-VL style vision tower: patch embedding, learned position embedding, ViT blocks
/// (LayerNorm, fused qkv, GELU MLP, all with biases) and a patch merger into the text width.
/// Which tower: the Qwen3-VL one described above; Qwen2.5-VL (RMSNorm, SwiGLU blocks, no
/// position table, conv without bias); CLIP (llava: class token, position table, pre and post
/// LayerNorm, q/k/v/o, GELU MLP) with a 2-layer projector; InternViT (layer scales, no final
/// norm) with InternVL's mlp1 projector (LayerNorm over the shuffled width, 2 linears); SigLIP
/// (Gemma 3: no class token, post-LayerNorm only) with Gemma 3's projector (average pooling of
/// spatial_merge_size^2 patches, an RMSNorm and one linear without bias).
enum class VisionKind { kQwen3Vl, kQwen25Vl, kClip, kInternVit, kSiglip };

struct VisionConfig {
  bool present = false;
  VisionKind kind = VisionKind::kQwen3Vl;
  int64_t image_size = 0;  // CLIP / InternViT: sizes the position table
  bool qkv_bias = true;    // InternViT: qkv_bias
  bool qk_norm = false;    // InternViT: qk_normalization (RMSNorm over all q heads, all k heads)
  int64_t depth = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_heads = 0;
  int64_t patch_size = 0;
  int64_t temporal_patch_size = 0;
  int64_t in_channels = 0;
  int64_t spatial_merge_size = 0;
  int64_t out_hidden_size = 0;
  int64_t num_position_embeddings = 0;
  int64_t deepstack_mergers = 0;  // extra mergers for deepstack_visual_indexes
};

struct ModelConfig {
  std::string name;          // catalog name or the file's stem
  std::string file;          // where it was read from
  std::string architecture;  // architectures[0]
  std::string model_type;
  std::string dtype;   // config.json's dtype (torch_dtype before transformers 4.56); "" if none
  std::string family;  // the FamilyTraits row the text model was read with

  NormKind norm = NormKind::kRmsNorm;
  int64_t norms_per_layer = 2;  // per layer with both a mixer and an MLP; 4 for sandwich norms
  MlpKind mlp = MlpKind::kGated;
  bool mlp_bias = false;
  int64_t position_embeddings = 0;  // rows of a learned absolute position table (GPT-2)
  bool head_bias = false;           // lm_head carries a bias (PhiMoE)

  int64_t hidden_size = 0;
  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;

  AttentionConfig attention;               // for kFullAttention / kSlidingAttention layers
  MlaConfig mla;                           // for kMla layers
  LinearAttentionConfig linear_attention;  // for kGatedDeltaNet layers
  MambaConfig mamba;                       // for kMamba2 / kMamba1 layers
  LightningConfig lightning;               // for kLightning layers
  DenseMlpConfig dense_mlp;                // for kDense layers
  MoeConfig moe;                           // for kMoe layers
  std::vector<LayerSpec> layers;

  int64_t mtp_layers = 0;  // multi-token-prediction blocks (not part of the main stack)
  /// The checkpoint stores a copy of the embedding and the head in each MTP block (GLM-4.5's
  /// model.layers.N.embed_tokens and shared_head.head): counted, as the safetensors hold them.
  bool mtp_embedding_copies = false;
  VisionConfig vision;

  int64_t CountLayers(MixerKind kind) const;
  int64_t CountLayers(FfnKind kind) const;
  /// CountLayers(kind) > 0, stopping at the first such layer (validation asks for every layout).
  bool HasLayers(MixerKind kind) const;
  bool HasLayers(FfnKind kind) const;
  /// Parameters of one norm: the width, twice for LayerNorm with a bias.
  int64_t NormParams(int64_t width) const {
    return norm == NormKind::kLayerNorm ? 2 * width : width;
  }
  /// Weight matrices of the MLP per h x f: 3 gated, 2 plain.
  int64_t MlpMatrices() const { return mlp == MlpKind::kGated ? 3 : 2; }
};

/// Reads a config.json given as a path, or as a name from the catalog in data/models/
/// ("qwen3.6-35b-a3b"); unknown names get a "did you mean".
Result<ModelConfig> LoadModelConfig(const std::string& path_or_catalog_name);

/// Parses config.json text. `file` names it in errors (which also carry line and column for
/// malformed JSON and the dotted field path for bad values).
Result<ModelConfig> ParseModelConfig(std::string_view json_text, const std::string& file);

/// The built-in reference model of the reference case.
inline constexpr const char* kReferenceModelName = "qwen3.6-35b-a3b";

}  // namespace strata

#endif  // STRATA_MODEL_MODEL_CONFIG_H_

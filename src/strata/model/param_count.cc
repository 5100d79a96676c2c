#include "strata/model/param_count.h"

namespace strata {

namespace {

// Softmax attention: q (doubled by an output gate), k, v, o; optional biases, q/k norms and
// one sink logit per head. docs/formulas.md, "Parameters: attention".
int64_t AttentionParams(int64_t h, const AttentionConfig& a) {
  const int64_t q = a.num_heads * a.head_dim;
  const int64_t kv = a.num_kv_heads * a.head_dim;
  int64_t p = h * q * (a.output_gate ? 2 : 1) + 2 * h * kv + q * h;
  if (a.bias) p += q + 2 * kv + h;
  if (a.qkv_bias) p += q + 2 * kv;
  if (a.qk_norm) p += 2 * a.head_dim;
  if (a.qk_norm_full_width) p += q + kv;
  if (a.sinks) p += a.num_heads;
  return p;
}

// Mamba-2: in_proj, depthwise conv (and its bias), A_log, D and dt_bias per head, the gated
// RMSNorm over the inner width, out_proj. transformers NemotronHMamba2Mixer.
int64_t Mamba2Params(int64_t h, const MambaConfig& m) {
  if (m.version == 1) {
    // Mamba-1 (transformers JambaMambaMixer): in_proj h -> 2 inner, depthwise conv over inner,
    // x_proj inner -> dt_rank + 2 d_state, dt_proj dt_rank -> inner with a bias, A_log
    // inner x d_state, D per channel, out_proj; Jamba's RMSNorms on dt, B and C.
    const int64_t inner = m.inner();
    int64_t p = h * m.in_proj_width() + inner * m.conv_kernel + m.dt_proj_weights() + inner +
                inner * m.state_size + inner + inner * h;
    if (m.conv_bias) p += inner;
    if (m.proj_bias) p += m.in_proj_width() + h;
    if (m.dt_bc_norms) p += m.dt_rank + 2 * m.state_size;
    return p;
  }
  int64_t p = h * m.in_proj_width() + m.conv_dim() * m.conv_kernel + 3 * m.num_heads + m.inner() +
              m.inner() * h;
  if (m.conv_bias) p += m.conv_dim();
  if (m.proj_bias) p += m.in_proj_width() + h;
  return p;
}

// The dense MLP: 3 h f gated or 2 h f plain, plus biases (fc1 2f or f, fc2 h) when present.
int64_t MlpParams(const ModelConfig& c, int64_t f) {
  const int64_t h = c.hidden_size;
  int64_t p = c.MlpMatrices() * h * f;
  if (c.mlp_bias) p += (c.MlpMatrices() - 1) * f + h;
  return p;
}

// MLA: q down (with its norm) and up, kv down (shared rope key) with its norm and up, o.
int64_t MlaParams(int64_t h, const MlaConfig& m) {
  const int64_t q_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
  int64_t p = 0;
  if (m.q_lora_rank > 0) {
    p += h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * m.num_heads * q_head;
  } else {
    p += h * m.num_heads * q_head;
  }
  p += h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank;
  p += m.kv_lora_rank * m.num_heads * (m.qk_nope_head_dim + m.v_head_dim);
  p += m.num_heads * m.v_head_dim * h;
  return p;
}

// Gated DeltaNet: in_proj_qkv, in_proj_z, in_proj_a, in_proj_b, depthwise conv (no bias),
// A_log and dt_bias per value head, a gated RMSNorm over one value head, out_proj.
int64_t GatedDeltaNetParams(int64_t h, const LinearAttentionConfig& g) {
  return h * g.conv_dim() + h * g.value_dim() + 2 * h * g.num_value_heads +
         g.conv_dim() * g.conv_kernel + 2 * g.num_value_heads + g.value_head_dim +
         g.value_dim() * h;
}

// Lightning attention (transformers MiniMaxLightningAttention): qkv_proj h -> 3 w, output_gate
// h -> w, the RMSNorm over w, out_proj w -> h; no biases. w = heads x head_dim.
int64_t LightningParams(int64_t h, const LightningConfig& l) {
  const int64_t w = l.width();
  return h * 3 * w + h * w + w + w * h;
}

int64_t SwigluParams(int64_t h, int64_t f) { return 3 * h * f; }

int64_t OneExpertParams(int64_t h, const MoeConfig& m) {
  int64_t p = SwigluParams(h, m.expert_intermediate_size);
  if (m.expert_bias) p += 2 * m.expert_intermediate_size + h;  // gate_up bias, down bias
  return p;
}

// A ViT block: two LayerNorms, fused qkv, proj and a GELU MLP, all with biases.
int64_t VisionBlockParams(const VisionConfig& v) {
  const int64_t d = v.hidden_size;
  const int64_t f = v.intermediate_size;
  return 2 * (2 * d) + (d * 3 * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d);
}

// Merger: LayerNorm over `norm_width`, then Linear(m -> m) and Linear(m -> out), with biases,
// where m = d * merge^2 (a merge x merge patch group concatenated).
int64_t MergerParams(const VisionConfig& v, int64_t norm_width) {
  const int64_t m = v.hidden_size * v.spatial_merge_size * v.spatial_merge_size;
  return 2 * norm_width + (m * m + m) + (m * v.out_hidden_size + v.out_hidden_size);
}

// Qwen2.5-VL: RMSNorms, fused qkv and proj with biases, a SwiGLU MLP with biases; the patch
// conv has no bias, no position table; the merger is RMSNorm(d) and two linears with biases.
VisionParams CountQwen25Vision(const VisionConfig& v) {
  VisionParams out;
  const int64_t d = v.hidden_size;
  const int64_t f = v.intermediate_size;
  const int64_t m = d * v.spatial_merge_size * v.spatial_merge_size;
  out.patch_embed = v.in_channels * v.temporal_patch_size * v.patch_size * v.patch_size * d;
  out.per_block = 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (3 * d * f + 2 * f + d);
  out.blocks = v.depth * out.per_block;
  out.mergers = d + (m * m + m) + (m * v.out_hidden_size + v.out_hidden_size);
  out.total = out.patch_embed + out.blocks + out.mergers;
  return out;
}

// CLIP (llava) and InternViT (InternVL): a patch conv, a class token and a position table,
// blocks of two LayerNorms, attention with biases and a GELU MLP with biases. CLIP has
// separate q/k/v/o, a pre- and a post-LayerNorm; InternViT a fused qkv (bias per qkv_bias) and
// two layer-scale vectors per block. The projector into the text width: llava's two linears
// (d -> t -> t); InternVL's mlp1, a LayerNorm over the shuffled width m then m -> t -> t.
VisionParams CountVitVision(const VisionConfig& v) {
  VisionParams out;
  const bool clip = v.kind == VisionKind::kClip;
  const int64_t d = v.hidden_size;
  const int64_t f = v.intermediate_size;
  const int64_t t = v.out_hidden_size;
  const int64_t m = d * v.spatial_merge_size * v.spatial_merge_size;
  out.patch_embed = v.in_channels * v.patch_size * v.patch_size * d + (clip ? 0 : d) + d;
  out.position_embed = v.num_position_embeddings * d;
  const int64_t attention =
      4 * d * d + (clip || v.qkv_bias ? 3 * d : 0) + d + (v.qk_norm ? 2 * d : 0);
  out.per_block = 4 * d + attention + (d * f + f) + (f * d + d) + (clip ? 0 : 2 * d);
  out.blocks = v.depth * out.per_block;
  const int64_t tower_norms = clip ? 4 * d : 0;  // pre_layrnorm and post_layernorm
  out.mergers = clip ? (d * t + t) + (t * t + t) : 2 * m + (m * t + t) + (t * t + t);
  out.total = out.patch_embed + out.position_embed + out.blocks + tower_norms + out.mergers;
  return out;
}

// SigLIP (Gemma 3): a patch conv with bias, a position table of the patches (no class token),
// blocks of two LayerNorms, q/k/v/o with biases and a GELU MLP with biases, one post-LayerNorm.
// Gemma 3's projector: mm_soft_emb_norm, an RMSNorm over d, and mm_input_projection_weight, a
// d x t matrix without bias (the average pool has no parameters).
VisionParams CountSiglipVision(const VisionConfig& v) {
  VisionParams out;
  const int64_t d = v.hidden_size;
  const int64_t f = v.intermediate_size;
  out.patch_embed = v.in_channels * v.patch_size * v.patch_size * d + d;
  out.position_embed = v.num_position_embeddings * d;
  out.per_block = 4 * d + (4 * d * d + 4 * d) + (d * f + f) + (f * d + d);
  out.blocks = v.depth * out.per_block;
  out.mergers = d + d * v.out_hidden_size;
  const int64_t post_layernorm = 2 * d;
  out.total = out.patch_embed + out.position_embed + out.blocks + post_layernorm + out.mergers;
  return out;
}

VisionParams CountVision(const VisionConfig& v) {
  VisionParams out;
  if (!v.present) return out;
  if (v.kind == VisionKind::kSiglip) return CountSiglipVision(v);
  if (v.kind == VisionKind::kQwen25Vl) return CountQwen25Vision(v);
  if (v.kind == VisionKind::kClip || v.kind == VisionKind::kInternVit) return CountVitVision(v);
  const int64_t d = v.hidden_size;
  out.patch_embed = v.in_channels * v.temporal_patch_size * v.patch_size * v.patch_size * d + d;
  out.position_embed = v.num_position_embeddings * d;
  out.per_block = VisionBlockParams(v);
  out.blocks = v.depth * out.per_block;
  const int64_t m = d * v.spatial_merge_size * v.spatial_merge_size;
  // The final merger normalises before the shuffle (width d); deepstack mergers after it (m).
  out.mergers = MergerParams(v, d) + v.deepstack_mergers * MergerParams(v, m);
  out.total = out.patch_embed + out.position_embed + out.blocks + out.mergers;
  return out;
}

}  // namespace

std::string_view ModuleKindName(ModuleKind kind) {
  switch (kind) {
    case ModuleKind::kEmbedding:
      return "embedding";
    case ModuleKind::kHead:
      return "head";
    case ModuleKind::kAttention:
      return "attention";
    case ModuleKind::kLinearAttention:
      return "linear_attention";
    case ModuleKind::kDenseMlp:
      return "dense_mlp";
    case ModuleKind::kRouter:
      return "router";
    case ModuleKind::kSharedExperts:
      return "shared_experts";
    case ModuleKind::kRoutedExperts:
      return "routed_experts";
    case ModuleKind::kNorms:
      return "norms";
    case ModuleKind::kMtp:
      return "mtp";
    case ModuleKind::kVision:
      return "vision";
  }
  return "?";
}

const std::array<ModuleKind, kModuleKindCount>& AllModuleKinds() {
  static const std::array<ModuleKind, kModuleKindCount> all = {
      ModuleKind::kEmbedding,     ModuleKind::kHead,
      ModuleKind::kAttention,     ModuleKind::kLinearAttention,
      ModuleKind::kDenseMlp,      ModuleKind::kRouter,
      ModuleKind::kSharedExperts, ModuleKind::kRoutedExperts,
      ModuleKind::kNorms,         ModuleKind::kMtp,
      ModuleKind::kVision};
  return all;
}

int64_t ModuleParams::Total() const {
  int64_t total = 0;
  for (int64_t c : counts_) total += c;
  return total;
}

ModuleParams& ModuleParams::operator+=(const ModuleParams& other) {
  for (size_t i = 0; i < kModuleKindCount; ++i) counts_[i] += other.counts_[i];
  return *this;
}

LayerParams CountLayerParams(const ModelConfig& config, const LayerSpec& spec, int64_t index) {
  const int64_t h = config.hidden_size;
  LayerParams layer;
  layer.index = index;
  layer.spec = spec;
  switch (spec.mixer) {
    case MixerKind::kFullAttention:
    case MixerKind::kSlidingAttention:
      layer.modules[ModuleKind::kAttention] = AttentionParams(h, config.attention);
      break;
    case MixerKind::kMla:
      layer.modules[ModuleKind::kAttention] = MlaParams(h, config.mla);
      break;
    case MixerKind::kGatedDeltaNet:
      layer.modules[ModuleKind::kLinearAttention] = GatedDeltaNetParams(h, config.linear_attention);
      break;
    case MixerKind::kMamba2:
    case MixerKind::kMamba1:  // version 1 in the same struct
      layer.modules[ModuleKind::kLinearAttention] = Mamba2Params(h, config.mamba);
      break;
    case MixerKind::kLightning:
      layer.modules[ModuleKind::kLinearAttention] = LightningParams(h, config.lightning);
      break;
    case MixerKind::kNone:
      break;
  }
  int64_t active_experts = 0;
  if (spec.ffn == FfnKind::kDense) {
    layer.modules[ModuleKind::kDenseMlp] = MlpParams(config, config.dense_mlp.intermediate_size);
  } else if (spec.ffn == FfnKind::kMoe) {
    const MoeConfig& m = config.moe;
    layer.per_expert = OneExpertParams(h, m);
    layer.modules[ModuleKind::kRoutedExperts] = m.num_experts * layer.per_expert;
    layer.modules[ModuleKind::kRouter] = m.num_experts * h + (m.router_bias ? m.num_experts : 0);
    layer.modules[ModuleKind::kSharedExperts] =
        m.num_shared_experts * SwigluParams(h, m.shared_expert_intermediate_size) +
        (m.shared_expert_gate ? h : 0);
    active_experts = m.top_k * layer.per_expert;
  }
  // One pre-norm per sub-block (two more with sandwich norms); a hybrid's single-purpose block
  // has one sub-block.
  const int64_t blocks =
      (spec.mixer != MixerKind::kNone ? 1 : 0) + (spec.ffn != FfnKind::kNone ? 1 : 0);
  layer.modules[ModuleKind::kNorms] = blocks * (config.norms_per_layer / 2) * config.NormParams(h);
  layer.active = layer.non_expert() + active_experts;
  return layer;
}

ModuleParams ParamBreakdown::AllModules() const {
  ModuleParams all = text;
  all[ModuleKind::kMtp] = mtp.total;
  all[ModuleKind::kVision] = vision.total;
  return all;
}

ParamBreakdown CountParams(const ModelConfig& config) {
  const int64_t h = config.hidden_size;
  ParamBreakdown out;
  int64_t active_layers = 0;
  for (size_t i = 0; i < config.layers.size(); ++i) {
    LayerParams layer = CountLayerParams(config, config.layers[i], static_cast<int64_t>(i));
    out.text += layer.modules;
    active_layers += layer.active;
    out.layers.push_back(layer);
  }
  out.text[ModuleKind::kEmbedding] = config.vocab_size * h + config.position_embeddings * h;
  out.text[ModuleKind::kHead] = (config.tie_word_embeddings ? 0 : config.vocab_size * h) +
                                (config.head_bias ? config.vocab_size : 0);
  out.final_norm = config.NormParams(h);
  out.text[ModuleKind::kNorms] += out.final_norm;

  // Active matmul parameters: every layer with top_k experts, plus the head (the tied
  // embedding when the head is tied: the logits GEMM still runs).
  out.active_matmul = active_layers + config.vocab_size * h;
  out.active_with_embedding = active_layers + out.text[ModuleKind::kEmbedding] +
                              out.text[ModuleKind::kHead] + out.final_norm;

  if (config.mtp_layers > 0) {
    // One MTP block: eh_proj 2h -> h, enorm + hnorm, a full-attention decoder layer whose FFN
    // follows the last main layer, and a final norm.
    const FfnKind ffn = config.layers.empty() ? FfnKind::kDense : config.layers.back().ffn;
    const MixerKind mixer =
        config.mla.kv_lora_rank > 0 ? MixerKind::kMla : MixerKind::kFullAttention;
    const LayerParams mtp_layer = CountLayerParams(config, LayerSpec{mixer, ffn}, 0);
    int64_t block = 2 * h * h + 2 * h + mtp_layer.total() + h;
    if (config.mtp_embedding_copies) block += 2 * config.vocab_size * h;
    out.mtp.total = config.mtp_layers * block;
    out.mtp.expert = config.mtp_layers * mtp_layer.expert();
  }
  out.vision = CountVision(config.vision);
  return out;
}

}  // namespace strata

#include "strata/model/flops.h"

#include <algorithm>

namespace strata {

namespace {

// Tokens a query attends to on average, for a sequence of `s` tokens.
// Causal full attention: token i sees i tokens, mean s/2. Sliding window w (causal): token i
// sees min(i, w); the mean over s > w tokens is w - w^2/(2s). Non-causal: all s (or w).
double AttendedTokens(double s, AttentionMask mask, int64_t window) {
  const double w = static_cast<double>(window);
  if (mask == AttentionMask::kNonCausal) return window > 0 ? std::min(s, w) : s;
  if (window > 0 && s > w) return w - w * w / (2.0 * s);
  return s / 2.0;
}

FlopCount Gemm(double weights) { return FlopCount::Of(2.0 * weights); }  // 2 FLOP per MAC

void AddMixer(const ModelConfig& c, double s, AttentionMask mask, LayerFlops& f) {
  const double h = static_cast<double>(c.hidden_size);
  switch (f.spec.mixer) {
    case MixerKind::kFullAttention:
    case MixerKind::kSlidingAttention: {
      const AttentionConfig& a = c.attention;
      const double q = static_cast<double>(a.num_heads * a.head_dim);
      const double kv = static_cast<double>(a.num_kv_heads * a.head_dim);
      f.projections = Gemm(h * q * (a.output_gate ? 2 : 1) + 2 * h * kv + q * h);
      const int64_t window = f.spec.mixer == MixerKind::kSlidingAttention ? a.sliding_window : 0;
      // QK^T and PV: 2 FLOP x q width per attended token, each.
      f.core_attention = FlopCount::Of(2.0 * 2.0 * q * AttendedTokens(s, mask, window));
      break;
    }
    case MixerKind::kMla: {
      const MlaConfig& m = c.mla;
      const double nh = static_cast<double>(m.num_heads);
      const double qh = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
      const double q_lora = static_cast<double>(m.q_lora_rank);
      const double kv_lora = static_cast<double>(m.kv_lora_rank);
      const double q_weights = m.q_lora_rank > 0 ? h * q_lora + q_lora * nh * qh : h * nh * qh;
      f.projections = Gemm(q_weights + h * (kv_lora + static_cast<double>(m.qk_rope_head_dim)) +
                           kv_lora * nh * static_cast<double>(m.qk_nope_head_dim + m.v_head_dim) +
                           nh * static_cast<double>(m.v_head_dim) * h);
      f.core_attention = FlopCount::Of(2.0 * nh * (qh + static_cast<double>(m.v_head_dim)) *
                                       AttendedTokens(s, mask, 0));
      break;
    }
    case MixerKind::kGatedDeltaNet: {
      const LinearAttentionConfig& g = c.linear_attention;
      const double conv = static_cast<double>(g.conv_dim());
      const double v = static_cast<double>(g.value_dim());
      const double nv = static_cast<double>(g.num_value_heads);
      f.projections = Gemm(h * conv + h * v + 2 * h * nv + v * h);
      // Depthwise conv: kernel MACs per channel. Delta rule per value head on a dk x dv state:
      // S^T k, the rank-1 update, the decay and S^T q: 4 dk dv MACs (megatron-core's count).
      f.linear_state = Gemm(static_cast<double>(g.conv_kernel) * conv +
                            4.0 * nv * static_cast<double>(g.key_head_dim * g.value_head_dim));
      break;
    }
    case MixerKind::kMamba2:
    case MixerKind::kMamba1: {
      const MambaConfig& m = c.mamba;
      // Mamba-1 adds x_proj and dt_proj (dt_proj_weights is 0 for Mamba-2).
      f.projections = Gemm(h * static_cast<double>(m.in_proj_width() + m.inner()) +
                           static_cast<double>(m.dt_proj_weights()));
      // Depthwise conv, then per head the recurrent form of the scan on a d_state x head_dim
      // state: the update (B x^T) and the read-out (C^T S), 2 d_state head_dim MACs.
      f.linear_state = Gemm(static_cast<double>(m.conv_kernel * m.conv_dim()) +
                            2.0 * static_cast<double>(m.num_heads * m.head_dim * m.state_size));
      break;
    }
    case MixerKind::kLightning: {
      // qkv, output gate and out_proj GEMMs; per head the recurrent form on a d x d state:
      // the update (k v^T) and the read-out (q^T S), 2 d^2 MACs (the decay is elementwise).
      const LightningConfig& l = c.lightning;
      f.projections = Gemm(5.0 * h * static_cast<double>(l.width()));
      f.linear_state = Gemm(2.0 * static_cast<double>(l.width() * l.head_dim));
      break;
    }
    case MixerKind::kNone:
      break;
  }
}

void AddFfn(const ModelConfig& c, LayerFlops& f) {
  const double h = static_cast<double>(c.hidden_size);
  if (f.spec.ffn == FfnKind::kNone) return;
  if (f.spec.ffn == FfnKind::kDense) {
    f.ffn = Gemm(static_cast<double>(c.MlpMatrices()) * h *
                 static_cast<double>(c.dense_mlp.intermediate_size));
    return;
  }
  const MoeConfig& m = c.moe;
  f.ffn = Gemm(3.0 * h *
               static_cast<double>(m.top_k * m.expert_intermediate_size +
                                   m.num_shared_experts * m.shared_expert_intermediate_size));
  f.router = Gemm(h * static_cast<double>(m.num_experts) + (m.shared_expert_gate ? h : 0.0));
}

FlopCount VisionPerPatch(const VisionConfig& v) {
  if (!v.present) return FlopCount();
  const double d = static_cast<double>(v.hidden_size);
  const double f = static_cast<double>(v.intermediate_size);
  const double merge = static_cast<double>(v.spatial_merge_size * v.spatial_merge_size);
  const double m = d * merge;
  const double patch_in =
      static_cast<double>(v.in_channels * v.temporal_patch_size * v.patch_size * v.patch_size);
  // GEMMs only (attention inside the tower depends on the image size): patch embedding, the
  // blocks' qkv, proj and MLP, and the merger, which runs once per merge x merge patches.
  // Qwen2.5-VL's blocks have a SwiGLU MLP (3 d f), the others a GELU MLP (2 d f). The
  // projector: Qwen's merger m -> m -> out; llava's d -> t -> t and InternVL's m -> t -> t;
  // Gemma 3's d -> t once per pooled merge x merge patches.
  const double mlp = v.kind == VisionKind::kQwen25Vl ? 3 * d * f : 2 * d * f;
  const double blocks = static_cast<double>(v.depth) * (3 * d * d + d * d + mlp);
  const double t = static_cast<double>(v.out_hidden_size);
  const bool qwen = v.kind == VisionKind::kQwen3Vl || v.kind == VisionKind::kQwen25Vl;
  const double merger = v.kind == VisionKind::kSiglip ? d * t / merge
                        : qwen                        ? (m * m + m * t) / merge
                                                      : (m * t + t * t) / merge;
  return Gemm(patch_in * d + blocks + merger);
}

}  // namespace

ForwardFlops CountForwardFlops(const ModelConfig& config, double attention_tokens,
                               AttentionMask mask) {
  ForwardFlops out;
  for (size_t i = 0; i < config.layers.size(); ++i) {
    LayerFlops f;
    f.index = static_cast<int64_t>(i);
    f.spec = config.layers[i];
    AddMixer(config, attention_tokens, mask, f);
    AddFfn(config, f);
    out.projections += f.projections;
    out.core_attention += f.core_attention;
    out.linear_state += f.linear_state;
    out.ffn += f.ffn;
    out.router += f.router;
    out.layers.push_back(f);
  }
  const double h = static_cast<double>(config.hidden_size);
  out.logits = Gemm(h * static_cast<double>(config.vocab_size));
  if (config.mtp_layers > 0) {
    LayerFlops f;
    f.spec.mixer = config.mla.kv_lora_rank > 0 ? MixerKind::kMla : MixerKind::kFullAttention;
    f.spec.ffn = config.layers.empty() ? FfnKind::kDense : config.layers.back().ffn;
    AddMixer(config, attention_tokens, mask, f);
    AddFfn(config, f);
    // Each block: eh_proj (2h -> h), its decoder layer, and its own logits.
    out.mtp = static_cast<double>(config.mtp_layers) *
              (Gemm(2 * h * h) + f.main() + f.router + out.logits);
  }
  out.vision_per_patch = VisionPerPatch(config.vision);
  return out;
}

}  // namespace strata

#include "strata/model/flop_conventions.h"

#include <fmt/format.h>

#include "strata/model/count_cast.h"

namespace strata {

namespace {

// One softmax-attention layer as megatron-core counts it (per token, training): 6 x (qkv and
// gate projections + causal core attention q S/2 x 2 + out projection). It ignores sliding
// windows, biases, q/k norms and sinks.
double MegatronAttention(const ModelConfig& c, double s) {
  const double h = AsReal(c.hidden_size);
  const AttentionConfig& a = c.attention;
  const double q = AsReal(a.num_heads * a.head_dim);
  const double kv = AsReal(a.num_kv_heads * a.head_dim);
  const double gate = a.output_gate ? q : 0.0;
  return 6.0 * (h * (q + 2 * kv + gate) + q * s / 2.0 * 2.0 + q * h);
}

// megatron-core's MLA term, including its "+ 1" for each low-rank norm.
double MegatronMla(const ModelConfig& c, double s) {
  const double h = AsReal(c.hidden_size);
  const MlaConfig& m = c.mla;
  const double nh = AsReal(m.num_heads);
  const double qh = AsReal(m.qk_nope_head_dim + m.qk_rope_head_dim);
  const double q_term = m.q_lora_rank > 0 ? AsReal(m.q_lora_rank) * (h + nh * qh + 1) : h * nh * qh;
  return 6.0 * (q_term +
                AsReal(m.kv_lora_rank) * (h + nh * AsReal(m.qk_nope_head_dim + m.v_head_dim) + 1) +
                h * AsReal(m.qk_rope_head_dim) + nh * AsReal(m.v_head_dim) * h + s * nh * qh / 2.0 +
                s * nh * AsReal(m.v_head_dim) / 2.0);
}

// megatron-core's Gated DeltaNet term: in_proj, conv1d, the delta rule (4 dv^2 per value
// head), out_proj; constant in S.
double MegatronGatedDeltaNet(const ModelConfig& c) {
  const double h = AsReal(c.hidden_size);
  const LinearAttentionConfig& g = c.linear_attention;
  const double qk = AsReal(g.key_dim());
  const double v = AsReal(g.value_dim());
  const double nv = AsReal(g.num_value_heads);
  return 6.0 * (h * (2 * qk + 2 * v + 2 * nv) + AsReal(g.conv_kernel) * (2 * qk + v) +
                nv * AsReal(g.value_head_dim * g.value_head_dim) * 4.0 + h * v);
}

double MegatronMixer(const ModelConfig& c, MixerKind kind, double s) {
  switch (kind) {
    case MixerKind::kFullAttention:
    case MixerKind::kSlidingAttention:
      return MegatronAttention(c, s);
    case MixerKind::kMla:
      return MegatronMla(c, s);
    case MixerKind::kGatedDeltaNet:
      return MegatronGatedDeltaNet(c);
    case MixerKind::kMamba2:
    case MixerKind::kMamba1: {
      // megatron-core's Mamba term: in_proj and out_proj GEMMs and the scan, constant in S
      // (plus Mamba-1's x_proj and dt_proj, 0 for Mamba-2).
      const MambaConfig& m = c.mamba;
      return 6.0 * (AsReal(c.hidden_size) * AsReal(m.in_proj_width() + m.inner()) +
                    AsReal(m.dt_proj_weights()) + AsReal(m.conv_kernel * m.conv_dim()) +
                    2.0 * AsReal(m.inner() * m.state_size));
    }
    case MixerKind::kLightning: {
      // The same GEMMs and state terms as CountForwardFlops, x 6 (forward and backward).
      const LightningConfig& l = c.lightning;
      return 6.0 * (5.0 * AsReal(c.hidden_size) * AsReal(l.width()) +
                    2.0 * AsReal(l.width() * l.head_dim));
    }
    case MixerKind::kNone:
      return 0;
  }
  return 0;
}

double MegatronFfn(const ModelConfig& c, FfnKind kind) {
  const double h = AsReal(c.hidden_size);
  if (kind == FfnKind::kNone) return 0;
  if (kind == FfnKind::kDense) {
    return 6.0 * h * AsReal(c.dense_mlp.intermediate_size) * AsReal(c.MlpMatrices());
  }
  const MoeConfig& m = c.moe;
  return 6.0 * h * 3.0 *
         AsReal(m.expert_intermediate_size * m.top_k +
                m.num_shared_experts * m.shared_expert_intermediate_size);
}

}  // namespace

std::string_view FlopConventionName(FlopConvention convention) {
  switch (convention) {
    case FlopConvention::kSixNNominal:
      return "6N-nominal";
    case FlopConvention::kSixNActive:
      return "6N-active";
    case FlopConvention::kSixNWithEmbedding:
      return "6N-with-embedding";
    case FlopConvention::kMegatron:
      return "megatron";
    case FlopConvention::kPalm:
      return "palm";
    case FlopConvention::kFirstPrinciples:
      return "first-principles";
  }
  return "?";
}

std::string_view RecomputeName(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

FlopCount MegatronTrainingFlopsPerToken(const ModelConfig& config, double attention_tokens,
                                        bool include_mtp) {
  const double h = AsReal(config.hidden_size);
  double total = 0;
  for (const LayerSpec& layer : config.layers) {
    total += MegatronMixer(config, layer.mixer, attention_tokens) + MegatronFfn(config, layer.ffn);
  }
  const double mtp = include_mtp ? AsReal(config.mtp_layers) : 0.0;
  if (mtp > 0) {
    // MTP layers are full attention with the last main layer's FFN, plus norms and eh_proj.
    const MixerKind mixer =
        config.mla.kv_lora_rank > 0 ? MixerKind::kMla : MixerKind::kFullAttention;
    const FfnKind ffn = config.layers.back().ffn;
    total += mtp * (MegatronMixer(config, mixer, attention_tokens) + MegatronFfn(config, ffn) +
                    6.0 * (3 * h + 2 * h * h));
  }
  total += 6.0 * h * AsReal(config.vocab_size) * (mtp + 1);
  return FlopCount::Of(total);
}

std::vector<ConventionFlops> TrainingFlopsPerToken(const ModelConfig& config,
                                                   const ParamBreakdown& params,
                                                   const ConventionInputs& inputs) {
  const double s = inputs.attention_tokens;
  std::vector<ConventionFlops> out;
  if (inputs.nominal_active_params) {
    const double n = AsReal(*inputs.nominal_active_params);
    out.push_back({FlopConvention::kSixNNominal, FlopCount::Of(6 * n),
                   fmt::format("6 x N_nominal = 6 x {:.4g} = {:.4g} FLOP/token", n, 6 * n)});
  }
  const double n_active = AsReal(params.active_matmul);
  out.push_back({FlopConvention::kSixNActive, FlopCount::Of(6 * n_active),
                 fmt::format("6 x N_active = 6 x {} = {:.4g} FLOP/token", params.active_matmul,
                             6 * n_active)});
  const double n_embed = AsReal(params.active_with_embedding);
  out.push_back({FlopConvention::kSixNWithEmbedding, FlopCount::Of(6 * n_embed),
                 fmt::format("6 x N_active+embedding = 6 x {} = {:.4g} FLOP/token",
                             params.active_with_embedding, 6 * n_embed)});

  const FlopCount megatron = MegatronTrainingFlopsPerToken(config, s, inputs.include_mtp);
  const FlopCount megatron_no_attention =
      MegatronTrainingFlopsPerToken(config, 0.0, inputs.include_mtp);
  out.push_back(
      {FlopConvention::kMegatron, megatron,
       fmt::format("6 x (GEMM weights + GDN terms + logits) + 6 x causal attention = "
                   "{:.4g} + {:.4g} (S = {:.0f}) = {:.4g} FLOP/token",
                   megatron_no_attention.count(),
                   FlopCount(megatron - megatron_no_attention).count(), s, megatron.count())});

  // PaLM: 6N + 12 L H Q S over the softmax-attention layers, no causal halving.
  double attention_width = 0;  // sum over attention layers of H x Q (MLA: mean of qk and v)
  for (const LayerSpec& layer : config.layers) {
    if (layer.mixer == MixerKind::kFullAttention || layer.mixer == MixerKind::kSlidingAttention) {
      attention_width += AsReal(config.attention.num_heads * config.attention.head_dim);
    } else if (layer.mixer == MixerKind::kMla) {
      const MlaConfig& m = config.mla;
      attention_width += AsReal(m.num_heads) *
                         AsReal(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) / 2.0;
    }
  }
  const double palm_attention = 12.0 * attention_width * s;
  out.push_back({FlopConvention::kPalm, FlopCount::Of(6 * n_active + palm_attention),
                 fmt::format("6 x N_active + 12 x sum(H x Q) x S = {:.4g} + 12 x {:.0f} x {:.0f} "
                             "= {:.4g} FLOP/token",
                             6 * n_active, attention_width, s, 6 * n_active + palm_attention)});

  const ForwardFlops fwd = CountForwardFlops(config, s, AttentionMask::kCausal);
  const FlopCount first = FlopCount(kTrainingToForwardRatio * fwd.main());
  out.push_back({FlopConvention::kFirstPrinciples, first,
                 fmt::format("3 x (GEMMs {:.4g} + attention {:.4g} + GDN state {:.4g} + logits "
                             "{:.4g}) = {:.4g} FLOP/token (router {:.4g} not included)",
                             FlopCount(fwd.projections + fwd.ffn).count(),
                             fwd.core_attention.count(), fwd.linear_state.count(),
                             fwd.logits.count(), first.count(), 3 * fwd.router.count())});
  return out;
}

FlopCount HardwareFlopsPerToken(FlopCount model_training_per_token, const ForwardFlops& forward,
                                Recompute recompute, double full_layer_fraction,
                                double output_layers) {
  switch (recompute) {
    case Recompute::kNone:
      return model_training_per_token;
    case Recompute::kSelective:
      return model_training_per_token + forward.core_attention;
    case Recompute::kFull:
      // The decoder layers' forward (a third of training less the output layers) runs once
      // more, over the recomputed share f of the layers. The output layer is not re-run: the
      // course's "x 4/3" counts it, which the hardware never computes a second time.
      return model_training_per_token +
             (model_training_per_token * (1.0 / kTrainingToForwardRatio) -
              forward.logits * output_layers) *
                 full_layer_fraction;
  }
  return model_training_per_token;
}

}  // namespace strata

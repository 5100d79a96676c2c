#include "strata/rl/kv_cache.h"

#include <algorithm>
#include <cmath>

namespace strata {
namespace {

// Heads of a group of `heads` one rank holds: split over TP, at least one (vLLM replicates a KV
// head on the TP / kv_heads ranks that share it).
int64_t HeadsPerGpu(int64_t heads, int64_t tp) {
  return std::max<int64_t>(1, (heads + tp - 1) / tp);
}

}  // namespace

Bytes KvFootprint::ForSequence(double tokens) const {
  const double windowed =
      sliding_window > 0 ? std::min(tokens, static_cast<double>(sliding_window)) : tokens;
  return full_per_token * tokens + sliding_per_token * windowed + state_per_sequence;
}

Bytes KvFootprint::AllocatedForSequence(double tokens) const {
  if (block_tokens <= 0) return ForSequence(tokens);
  const auto block = static_cast<double>(block_tokens);
  return ForSequence(std::ceil(tokens / block) * block) + state_padding_per_sequence;
}

int64_t UnifiedBlockTokens(Bytes state_page, Bytes attention_token_page, int64_t alignment) {
  const double aligned = static_cast<double>(alignment) * attention_token_page.value();
  if (aligned <= 0) return 0;
  return alignment * static_cast<int64_t>(std::ceil(state_page.value() / aligned));
}

KvFootprint ComputeKvFootprint(const ModelConfig& model, int64_t tp, const CacheDtypes& dtypes) {
  KvFootprint f;
  f.tp = std::max<int64_t>(1, tp);
  const auto kv = static_cast<double>(dtypes.kv_bytes);
  const auto state = static_cast<double>(dtypes.state_bytes);
  const AttentionConfig& a = model.attention;
  const int64_t kv_heads = HeadsPerGpu(a.num_kv_heads, f.tp);
  // Keys and values: 2 x heads x head_dim elements per token per layer.
  const double attention_token = 2.0 * static_cast<double>(kv_heads * a.head_dim) * kv;
  // MLA caches the compressed latent and the shared rope key, the same on every TP rank.
  const MlaConfig& m = model.mla;
  const double mla_token = static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) * kv;
  // Gated DeltaNet: a (value heads / TP) x d_k x d_v recurrent state and the causal conv's last
  // (kernel - 1) inputs over (2 key_dim + value_dim) / TP channels.
  const LinearAttentionConfig& g = model.linear_attention;
  const double gdn_state =
      static_cast<double>(g.num_value_heads / f.tp * g.key_head_dim * g.value_head_dim) * state +
      static_cast<double>(g.conv_dim() / f.tp * std::max<int64_t>(0, g.conv_kernel - 1)) * kv;
  // Mamba-2: heads x head_dim x d_state; Mamba-1: inner x d_state; conv as above.
  const MambaConfig& s = model.mamba;
  const double mamba_state =
      static_cast<double>(s.inner() / f.tp * s.state_size) * state +
      static_cast<double>(s.conv_dim() / f.tp * std::max<int64_t>(0, s.conv_kernel - 1)) * kv;
  // Lightning attention: a d x d state per head.
  const LightningConfig& l = model.lightning;
  const double lightning_state =
      static_cast<double>(l.num_heads / f.tp * l.head_dim * l.head_dim) * state;

  double full = 0, sliding = 0, per_sequence = 0;
  for (const LayerSpec& layer : model.layers) {
    switch (layer.mixer) {
      case MixerKind::kFullAttention:
        full += attention_token;
        ++f.attention_layers;
        f.kv_heads_per_gpu = kv_heads;
        break;
      case MixerKind::kSlidingAttention:
        sliding += attention_token;
        f.sliding_window = a.sliding_window;
        ++f.attention_layers;
        ++f.sliding_layers;
        f.kv_heads_per_gpu = kv_heads;
        break;
      case MixerKind::kMla:
        full += mla_token;
        ++f.attention_layers;
        break;
      case MixerKind::kGatedDeltaNet:
        per_sequence += gdn_state;
        ++f.state_layers;
        break;
      case MixerKind::kMamba2:
      case MixerKind::kMamba1:
        per_sequence += mamba_state;
        ++f.state_layers;
        break;
      case MixerKind::kLightning:
        per_sequence += lightning_state;
        ++f.state_layers;
        break;
      case MixerKind::kNone:
        break;
    }
  }
  f.full_per_token = Bytes::Count(full);
  f.sliding_per_token = Bytes::Count(sliding);
  f.state_per_sequence = Bytes::Count(per_sequence);
  // A hybrid model's pages are unified (KvFootprint::block_tokens): FlashAttention's blocks are
  // multiples of 16 tokens, MLA's of 64 (128 under CUTLASS MLA, not modelled; nor Blackwell's
  // 32 for head size 256 under FlashInfer).
  const bool mla = model.mla.kv_lora_rank > 0;
  const double token_page = mla ? mla_token : attention_token;
  if (f.state_layers > 0 && f.attention_layers > 0 && token_page > 0) {
    const Bytes state_page = Bytes::Count(per_sequence / static_cast<double>(f.state_layers));
    f.block_tokens = UnifiedBlockTokens(state_page, Bytes::Count(token_page), mla ? 64 : 16);
    const Bytes page = Bytes::Count(static_cast<double>(f.block_tokens) * token_page);
    f.state_padding_per_sequence = (page - state_page) * static_cast<double>(f.state_layers);
  }
  return f;
}

}  // namespace strata

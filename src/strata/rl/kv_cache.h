// What one sequence keeps on one rollout GPU while it is generated: the softmax-attention
// layers' keys and values, which grow with every token, and the linear-attention / state-space
// layers' fixed state. Per GPU of a rollout instance of tensor-parallel size TP, as vLLM lays it
// out: KV heads are split over TP and replicated when TP exceeds them; MLA's compressed latent is
// one per token on every rank; recurrent states are split by heads. Formulas: docs/rl.md,
// "KV cache".
#ifndef STRATA_RL_KV_CACHE_H_
#define STRATA_RL_KV_CACHE_H_

#include <cstdint>

#include "strata/core/units.h"
#include "strata/model/model_config.h"

namespace strata {

/// Element sizes of the rollout engine's caches (vLLM kv_cache_dtype, mamba_ssm_cache_dtype).
struct CacheDtypes {
  int64_t kv_bytes = 2;     // attention keys and values, and the causal-conv state
  int64_t state_bytes = 2;  // the recurrent (SSM / delta-rule / lightning) state
};

struct KvFootprint {
  int64_t tp = 1;
  /// Full-attention and MLA layers: bytes per token of context, on one GPU.
  Bytes full_per_token;
  /// Sliding-window layers: bytes per token, up to `sliding_window` tokens per sequence.
  Bytes sliding_per_token;
  int64_t sliding_window = 0;
  /// Gated DeltaNet, Mamba and lightning layers: bytes per sequence, whatever its length.
  Bytes state_per_sequence;
  /// KV heads one GPU holds in a full-attention layer (0 without GQA/MHA layers):
  /// max(1, ceil(kv_heads / TP)); above kv_heads, TP replicates heads and saves nothing.
  int64_t kv_heads_per_gpu = 0;
  int64_t attention_layers = 0;  // softmax-attention and MLA layers, sliding ones included
  int64_t sliding_layers = 0;    // of those, the sliding-window ones
  int64_t state_layers = 0;      // layers with a fixed per-sequence state
  /// A hybrid model (attention and state layers): vLLM makes every layer's page one size. The
  /// attention block grows to the smallest multiple of the kernel's alignment whose page holds
  /// one layer's state, `block_tokens` tokens, and each state page is padded to that page
  /// (vllm-project/vllm@1936cf3841edb9781b06c50fc4daf4bac9d3b23e:
  /// vllm/model_executor/models/config.py, HybridAttentionMambaModelConfig, prefix caching
  /// off). 0 when the model is not hybrid: tokens take no whole blocks and nothing is padded.
  int64_t block_tokens = 0;
  Bytes state_padding_per_sequence;  // the padding of every state layer's page, one sequence

  /// Bytes on one GPU one sequence of `tokens` tokens of context reads: its KV and its state.
  Bytes ForSequence(double tokens) const;
  /// Bytes on one GPU vLLM allocates for that sequence: its attention tokens in whole blocks
  /// and its state pages padded (ForSequence when the model is not hybrid).
  Bytes AllocatedForSequence(double tokens) const;
};

/// vLLM's attention block for a hybrid model: `alignment` x ceil(state page / (alignment x
/// attention page of one token)), each page one layer's.
int64_t UnifiedBlockTokens(Bytes state_page, Bytes attention_token_page, int64_t alignment);

/// The footprint of `model` on one GPU of a rollout instance with tensor parallelism `tp`.
KvFootprint ComputeKvFootprint(const ModelConfig& model, int64_t tp, const CacheDtypes& dtypes);

}  // namespace strata

#endif  // STRATA_RL_KV_CACHE_H_

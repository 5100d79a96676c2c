// FLOPs per token of the forward pass, per decoder layer and by kind of work, from first
// principles: a GEMM of an (m x k) by a (k x n) matrix is 2mkn FLOP. Training is forward plus
// backward, and backward is twice forward (data and weight gradients): 3x forward.
// Formulas with the reference model's numbers: docs/formulas.md, "FLOPs per token".
#ifndef STRATA_MODEL_FLOPS_H_
#define STRATA_MODEL_FLOPS_H_

#include <cstdint>
#include <vector>

#include "strata/core/units.h"
#include "strata/model/model_config.h"
#include "strata/model/sequence_lengths.h"

namespace strata {

/// Causal: a token attends to the tokens before it (half the S x S scores on average).
/// Non-causal: to all S tokens, as PaLM's appendix counts it.
enum class AttentionMask { kCausal, kNonCausal };

struct LayerFlops {
  int64_t index = 0;
  LayerSpec spec;
  FlopCount projections;     // mixer GEMMs: q/k/v/o, gates, MLA down/up, GDN in/out
  FlopCount core_attention;  // QK^T and PV (grows with the sequence)
  FlopCount linear_state;    // GDN causal conv and gated delta rule (constant in S)
  FlopCount ffn;             // dense MLP, or top_k routed + shared experts
  FlopCount router;          // h x E router GEMM (labelled, not in the main total)

  FlopCount main() const { return projections + core_attention + linear_state + ffn; }
};

struct ForwardFlops {
  std::vector<LayerFlops> layers;
  FlopCount projections;
  FlopCount core_attention;
  FlopCount linear_state;
  FlopCount ffn;
  FlopCount logits;  // the head, h x V
  FlopCount router;  // separate: routers are tiny GEMMs that conventions leave out
  FlopCount mtp;     // separate: the MTP blocks and their logits, when built
  /// Separate and per image patch entering the tower (not per text token).
  FlopCount vision_per_patch;

  /// Decoder layers (without routers) plus logits: the work every convention aims to count.
  FlopCount main() const { return projections + core_attention + linear_state + ffn + logits; }
};

/// Forward FLOP per text token, attention sized by `attention_tokens` (use
/// SequenceLengths::AttentionTokens()).
ForwardFlops CountForwardFlops(const ModelConfig& config, double attention_tokens,
                               AttentionMask mask);

/// Training (forward + backward) is 3x forward.
inline constexpr double kTrainingToForwardRatio = 3.0;

}  // namespace strata

#endif  // STRATA_MODEL_FLOPS_H_

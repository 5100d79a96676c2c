// Training FLOP per token under the conventions people quote MFU with, side by side. They
// differ in what they count (embedding? attention? which attention mask?), which is why one
// job can be "5.9%" and "9.8%" at once. Formulas: docs/formulas.md, "MFU conventions".
#ifndef STRATA_MODEL_FLOP_CONVENTIONS_H_
#define STRATA_MODEL_FLOP_CONVENTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/units.h"
#include "strata/model/flops.h"
#include "strata/model/model_config.h"
#include "strata/model/param_count.h"

namespace strata {

enum class FlopConvention {
  kSixNNominal,        // 6 x the active parameters the model's name advertises ("A3B")
  kSixNActive,         // 6 x active matmul parameters (layers + head)
  kSixNWithEmbedding,  // 6 x active parameters including the input embedding
  kMegatron,           // megatron-core's num_floating_point_operations, causal attention
  kPalm,               // PaLM appendix B: 6N + 12 L H Q S, non-causal attention
  kFirstPrinciples,    // 3 x CountForwardFlops(...).main(), causal attention
};

std::string_view FlopConventionName(FlopConvention convention);  // "megatron", "6N-active"...

struct ConventionFlops {
  FlopConvention convention;
  FlopCount training_per_token;
  std::string formula;  // the formula with the numbers substituted, for --explain
};

struct ConventionInputs {
  double attention_tokens = 0;                   // E[S^2]/E[S], or a bound of it
  std::optional<int64_t> nominal_active_params;  // from the catalog; absent: no 6N-nominal row
  bool include_mtp = false;                      // whether the MTP blocks are built and trained
};

/// Megatron-core's count per token (its total divided by batch x seq_length): 6 x (GEMM
/// weights, without routers and norms) + 6 x causal core attention + its Gated DeltaNet term
/// + 6 h V logits, with MTP blocks when include_mtp.
FlopCount MegatronTrainingFlopsPerToken(const ModelConfig& config, double attention_tokens,
                                        bool include_mtp);

/// Every convention available for this model, in the order of FlopConvention.
std::vector<ConventionFlops> TrainingFlopsPerToken(const ModelConfig& config,
                                                   const ParamBreakdown& params,
                                                   const ConventionInputs& inputs);

/// What recompute adds to the hardware's work (HFU counts it; MFU does not).
enum class Recompute {
  kNone,
  kSelective,  // core attention recomputed in backward: + its forward once more
  kFull,       // the decoder layers' forward runs again in backward (not the output layer)
};

std::string_view RecomputeName(Recompute recompute);  // "none", "selective", "full"

/// Hardware FLOP per token: model FLOP plus the recomputed forward work. Under full recompute
/// `full_layer_fraction` of the decoder layers re-run their forward: the count's forward (a
/// third of it) less its `output_layers` output-layer GEMMs (2 h V each: the main head, and one
/// per trained MTP block), which megatron-core computes outside the checkpointed layers
/// (GPTModel's output_layer and loss run after TransformerBlock's _checkpointed_forward; HF's
/// gradient checkpointing wraps the decoder layers alone).
FlopCount HardwareFlopsPerToken(FlopCount model_training_per_token, const ForwardFlops& forward,
                                Recompute recompute, double full_layer_fraction = 1,
                                double output_layers = 1);

}  // namespace strata

#endif  // STRATA_MODEL_FLOP_CONVENTIONS_H_

// Megatron-style model descriptions: the model arguments of Megatron-LM / megatron-core
// (num_layers, hidden_size, ffn_hidden_size, num_attention_heads, num_query_groups, swiglu,
// untie_embeddings_and_output_weights, vocabulary padding by TP...), as a JSON object with the
// argument names in snake case, so that NeMo/Megatron users need no Hugging Face config.json.
// The importers build the same object from a command line.
#ifndef STRATA_MODEL_MEGATRON_MODEL_H_
#define STRATA_MODEL_MEGATRON_MODEL_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "strata/core/result.h"
#include "strata/model/model_config.h"

namespace strata {

/// True for an object without model_type that has num_layers and hidden_size.
bool LooksLikeMegatronModel(const nlohmann::json& object);

/// Megatron's padded vocabulary: the tokenizer's size rounded up to a multiple of
/// make_vocab_size_divisible_by x TP (megatron/training/tokenizer: _vocab_size_with_padding).
int64_t MegatronPaddedVocab(int64_t vocab, int64_t divisible_by, int64_t tp);

/// Builds the model from Megatron argument names. Megatron's own defaults apply to what is
/// absent (biases on every linear layer, LayerNorm, tied embeddings, learned positions, GELU),
/// exactly as pretrain_gpt.py would build it. `file` names the source in errors.
Result<ModelConfig> ParseMegatronModel(const nlohmann::json& object, const std::string& file);

}  // namespace strata

#endif  // STRATA_MODEL_MEGATRON_MODEL_H_

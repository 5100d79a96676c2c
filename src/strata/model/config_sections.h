// Sections of config.json that only some families have, read apart from model_config.cc: the
// layer layouts of the Jamba and MiniMax hybrids (with the Mamba-1 and lightning-attention
// shapes they need) and the vision towers of the vision-language wrappers.
#ifndef STRATA_MODEL_CONFIG_SECTIONS_H_
#define STRATA_MODEL_CONFIG_SECTIONS_H_

#include <cstdint>
#include <vector>

#include "strata/core/json_fields.h"
#include "strata/core/result.h"
#include "strata/model/model_config.h"

namespace strata {

/// Jamba: layer i is attention when i % attn_layer_period == attn_layer_offset (else Mamba-1)
/// and MoE when num_experts > 1 and i % expert_layer_period == expert_layer_offset (else a
/// dense MLP). Fills config.layers and config.mamba (version 1).
Status ParseJambaLayers(const JsonFields& text, int64_t num_layers, bool has_experts,
                        ModelConfig& config);

/// MiniMax-Text-01: attn_type_list, one 0 (lightning) or 1 (softmax) per layer, or layer_types
/// ("linear_attention" / "full_attention"); every layer MoE. Fills config.layers and
/// config.lightning.
Status ParseMiniMaxLayers(const JsonFields& text, int64_t num_layers, bool has_experts,
                          ModelConfig& config);

/// A vision tower of kind `tower` from `vision` (the vision_config object); `top` is the
/// wrapper's top level, `downsample_ratio` InternVL's (read there; 0.5 when absent) and
/// `text_hidden` the language model's width, which the projector maps into.
Status ParseVisionTower(const JsonFields& vision, VisionTower tower, const JsonFields& top,
                        double downsample_ratio, int64_t text_hidden, VisionConfig& out);

}  // namespace strata

#endif  // STRATA_MODEL_CONFIG_SECTIONS_H_

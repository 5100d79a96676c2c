#include "strata/model/config_sections.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace strata {

namespace {

// Jamba's Mamba-1 mixer (transformers JambaMambaMixer): mamba_d_state, mamba_d_conv,
// mamba_expand, mamba_dt_rank ("auto": ceil(hidden / 16)), mamba_conv_bias, mamba_proj_bias,
// and RMSNorms on dt, B and C.
Status ParseMamba1(const JsonFields& text, int64_t hidden, MambaConfig& out) {
  out.version = 1;
  STRATA_ASSIGN_OR_RETURN(out.state_size, text.PositiveIntOr("mamba_d_state", 16));
  STRATA_ASSIGN_OR_RETURN(out.conv_kernel, text.PositiveIntOr("mamba_d_conv", 4));
  STRATA_ASSIGN_OR_RETURN(int64_t expand, text.PositiveIntOr("mamba_expand", 2));
  out.num_heads = expand * hidden;  // one decay per channel: a "head" of width 1
  out.head_dim = 1;
  out.n_groups = 1;
  return OkStatus();
}

Status ReadDtRank(const JsonFields& text, int64_t hidden, MambaConfig& out) {
  out.dt_rank = (hidden + 15) / 16;  // "auto"
  if (!text.Has("mamba_dt_rank")) return OkStatus();
  auto as_int = text.PositiveIntOr("mamba_dt_rank", out.dt_rank);
  if (as_int.ok()) {
    out.dt_rank = *as_int;
    return OkStatus();
  }
  const Result<std::string> rank = text.StringOr("mamba_dt_rank", "auto");
  if (!rank.ok() || rank.value() != "auto") {
    return text.ErrorAt("mamba_dt_rank", "expected a positive integer or \"auto\"");
  }
  return OkStatus();
}

// Gemma 3's SigLIP tower (transformers SiglipVisionConfig defaults for absent keys) and its
// projector: mm_tokens_per_image (Gemma3Config default 256) tokens per image, so the average
// pool takes (image_size / patch_size) / sqrt(mm_tokens_per_image) patches a side.
Status ParseSiglip(const JsonFields& v, const JsonFields& top, VisionConfig& out) {
  out.kind = VisionKind::kSiglip;
  STRATA_ASSIGN_OR_RETURN(out.depth, v.PositiveIntOr("num_hidden_layers", 12));
  STRATA_ASSIGN_OR_RETURN(out.hidden_size, v.PositiveIntOr("hidden_size", 768));
  STRATA_ASSIGN_OR_RETURN(out.intermediate_size, v.PositiveIntOr("intermediate_size", 3072));
  STRATA_ASSIGN_OR_RETURN(out.num_heads, v.PositiveIntOr("num_attention_heads", 12));
  STRATA_ASSIGN_OR_RETURN(out.patch_size, v.PositiveIntOr("patch_size", 16));
  STRATA_ASSIGN_OR_RETURN(out.image_size, v.PositiveIntOr("image_size", 224));
  STRATA_ASSIGN_OR_RETURN(out.in_channels, v.PositiveIntOr("num_channels", 3));
  STRATA_ASSIGN_OR_RETURN(bool head, v.BoolOr("vision_use_head", false));
  if (head) {
    return v.ErrorAt("vision_use_head",
                     "a SigLIP attention-pooling head is not modelled; Gemma 3 sets it false");
  }
  if (out.image_size % out.patch_size != 0) {
    return v.ErrorAt("image_size",
                     "is not a multiple of patch_size (" + std::to_string(out.patch_size) + ")");
  }
  const int64_t side = out.image_size / out.patch_size;
  STRATA_ASSIGN_OR_RETURN(int64_t tokens, top.PositiveIntOr("mm_tokens_per_image", 256));
  const auto tokens_side = static_cast<int64_t>(std::llround(std::sqrt(double(tokens))));
  if (tokens_side * tokens_side != tokens || tokens_side > side || side % tokens_side != 0) {
    return top.ErrorAt("mm_tokens_per_image",
                       "expected a square number whose root divides the " + std::to_string(side) +
                           " patches a side (image_size / patch_size), such as 256");
  }
  out.temporal_patch_size = 1;
  out.spatial_merge_size = side / tokens_side;
  out.num_position_embeddings = side * side;  // no class token
  return OkStatus();
}

}  // namespace

Status ParseJambaLayers(const JsonFields& text, int64_t num_layers, bool has_experts,
                        ModelConfig& config) {
  STRATA_ASSIGN_OR_RETURN(int64_t attn_period, text.PositiveIntOr("attn_layer_period", 8));
  STRATA_ASSIGN_OR_RETURN(int64_t attn_offset, text.NonNegativeIntOr("attn_layer_offset", 4));
  STRATA_ASSIGN_OR_RETURN(int64_t expert_period, text.PositiveIntOr("expert_layer_period", 2));
  STRATA_ASSIGN_OR_RETURN(int64_t expert_offset, text.NonNegativeIntOr("expert_layer_offset", 1));
  if (attn_offset >= attn_period) {
    return text.ErrorAt("attn_layer_offset",
                        "must be below attn_layer_period (" + std::to_string(attn_period) + ")");
  }
  if (expert_offset >= expert_period) {
    return text.ErrorAt("expert_layer_offset", "must be below expert_layer_period (" +
                                                   std::to_string(expert_period) + ")");
  }
  config.layers.clear();
  for (int64_t i = 0; i < num_layers; ++i) {
    LayerSpec spec;
    spec.mixer = i % attn_period == attn_offset ? MixerKind::kFullAttention : MixerKind::kMamba1;
    spec.ffn = has_experts && i % expert_period == expert_offset ? FfnKind::kMoe : FfnKind::kDense;
    config.layers.push_back(spec);
  }
  if (config.CountLayers(MixerKind::kMamba1) > 0) {
    STRATA_RETURN_IF_ERROR(ParseMamba1(text, config.hidden_size, config.mamba));
    STRATA_RETURN_IF_ERROR(ReadDtRank(text, config.hidden_size, config.mamba));
    STRATA_ASSIGN_OR_RETURN(config.mamba.conv_bias, text.BoolOr("mamba_conv_bias", true));
    STRATA_ASSIGN_OR_RETURN(config.mamba.proj_bias, text.BoolOr("mamba_proj_bias", false));
    config.mamba.dt_bc_norms = true;
  }
  return OkStatus();
}

Status ParseMiniMaxLayers(const JsonFields& text, int64_t num_layers, bool has_experts,
                          ModelConfig& config) {
  config.layers.assign(
      static_cast<size_t>(num_layers),
      LayerSpec{MixerKind::kLightning, has_experts ? FfnKind::kMoe : FfnKind::kDense});
  const char* key = text.Has("attn_type_list") ? "attn_type_list" : "layer_types";
  if (!text.Has(key)) {
    return text.ErrorAt("attn_type_list",
                        "missing: MiniMax says which layers are softmax attention (1) and which "
                        "lightning attention (0) in attn_type_list");
  }
  STRATA_ASSIGN_OR_RETURN(const nlohmann::json* list, text.Array(key));
  if (static_cast<int64_t>(list->size()) != num_layers) {
    return text.ErrorAt(key, "has " + std::to_string(list->size()) +
                                 " entries but num_hidden_layers is " + std::to_string(num_layers));
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& v = (*list)[i];
    const std::string field = std::string(key) + "[" + std::to_string(i) + "]";
    bool softmax = false;
    if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1)) {
      softmax = v.get<int64_t>() == 1;
    } else if (v.is_string() && (v.get<std::string>() == "full_attention" ||
                                 v.get<std::string>() == "linear_attention")) {
      softmax = v.get<std::string>() == "full_attention";
    } else {
      return text.ErrorAt(field,
                          "expected 0 (lightning), 1 (softmax), \"linear_attention\" or "
                          "\"full_attention\", got " +
                              DescribeJsonValue(v));
    }
    if (softmax) config.layers[i].mixer = MixerKind::kFullAttention;
  }
  // Lightning attention uses the softmax layers' head count and head_dim.
  config.lightning.num_heads = config.attention.num_heads;
  config.lightning.head_dim = config.attention.head_dim;
  return OkStatus();
}

Status ParseVisionTower(const JsonFields& v, VisionTower tower, const JsonFields& top,
                        double downsample_ratio, int64_t text_hidden, VisionConfig& out) {
  out.present = true;
  switch (tower) {
    case VisionTower::kNone:
    case VisionTower::kQwen3Vl:
      return InvalidInput("internal: ParseVisionTower called for the Qwen3-VL tower");
    case VisionTower::kQwen25Vl: {
      out.kind = VisionKind::kQwen25Vl;
      STRATA_ASSIGN_OR_RETURN(out.depth, v.PositiveInt("depth"));
      STRATA_ASSIGN_OR_RETURN(out.hidden_size, v.PositiveInt("hidden_size"));
      STRATA_ASSIGN_OR_RETURN(out.intermediate_size, v.PositiveInt("intermediate_size"));
      STRATA_ASSIGN_OR_RETURN(out.num_heads, v.PositiveInt("num_heads"));
      STRATA_ASSIGN_OR_RETURN(out.patch_size, v.PositiveInt("patch_size"));
      STRATA_ASSIGN_OR_RETURN(out.temporal_patch_size, v.PositiveIntOr("temporal_patch_size", 2));
      STRATA_ASSIGN_OR_RETURN(out.in_channels, v.PositiveIntOr("in_chans", 3));
      STRATA_ASSIGN_OR_RETURN(out.spatial_merge_size, v.PositiveIntOr("spatial_merge_size", 2));
      STRATA_ASSIGN_OR_RETURN(out.out_hidden_size, v.PositiveIntOr("out_hidden_size", text_hidden));
      break;
    }
    case VisionTower::kSiglip: {
      STRATA_RETURN_IF_ERROR(ParseSiglip(v, top, out));
      out.out_hidden_size = text_hidden;
      break;
    }
    case VisionTower::kClip:
    case VisionTower::kInternVit: {
      const bool clip = tower == VisionTower::kClip;
      out.kind = clip ? VisionKind::kClip : VisionKind::kInternVit;
      // transformers' CLIPVisionConfig defaults for the keys llava configs leave out.
      STRATA_ASSIGN_OR_RETURN(out.depth, v.PositiveIntOr("num_hidden_layers", clip ? 12 : 0));
      STRATA_ASSIGN_OR_RETURN(out.hidden_size, v.PositiveIntOr("hidden_size", clip ? 768 : 0));
      STRATA_ASSIGN_OR_RETURN(out.intermediate_size,
                              v.PositiveIntOr("intermediate_size", clip ? 3072 : 0));
      STRATA_ASSIGN_OR_RETURN(out.num_heads, v.PositiveIntOr("num_attention_heads", clip ? 12 : 0));
      STRATA_ASSIGN_OR_RETURN(out.patch_size, v.PositiveIntOr("patch_size", clip ? 32 : 0));
      STRATA_ASSIGN_OR_RETURN(out.image_size, v.PositiveIntOr("image_size", clip ? 224 : 0));
      STRATA_ASSIGN_OR_RETURN(out.in_channels, v.PositiveIntOr("num_channels", 3));
      if (!clip) {  // InternViT configs are complete: a missing key is an error
        for (const char* key : {"num_hidden_layers", "hidden_size", "intermediate_size",
                                "num_attention_heads", "patch_size", "image_size"}) {
          auto value = v.PositiveInt(key);
          if (!value.ok()) return std::move(value).error();
        }
      }
      out.temporal_patch_size = 1;
      out.spatial_merge_size = 1;
      if (!clip) {
        STRATA_ASSIGN_OR_RETURN(out.qkv_bias, v.BoolOr("qkv_bias", true));
        STRATA_ASSIGN_OR_RETURN(out.qk_norm, v.BoolOr("qk_normalization", false));
        STRATA_ASSIGN_OR_RETURN(bool moe, v.BoolOr("use_moe", false));
        if (moe) {
          return v.ErrorAt("use_moe",
                           "an InternViT tower with MoE blocks is not modelled; "
                           "strata counts dense InternViT blocks only");
        }
        // InternVL's pixel shuffle keeps 1 token of every (1 / downsample_ratio)^2.
        // Below 0.01 (one token kept of 10,000) is no vision model; 1 / ratio must fit an int.
        if (!(downsample_ratio >= 0.01 && downsample_ratio <= 1)) {
          return top.ErrorAt("downsample_ratio", "expected a number in [0.01, 1], such as 0.5");
        }
        out.spatial_merge_size = static_cast<int64_t>(std::lround(1.0 / downsample_ratio));
      }
      out.out_hidden_size = text_hidden;
      out.num_position_embeddings =
          (out.image_size / out.patch_size) * (out.image_size / out.patch_size) +
          1;  // the patches and the class token
      break;
    }
  }
  if (out.hidden_size % out.num_heads != 0) {
    return v.ErrorAt(tower == VisionTower::kQwen25Vl ? "num_heads" : "num_attention_heads",
                     "hidden_size (" + std::to_string(out.hidden_size) +
                         ") is not a multiple of the head count (" + std::to_string(out.num_heads) +
                         ")");
  }
  return OkStatus();
}

}  // namespace strata

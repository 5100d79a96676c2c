#include "strata/model/model_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/core/json_fields.h"
#include "strata/core/json_input.h"
#include "strata/core/text_scan.h"
#include "strata/model/config_sections.h"
#include "strata/model/count_cast.h"
#include "strata/model/megatron_model.h"

namespace strata {

namespace {

// 1-based line and column of a byte offset, for JSON syntax errors.
std::pair<int, int> LineColumn(std::string_view text, size_t offset) {
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

Status ParseAttention(const JsonFields& text, const FamilyTraits& traits, int64_t hidden,
                      AttentionConfig& out) {
  STRATA_ASSIGN_OR_RETURN(out.num_heads, text.PositiveInt("num_attention_heads"));
  STRATA_ASSIGN_OR_RETURN(out.num_kv_heads,
                          text.PositiveIntOr("num_key_value_heads", out.num_heads));
  if (traits.multi_query_key) {
    STRATA_ASSIGN_OR_RETURN(bool mqa, text.BoolOr("multi_query", true));
    if (mqa) out.num_kv_heads = 1;
  }
  if (out.num_heads % out.num_kv_heads != 0) {
    return text.ErrorAt("num_key_value_heads", "num_attention_heads (" +
                                                   std::to_string(out.num_heads) +
                                                   ") is not a multiple of num_key_value_heads (" +
                                                   std::to_string(out.num_kv_heads) + ")");
  }
  if (!text.Has("head_dim") && hidden % out.num_heads != 0) {
    return text.ErrorAt("num_attention_heads", "hidden_size (" + std::to_string(hidden) +
                                                   ") is not a multiple of num_attention_heads (" +
                                                   std::to_string(out.num_heads) +
                                                   ") and head_dim is not given");
  }
  STRATA_ASSIGN_OR_RETURN(out.head_dim, text.PositiveIntOr("head_dim", hidden / out.num_heads));
  // Qwen3-Next always gates the attention output; Qwen3.5 says so with attn_output_gate.
  STRATA_ASSIGN_OR_RETURN(out.output_gate, text.BoolOr("attn_output_gate", traits.output_gate));
  // StarCoder2 names its bias switch use_bias; GLM-4's attention_bias covers q/k/v only.
  const char* bias_key = text.Has("use_bias") ? "use_bias" : "attention_bias";
  STRATA_ASSIGN_OR_RETURN(bool bias_key_value, text.BoolOr(bias_key, traits.attention_bias));
  out.bias = bias_key_value && !traits.bias_key_is_qkv;
  out.qkv_bias = !out.bias && (traits.qkv_bias || (traits.bias_key_is_qkv && bias_key_value));
  // GLM-4.5 says use_qk_norm (GLM-4.5 itself true, GLM-4.5-Air false).
  STRATA_ASSIGN_OR_RETURN(out.qk_norm, text.BoolOr("use_qk_norm", traits.qk_norm));
  out.qk_norm_full_width = traits.qk_norm_full_width;
  out.sinks = traits.sinks;
  STRATA_ASSIGN_OR_RETURN(out.sliding_window, text.NonNegativeIntOr("sliding_window", 0));
  return OkStatus();
}

Status ParseMamba(const JsonFields& text, MambaConfig& out) {
  STRATA_ASSIGN_OR_RETURN(out.num_heads, text.PositiveInt("mamba_num_heads"));
  STRATA_ASSIGN_OR_RETURN(out.head_dim, text.PositiveInt("mamba_head_dim"));
  STRATA_ASSIGN_OR_RETURN(out.state_size, text.PositiveInt("ssm_state_size"));
  STRATA_ASSIGN_OR_RETURN(out.n_groups, text.PositiveInt("n_groups"));
  STRATA_ASSIGN_OR_RETURN(out.conv_kernel, text.PositiveInt("conv_kernel"));
  STRATA_ASSIGN_OR_RETURN(out.conv_bias, text.BoolOr("use_conv_bias", true));
  STRATA_ASSIGN_OR_RETURN(out.proj_bias, text.BoolOr("use_bias", false));
  if (out.num_heads % out.n_groups != 0) {
    return text.ErrorAt("n_groups", "mamba_num_heads (" + std::to_string(out.num_heads) +
                                        ") is not a multiple of n_groups (" +
                                        std::to_string(out.n_groups) + ")");
  }
  return OkStatus();
}

Status ParseMla(const JsonFields& text, MlaConfig& out) {
  STRATA_ASSIGN_OR_RETURN(out.num_heads, text.PositiveInt("num_attention_heads"));
  STRATA_ASSIGN_OR_RETURN(out.q_lora_rank, text.NonNegativeIntOr("q_lora_rank", 0));
  STRATA_ASSIGN_OR_RETURN(out.kv_lora_rank, text.PositiveInt("kv_lora_rank"));
  STRATA_ASSIGN_OR_RETURN(out.qk_nope_head_dim, text.PositiveInt("qk_nope_head_dim"));
  STRATA_ASSIGN_OR_RETURN(out.qk_rope_head_dim, text.PositiveInt("qk_rope_head_dim"));
  STRATA_ASSIGN_OR_RETURN(out.v_head_dim, text.PositiveInt("v_head_dim"));
  return OkStatus();
}

Status ParseLinearAttention(const JsonFields& text, LinearAttentionConfig& out) {
  STRATA_ASSIGN_OR_RETURN(out.num_key_heads, text.PositiveInt("linear_num_key_heads"));
  STRATA_ASSIGN_OR_RETURN(out.num_value_heads, text.PositiveInt("linear_num_value_heads"));
  STRATA_ASSIGN_OR_RETURN(out.key_head_dim, text.PositiveInt("linear_key_head_dim"));
  STRATA_ASSIGN_OR_RETURN(out.value_head_dim, text.PositiveInt("linear_value_head_dim"));
  STRATA_ASSIGN_OR_RETURN(out.conv_kernel, text.PositiveInt("linear_conv_kernel_dim"));
  if (out.num_value_heads % out.num_key_heads != 0) {
    return text.ErrorAt("linear_num_value_heads",
                        "linear_num_value_heads (" + std::to_string(out.num_value_heads) +
                            ") is not a multiple of linear_num_key_heads (" +
                            std::to_string(out.num_key_heads) + ")");
  }
  return OkStatus();
}

Status ParseMoe(const JsonFields& text, const FamilyTraits& traits, int64_t num_experts,
                MoeConfig& out) {
  out.num_experts = num_experts;
  STRATA_ASSIGN_OR_RETURN(out.top_k, text.PositiveInt("num_experts_per_tok"));
  if (out.top_k > num_experts) {
    return text.ErrorAt("num_experts_per_tok", "routes each token to " + std::to_string(out.top_k) +
                                                   " experts but there are only " +
                                                   std::to_string(num_experts));
  }
  const char* size_key =
      text.Has("moe_intermediate_size") ? "moe_intermediate_size" : "intermediate_size";
  STRATA_ASSIGN_OR_RETURN(out.expert_intermediate_size, text.PositiveInt(size_key));
  if (traits.moe == MoeStyle::kDeepSeek) {
    // DeepSeek: n_shared_experts experts of the routed size, no gate; a per-expert score bias.
    STRATA_ASSIGN_OR_RETURN(out.num_shared_experts, text.NonNegativeIntOr("n_shared_experts", 0));
    out.shared_expert_intermediate_size = out.expert_intermediate_size;
    STRATA_ASSIGN_OR_RETURN(std::string topk_method, text.StringOr("topk_method", "greedy"));
    out.router_bias = topk_method == "noaux_tc" || traits.router_score_bias;
  } else if (traits.moe == MoeStyle::kErnie) {
    // ERNIE 4.5: one shared MLP of moe_num_shared_experts x the routed width (the same count
    // as that many shared experts), and the router's e_score_correction_bias.
    STRATA_ASSIGN_OR_RETURN(out.num_shared_experts,
                            text.NonNegativeIntOr("moe_num_shared_experts", 0));
    out.shared_expert_intermediate_size = out.expert_intermediate_size;
    out.router_bias = traits.router_score_bias;
  } else if (traits.moe == MoeStyle::kQwen) {
    // Qwen MoE: one shared expert of its own width behind a sigmoid gate.
    STRATA_ASSIGN_OR_RETURN(out.shared_expert_intermediate_size,
                            text.NonNegativeIntOr("shared_expert_intermediate_size", 0));
    out.num_shared_experts = out.shared_expert_intermediate_size > 0 ? 1 : 0;
    out.shared_expert_gate = out.num_shared_experts > 0;
  }
  if (traits.expert_biases) {
    out.router_bias = true;
    out.expert_bias = true;
  }
  // GPT-OSS clamps the experts' gate (above) and up (both sides) projections at swiglu_limit
  // before its GLU; the value does not change any count, only which kernels run.
  out.activation_clamp = text.Has("swiglu_limit");
  return OkStatus();
}

// Which layers are MoE, following each family's config convention.
Result<std::vector<FfnKind>> FfnPattern(const JsonFields& text, const FamilyTraits& traits,
                                        int64_t num_layers, bool has_experts) {
  std::vector<FfnKind> ffn(static_cast<size_t>(num_layers), FfnKind::kDense);
  if (!has_experts) return ffn;
  if (traits.moe == MoeStyle::kPlain) {
    std::fill(ffn.begin(), ffn.end(), FfnKind::kMoe);
    return ffn;
  }
  if (traits.moe == MoeStyle::kDeepSeek) {
    STRATA_ASSIGN_OR_RETURN(int64_t first_dense, text.NonNegativeIntOr("first_k_dense_replace", 0));
    STRATA_ASSIGN_OR_RETURN(int64_t freq, text.PositiveIntOr("moe_layer_freq", 1));
    for (int64_t i = 0; i < num_layers; ++i) {
      if (i >= first_dense && i % freq == 0) ffn[static_cast<size_t>(i)] = FfnKind::kMoe;
    }
    return ffn;
  }
  if (traits.moe == MoeStyle::kErnie) {
    // transformers Ernie4_5_MoeDecoderLayer: MoE when (i + 1) % interval == 0 and
    // start <= i <= end (end -1 or absent: the last layer).
    STRATA_ASSIGN_OR_RETURN(int64_t start, text.NonNegativeIntOr("moe_layer_start_index", 0));
    STRATA_ASSIGN_OR_RETURN(int64_t interval, text.PositiveIntOr("moe_layer_interval", 1));
    int64_t end = num_layers - 1;
    if (text.Has("moe_layer_end_index")) {
      auto given = text.NonNegativeIntOr("moe_layer_end_index", end);
      if (given.ok()) end = *given;  // -1 (the default spelled out) keeps the last layer
    }
    for (int64_t i = 0; i < num_layers; ++i) {
      if ((i + 1) % interval == 0 && i >= start && i <= end) {
        ffn[static_cast<size_t>(i)] = FfnKind::kMoe;
      }
    }
    return ffn;
  }
  STRATA_ASSIGN_OR_RETURN(int64_t step, text.PositiveIntOr("decoder_sparse_step", 1));
  std::vector<int64_t> mlp_only;
  if (text.Has("mlp_only_layers")) {
    STRATA_ASSIGN_OR_RETURN(const nlohmann::json* list, text.Array("mlp_only_layers"));
    for (const auto& v : *list) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= num_layers) {
        return text.ErrorAt("mlp_only_layers", "expected layer indices in [0, " +
                                                   std::to_string(num_layers) + "), got " +
                                                   DescribeJsonValue(v));
      }
      mlp_only.push_back(v.get<int64_t>());
    }
  }
  for (int64_t i = 0; i < num_layers; ++i) {
    const bool dense = std::find(mlp_only.begin(), mlp_only.end(), i) != mlp_only.end();
    if (!dense && (i + 1) % step == 0) ffn[static_cast<size_t>(i)] = FfnKind::kMoe;
  }
  return ffn;
}

// The token mixer of each layer: layer_types, else full_attention_interval, else one kind.
// Sliding-window layers of the families whose configs give only sliding_window (no layer_types).
Status ApplyWindowTraits(const JsonFields& text, const FamilyTraits& traits, int64_t window,
                         std::vector<MixerKind>& mixers) {
  if (window == 0 || traits.window == WindowLayers::kNone) return OkStatus();
  int64_t every = 2;
  if (traits.window == WindowLayers::kEveryNthFull) {
    STRATA_ASSIGN_OR_RETURN(every, text.PositiveIntOr("sliding_window_pattern", 6));
  }
  for (size_t i = 0; i < mixers.size(); ++i) {
    if (mixers[i] != MixerKind::kFullAttention) continue;
    const auto n = static_cast<int64_t>(i);
    const bool sliding = traits.window == WindowLayers::kAll ||
                         (traits.window == WindowLayers::kEvenLayers && n % 2 == 0) ||
                         (traits.window == WindowLayers::kEveryNthFull && (n + 1) % every != 0);
    if (sliding) mixers[i] = MixerKind::kSlidingAttention;
  }
  return OkStatus();
}

// Nemotron-H: one character per block, M Mamba-2, * attention, - MLP, E MoE.
Result<std::vector<LayerSpec>> NemotronHPattern(const JsonFields& text, int64_t num_layers) {
  STRATA_ASSIGN_OR_RETURN(std::string pattern, text.StringOr("hybrid_override_pattern", ""));
  if (static_cast<int64_t>(pattern.size()) != num_layers) {
    return text.ErrorAt("hybrid_override_pattern", "has " + std::to_string(pattern.size()) +
                                                       " characters but num_hidden_layers is " +
                                                       std::to_string(num_layers));
  }
  std::vector<LayerSpec> layers;
  for (size_t i = 0; i < pattern.size(); ++i) {
    switch (pattern[i]) {
      case 'M':
        layers.push_back({MixerKind::kMamba2, FfnKind::kNone});
        break;
      case '*':
        layers.push_back({MixerKind::kFullAttention, FfnKind::kNone});
        break;
      case '-':
        layers.push_back({MixerKind::kNone, FfnKind::kDense});
        break;
      case 'E':
        layers.push_back({MixerKind::kNone, FfnKind::kMoe});
        break;
      default:
        return text.ErrorAt("hybrid_override_pattern",
                            "character " + std::to_string(i) + " is '" +
                                std::string(1, pattern[i]) +
                                "'; expected M (Mamba-2), * (attention), - (MLP) or E (MoE)");
    }
  }
  return layers;
}

Result<std::vector<MixerKind>> MixerPattern(const JsonFields& text, int64_t num_layers, bool mla) {
  std::vector<MixerKind> mixers(static_cast<size_t>(num_layers),
                                mla ? MixerKind::kMla : MixerKind::kFullAttention);
  if (text.Has("layer_types")) {
    STRATA_ASSIGN_OR_RETURN(const nlohmann::json* list, text.Array("layer_types"));
    if (static_cast<int64_t>(list->size()) != num_layers) {
      return text.ErrorAt("layer_types", "has " + std::to_string(list->size()) +
                                             " entries but num_hidden_layers is " +
                                             std::to_string(num_layers));
    }
    const std::vector<std::string> names = {"full_attention", "sliding_attention",
                                            "linear_attention"};
    for (size_t i = 0; i < list->size(); ++i) {
      const auto& v = (*list)[i];
      const std::string field = "layer_types[" + std::to_string(i) + "]";
      if (!v.is_string()) {
        return text.ErrorAt(field, "expected a layer type string, got " + DescribeJsonValue(v));
      }
      const std::string name = v.get<std::string>();
      if (name == "full_attention") {
        mixers[i] = mla ? MixerKind::kMla : MixerKind::kFullAttention;
      } else if (name == "sliding_attention") {
        mixers[i] = MixerKind::kSlidingAttention;
      } else if (name == "linear_attention") {
        mixers[i] = MixerKind::kGatedDeltaNet;
      } else {
        return text.ErrorAt(field, "unknown layer type '" + name + "'")
            .WithHint(DidYouMeanHint(name, names));
      }
    }
    return mixers;
  }
  if (text.Has("full_attention_interval")) {
    STRATA_ASSIGN_OR_RETURN(int64_t interval, text.PositiveInt("full_attention_interval"));
    for (int64_t i = 0; i < num_layers; ++i) {
      mixers[static_cast<size_t>(i)] =
          (i + 1) % interval == 0 ? MixerKind::kFullAttention : MixerKind::kGatedDeltaNet;
    }
  }
  return mixers;
}

Status ParseVision(const JsonFields& v, VisionConfig& out) {
  out.present = true;
  STRATA_ASSIGN_OR_RETURN(out.depth, v.PositiveInt("depth"));
  STRATA_ASSIGN_OR_RETURN(out.hidden_size, v.PositiveInt("hidden_size"));
  STRATA_ASSIGN_OR_RETURN(out.intermediate_size, v.PositiveInt("intermediate_size"));
  STRATA_ASSIGN_OR_RETURN(out.num_heads, v.PositiveInt("num_heads"));
  STRATA_ASSIGN_OR_RETURN(out.patch_size, v.PositiveInt("patch_size"));
  STRATA_ASSIGN_OR_RETURN(out.temporal_patch_size, v.PositiveIntOr("temporal_patch_size", 1));
  STRATA_ASSIGN_OR_RETURN(out.in_channels, v.PositiveIntOr("in_channels", 3));
  STRATA_ASSIGN_OR_RETURN(out.spatial_merge_size, v.PositiveIntOr("spatial_merge_size", 1));
  STRATA_ASSIGN_OR_RETURN(out.out_hidden_size, v.PositiveInt("out_hidden_size"));
  STRATA_ASSIGN_OR_RETURN(out.num_position_embeddings,
                          v.NonNegativeIntOr("num_position_embeddings", 0));
  if (v.Has("deepstack_visual_indexes")) {
    STRATA_ASSIGN_OR_RETURN(const nlohmann::json* list, v.Array("deepstack_visual_indexes"));
    out.deepstack_mergers = static_cast<int64_t>(list->size());
  }
  if (out.hidden_size % out.num_heads != 0) {
    return v.ErrorAt("num_heads", "hidden_size (" + std::to_string(out.hidden_size) +
                                      ") is not a multiple of num_heads (" +
                                      std::to_string(out.num_heads) + ")");
  }
  return OkStatus();
}

// Beyond any real model; keeps every exact int64 count in CountParams far from overflow
// (int64 holds 9.2e18) and stops a typo like 10^12 layers from exhausting memory.
constexpr double kMaxParams = 1e16;
constexpr int64_t kMaxLayers = 1 << 16;

// An upper bound of the parameter count computed in double, before any int64 arithmetic.
double ParamUpperBound(const ModelConfig& c) {
  const double h = AsReal(c.hidden_size);
  const AttentionConfig& a = c.attention;
  const MlaConfig& m = c.mla;
  const LinearAttentionConfig& g = c.linear_attention;
  const MoeConfig& e = c.moe;
  const double q = AsReal(a.num_heads) * AsReal(a.head_dim);
  const double kv = AsReal(a.num_kv_heads) * AsReal(a.head_dim);
  const double attention = h * (3 * q + 2 * kv) + 3 * q + 2 * kv + h + AsReal(a.num_heads);
  const double mla_heads =
      AsReal(m.num_heads) *
      (AsReal(m.qk_nope_head_dim) + AsReal(m.qk_rope_head_dim) + AsReal(m.v_head_dim));
  const double mla =
      (h + 1) * (AsReal(m.q_lora_rank) + AsReal(m.kv_lora_rank) + AsReal(m.qk_rope_head_dim)) +
      (AsReal(m.q_lora_rank) + AsReal(m.kv_lora_rank) + h + 1) * mla_heads + h * mla_heads;
  const double lin_k = AsReal(g.num_key_heads) * AsReal(g.key_head_dim);
  const double lin_v = AsReal(g.num_value_heads) * AsReal(g.value_head_dim);
  const double linear =
      (h + AsReal(g.conv_kernel) + 2) * (2 * lin_k + 2 * lin_v + 2 * AsReal(g.num_value_heads)) +
      lin_v * h + AsReal(g.value_head_dim);
  const double experts =
      AsReal(e.num_experts) * (3 * h * AsReal(e.expert_intermediate_size) +
                               2 * AsReal(e.expert_intermediate_size) + 2 * h + 1) +
      AsReal(e.num_shared_experts) * 3 * h * AsReal(e.shared_expert_intermediate_size) + h;
  const MambaConfig& s = c.mamba;
  const double mamba =
      (h + AsReal(s.conv_kernel) + 4) * (AsReal(s.in_proj_width()) + AsReal(s.conv_dim())) +
      AsReal(s.inner()) * (h + 2) + AsReal(s.num_heads) * (3 + AsReal(s.state_size)) +
      AsReal(s.dt_proj_weights()) + AsReal(s.dt_rank) + 2 * AsReal(s.state_size);
  const double lightning = 6 * h * AsReal(c.lightning.width());
  const double layer = attention + mla + linear + experts + mamba + lightning +
                       3 * h * AsReal(c.dense_mlp.intermediate_size) +
                       8 * AsReal(c.dense_mlp.intermediate_size) + 8 * h + 2 * (q + kv);
  const VisionConfig& v = c.vision;
  const double vd = AsReal(v.hidden_size);
  const double vm = vd * AsReal(v.spatial_merge_size) * AsReal(v.spatial_merge_size);
  const double vision =
      AsReal(v.depth) * (4 * vd * vd + 2 * vd * AsReal(v.intermediate_size) + 9 * vd +
                         AsReal(v.intermediate_size)) +
      (AsReal(v.deepstack_mergers) + 1) *
          (vm * vm + vm * AsReal(v.out_hidden_size) + 4 * vm + AsReal(v.out_hidden_size)) +
      vd * (AsReal(v.in_channels) * AsReal(v.temporal_patch_size) * AsReal(v.patch_size) *
                AsReal(v.patch_size) +
            AsReal(v.num_position_embeddings) + 1);
  return (AsReal(static_cast<int64_t>(c.layers.size())) + AsReal(c.mtp_layers) + 1) * layer +
         2 * AsReal(c.vocab_size) * (h + 1) * (1 + AsReal(c.mtp_layers)) + 2 * h +
         2 * h * h * AsReal(c.mtp_layers) + vision + AsReal(c.position_embeddings) * h;
}

Status ParseText(const JsonFields& text, const FamilyTraits& traits, ModelConfig& config) {
  config.family = std::string(traits.model_type);
  config.norm = traits.norm;
  config.norms_per_layer = traits.norms_per_layer;
  config.mlp = traits.mlp;
  STRATA_ASSIGN_OR_RETURN(config.hidden_size, text.PositiveInt("hidden_size"));
  STRATA_ASSIGN_OR_RETURN(config.vocab_size, text.PositiveInt("vocab_size"));
  STRATA_ASSIGN_OR_RETURN(int64_t num_layers, text.PositiveInt("num_hidden_layers"));
  if (num_layers > kMaxLayers) {
    return text.ErrorAt("num_hidden_layers", "expected at most " + std::to_string(kMaxLayers) +
                                                 " layers, got " + std::to_string(num_layers));
  }
  // transformers 4.56 renamed torch_dtype to dtype in the configs it writes; either is read.
  STRATA_ASSIGN_OR_RETURN(config.dtype, text.StringOr("dtype", config.dtype));
  STRATA_ASSIGN_OR_RETURN(config.dtype, text.StringOr("torch_dtype", config.dtype));
  STRATA_ASSIGN_OR_RETURN(
      config.mlp_bias,
      text.BoolOr(text.Has("use_bias") ? "use_bias" : "mlp_bias", traits.mlp_bias));
  if (traits.pattern == LayerPattern::kNemotronH) config.mlp_bias = false;
  STRATA_ASSIGN_OR_RETURN(config.head_bias, text.BoolOr("lm_head_bias", traits.head_bias));
  if (traits.learned_positions) {
    STRATA_ASSIGN_OR_RETURN(config.position_embeddings,
                            text.PositiveInt("max_position_embeddings"));
  }

  const bool mla = text.Has("kv_lora_rank");
  if (mla) STRATA_RETURN_IF_ERROR(ParseMla(text, config.mla));
  // MLA configs also carry num_key_value_heads; the GQA shapes are kept for reference only.
  STRATA_RETURN_IF_ERROR(ParseAttention(text, traits, config.hidden_size, config.attention));

  const auto expert_key =
      text.FirstPresent({"num_experts", "num_local_experts", "n_routed_experts"});
  int64_t num_experts = 0;
  if (expert_key) {
    STRATA_ASSIGN_OR_RETURN(num_experts, text.NonNegativeIntOr(*expert_key, 0));
  }
  if (num_experts > 0) STRATA_RETURN_IF_ERROR(ParseMoe(text, traits, num_experts, config.moe));

  config.layers.clear();
  if (traits.pattern == LayerPattern::kJamba) {
    STRATA_RETURN_IF_ERROR(ParseJambaLayers(text, num_layers, num_experts > 1, config));
  } else if (traits.pattern == LayerPattern::kMiniMax) {
    STRATA_RETURN_IF_ERROR(ParseMiniMaxLayers(text, num_layers, num_experts > 0, config));
  } else if (traits.pattern == LayerPattern::kNemotronH) {
    STRATA_ASSIGN_OR_RETURN(config.layers, NemotronHPattern(text, num_layers));
    if (config.CountLayers(MixerKind::kMamba2) > 0) {
      STRATA_RETURN_IF_ERROR(ParseMamba(text, config.mamba));
    }
    if (config.CountLayers(FfnKind::kMoe) > 0 && num_experts == 0) {
      return text.ErrorAt("hybrid_override_pattern", "has E (MoE) blocks but no n_routed_experts");
    }
  } else {
    STRATA_ASSIGN_OR_RETURN(auto mixers, MixerPattern(text, num_layers, mla));
    if (!text.Has("layer_types")) {
      STRATA_RETURN_IF_ERROR(
          ApplyWindowTraits(text, traits, config.attention.sliding_window, mixers));
    }
    STRATA_ASSIGN_OR_RETURN(auto ffns, FfnPattern(text, traits, num_layers, num_experts > 0));
    for (size_t i = 0; i < static_cast<size_t>(num_layers); ++i) {
      config.layers.push_back(LayerSpec{mixers[i], ffns[i]});
    }
  }
  if (config.CountLayers(MixerKind::kGatedDeltaNet) > 0) {
    STRATA_RETURN_IF_ERROR(ParseLinearAttention(text, config.linear_attention));
  }
  if (config.CountLayers(MixerKind::kSlidingAttention) > 0 &&
      config.attention.sliding_window == 0) {
    return text.ErrorAt("sliding_window",
                        "layer_types has sliding_attention layers but no sliding_window size");
  }
  if (config.CountLayers(FfnKind::kDense) > 0) {
    if (traits.learned_positions && !text.Has("intermediate_size")) {
      config.dense_mlp.intermediate_size = 4 * config.hidden_size;  // GPT-2: n_inner null = 4h
    } else {
      STRATA_ASSIGN_OR_RETURN(config.dense_mlp.intermediate_size,
                              text.PositiveInt("intermediate_size"));
    }
  }

  const auto mtp_key = text.FirstPresent({"mtp_num_hidden_layers", "num_nextn_predict_layers"});
  if (mtp_key) {
    STRATA_ASSIGN_OR_RETURN(config.mtp_layers, text.NonNegativeIntOr(*mtp_key, 0));
  }
  config.mtp_embedding_copies = traits.mtp_embedding_copies;

  // Rope settings do not change parameter or FLOP counts, but a malformed block is still an
  // error: they may sit at the top level (rope_theta) or nested (rope_parameters/rope_scaling).
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    STRATA_ASSIGN_OR_RETURN(auto rope, text.Object(key));
    if (!rope) continue;
    // transformers spells the scaling kind rope_type (older configs: type).
    STRATA_ASSIGN_OR_RETURN(std::string kind, rope->StringOr("rope_type", ""));
    if (kind.empty()) {
      STRATA_ASSIGN_OR_RETURN(kind, rope->StringOr("type", ""));
    }
    if (kind == "yarn") config.attention.rope_yarn = true;
  }
  return OkStatus();
}

// Copies the keys a family spells differently to strata's names ("n_embd" -> "hidden_size",
// "attn_config.kv_n_heads" -> "num_key_value_heads"); a key already present wins.
void ApplyAliases(const FamilyTraits& traits, nlohmann::json& object) {
  for (const auto& [from, to] : traits.aliases) {
    const nlohmann::json* value = &object;
    std::string_view rest = from;
    while (value != nullptr && !rest.empty()) {
      const size_t dot = rest.find('.');
      const std::string part(rest.substr(0, dot));
      auto it = value->is_object() ? value->find(part) : value->end();
      value = (value->is_object() && it != value->end()) ? &*it : nullptr;
      rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    }
    const std::string key(to);
    if (value != nullptr && !value->is_null() && (!object.contains(key) || object[key].is_null())) {
      object[key] = *value;
    }
  }
}

// Wrappers whose text_config names only what differs from the text family's transformers
// defaults get those defaults filled in, as transformers does: llava-1.5's text_config has no
// widths at all (LlamaConfig), and gemma-3-4b-it's Hub config.json gives no head counts, head_dim
// or vocabulary (Gemma3TextConfig).
using KeyDefault = std::pair<const char*, int64_t>;
constexpr KeyDefault kLlamaDefaults[] = {{"hidden_size", 4096},
                                         {"intermediate_size", 11008},
                                         {"num_hidden_layers", 32},
                                         {"num_attention_heads", 32},
                                         {"vocab_size", 32000}};
constexpr KeyDefault kGemma3TextDefaults[] = {
    {"vocab_size", 262208},    {"hidden_size", 2304},      {"intermediate_size", 9216},
    {"num_hidden_layers", 26}, {"num_attention_heads", 8}, {"num_key_value_heads", 4},
    {"head_dim", 256},         {"sliding_window", 4096},   {"sliding_window_pattern", 6}};

template <size_t N>
void ApplyDefaults(nlohmann::json& object, const KeyDefault (&defaults)[N]) {
  if (!object.is_object()) return;
  for (const auto& [key, value] : defaults) {
    if (!object.contains(key) || object[key].is_null()) object[key] = value;
  }
}

}  // namespace

std::string_view MixerKindName(MixerKind kind) {
  switch (kind) {
    case MixerKind::kFullAttention:
      return "full_attention";
    case MixerKind::kSlidingAttention:
      return "sliding_attention";
    case MixerKind::kGatedDeltaNet:
      return "gated_deltanet";
    case MixerKind::kMla:
      return "mla";
    case MixerKind::kMamba2:
      return "mamba2";
    case MixerKind::kMamba1:
      return "mamba1";
    case MixerKind::kLightning:
      return "lightning_attention";
    case MixerKind::kNone:
      return "none";
  }
  return "?";
}

std::string_view FfnKindName(FfnKind kind) {
  switch (kind) {
    case FfnKind::kMoe:
      return "moe";
    case FfnKind::kDense:
      return "dense";
    case FfnKind::kNone:
      return "none";
  }
  return "?";
}

int64_t ModelConfig::CountLayers(MixerKind kind) const {
  return std::count_if(layers.begin(), layers.end(),
                       [&](const LayerSpec& l) { return l.mixer == kind; });
}

int64_t ModelConfig::CountLayers(FfnKind kind) const {
  return std::count_if(layers.begin(), layers.end(),
                       [&](const LayerSpec& l) { return l.ffn == kind; });
}

bool ModelConfig::HasLayers(MixerKind kind) const {
  return std::any_of(layers.begin(), layers.end(),
                     [&](const LayerSpec& l) { return l.mixer == kind; });
}

bool ModelConfig::HasLayers(FfnKind kind) const {
  return std::any_of(layers.begin(), layers.end(),
                     [&](const LayerSpec& l) { return l.ffn == kind; });
}

Result<ModelConfig> ParseModelConfig(std::string_view json_text, const std::string& file) {
  if (json_text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return InvalidInput("the file is empty; expected a config.json object").InFile(file);
  }
  // The same depth bound as every other JSON strata reads (core/json_input.h): a hostile
  // config nested 100,000 deep must not exhaust the stack.
  if (auto at = JsonTooDeepAt(json_text, kJsonMaxDepth)) {
    auto [line, column] = LineColumn(json_text, *at);
    Error err = InvalidInput(fmt::format("JSON nested deeper than {} levels; expected a "
                                         "config.json object",
                                         kJsonMaxDepth))
                    .InFile(file)
                    .AtLine(line);
    err.column = column;
    return err;
  }
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    const size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    auto [line, column] = LineColumn(json_text, offset);
    std::string what = e.what();
    // Keep nlohmann's description, drop its "[json.exception.parse_error.101] ..." prefix.
    if (auto pos = what.find("syntax error"); pos != std::string::npos) what = what.substr(pos);
    Error err = InvalidInput("malformed JSON: " + what).InFile(file).AtLine(line);
    err.column = column;
    return err;
  } catch (const nlohmann::json::exception& e) {
    // Numbers beyond double range ("1e400") fail after the syntax check, without a position.
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    return InvalidInput("malformed JSON: " + what).InFile(file);
  }
  if (!root.is_object()) {
    return InvalidInput("expected a JSON object at the top level, got " + DescribeJsonValue(root))
        .InFile(file);
  }
  if (LooksLikeMegatronModel(root)) {
    STRATA_ASSIGN_OR_RETURN(ModelConfig megatron, ParseMegatronModel(root, file));
    if (const double bound = ParamUpperBound(megatron); !(bound < kMaxParams)) {
      return InvalidInput(fmt::format("the sizes describe about {:.3g} parameters, more than the "
                                      "{:.0e} strata accepts; check the widths and counts",
                                      bound, kMaxParams))
          .InFile(file);
    }
    return megatron;
  }
  ModelConfig config;
  config.file = file;
  config.name = std::filesystem::path(file).stem().string();
  {
    const JsonFields top(root, file, "");
    STRATA_ASSIGN_OR_RETURN(config.model_type, top.StringOr("model_type", ""));
  }
  auto config_keys = [](const nlohmann::json& object) {
    std::vector<std::string> keys;
    for (const auto& item : object.items()) keys.push_back(item.key());
    return keys;
  };
  if (config.model_type.empty()) {
    return JsonFields(root, file, "")
        .ErrorAt("model_type", "missing required field")
        .WithHint(DescribeUnknownFamily("", config_keys(root)) +
                  "; a Megatron-style description needs num_layers, hidden_size, "
                  "num_attention_heads and ffn_hidden_size");
  }
  const FamilyTraits* wrapper = FindFamily(config.model_type);
  if (wrapper == nullptr) {
    return JsonFields(root, file, "")
        .ErrorAt("model_type", "unknown model type '" + config.model_type + "'")
        .WithHint(DescribeUnknownFamily(config.model_type, config_keys(root)));
  }
  ApplyAliases(*wrapper, root);
  const JsonFields top(root, file, "");
  if (top.Has("architectures")) {
    STRATA_ASSIGN_OR_RETURN(const nlohmann::json* archs, top.Array("architectures"));
    if (!archs->empty() && (*archs)[0].is_string()) config.architecture = (*archs)[0];
  }
  STRATA_ASSIGN_OR_RETURN(config.tie_word_embeddings,
                          top.BoolOr("tie_word_embeddings", wrapper->tied_by_default));
  STRATA_ASSIGN_OR_RETURN(config.dtype, top.StringOr("dtype", config.dtype));
  STRATA_ASSIGN_OR_RETURN(config.dtype, top.StringOr("torch_dtype", config.dtype));

  const std::string text_key(wrapper->text_key);  // "llm_config" in InternVL
  STRATA_ASSIGN_OR_RETURN(auto text_probe, top.Object(text_key));
  const FamilyTraits* traits = wrapper;
  if (text_probe) {
    STRATA_ASSIGN_OR_RETURN(std::string text_type,
                            text_probe->StringOr("model_type", config.model_type));
    traits = FindFamily(text_type);
    if (traits == nullptr) {
      return text_probe->ErrorAt("model_type", "unknown model type '" + text_type + "'")
          .WithHint(DescribeUnknownFamily(text_type, config_keys(root[text_key])));
    }
    if (wrapper->vision == VisionTower::kClip && text_type == "llama") {
      ApplyDefaults(root[text_key], kLlamaDefaults);
    } else if (wrapper->vision == VisionTower::kSiglip && text_type == "gemma3_text") {
      ApplyDefaults(root[text_key], kGemma3TextDefaults);
    }
    ApplyAliases(*traits, root[text_key]);
  }
  STRATA_ASSIGN_OR_RETURN(auto text_config, top.Object(text_key));
  const JsonFields& text = text_config ? *text_config : top;
  STRATA_RETURN_IF_ERROR(ParseText(text, *traits, config));
  if (text_config) {
    STRATA_ASSIGN_OR_RETURN(config.tie_word_embeddings,
                            text.BoolOr("tie_word_embeddings", config.tie_word_embeddings));
  }
  STRATA_ASSIGN_OR_RETURN(auto vision, top.Object("vision_config"));
  if (vision &&
      (wrapper->vision == VisionTower::kNone || wrapper->vision == VisionTower::kQwen3Vl)) {
    STRATA_RETURN_IF_ERROR(ParseVision(*vision, config.vision));
  } else if (vision) {
    double ratio = 0.5;  // InternVL's default pixel-shuffle ratio
    if (auto it = root.find("downsample_ratio"); it != root.end() && !it->is_null()) {
      if (!it->is_number()) {
        return top.ErrorAt("downsample_ratio",
                           "expected a number such as 0.5, got " + DescribeJsonValue(*it));
      }
      ratio = it->get<double>();
    }
    STRATA_RETURN_IF_ERROR(
        ParseVisionTower(*vision, wrapper->vision, top, ratio, config.hidden_size, config.vision));
  }
  if (config.mtp_layers > kMaxLayers) {
    return text.ErrorAt(
        text.Has("mtp_num_hidden_layers") ? "mtp_num_hidden_layers" : "num_nextn_predict_layers",
        "expected at most " + std::to_string(kMaxLayers) + " MTP layers, got " +
            std::to_string(config.mtp_layers));
  }
  if (const double bound = ParamUpperBound(config); !(bound < kMaxParams)) {
    return InvalidInput(fmt::format("the sizes describe about {:.3g} parameters, more than the "
                                    "{:.0e} strata accepts; check the widths and counts",
                                    bound, kMaxParams))
        .InFile(file);
  }
  return config;
}

Result<ModelConfig> LoadModelConfig(const std::string& path_or_catalog_name) {
  namespace fs = std::filesystem;
  const std::string& arg = path_or_catalog_name;
  const bool looks_like_path =
      arg.find('/') != std::string::npos || fs::path(arg).extension() == ".json" || fs::exists(arg);
  std::string path = arg;
  std::string name;
  if (!looks_like_path) {
    const fs::path dir = fs::path(DataDir()) / "models";
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
    }
    std::sort(names.begin(), names.end());
    if (std::find(names.begin(), names.end(), arg) == names.end()) {
      return InvalidInput("unknown model '" + arg +
                          "': not a file and not a catalog name in data/models/")
          .WithHint(DidYouMeanHint(arg, names));
    }
    path = (dir / (arg + ".json")).string();
    name = arg;
  }
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  STRATA_ASSIGN_OR_RETURN(ModelConfig config, ParseModelConfig(text, path));
  if (!name.empty()) config.name = name;
  return config;
}

}  // namespace strata

#include "strata/model/megatron_model.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "strata/core/json_fields.h"

namespace strata {

namespace {

// "activation" as NeMo writes it, or Megatron's boolean flags.
Result<MlpKind> MlpFromActivation(const JsonFields& m, bool& squared_relu) {
  squared_relu = false;
  if (m.Has("activation")) {
    STRATA_ASSIGN_OR_RETURN(std::string act, m.StringOr("activation", "gelu"));
    if (act == "swiglu" || act == "fast-swiglu" || act == "geglu" || act == "fast-geglu" ||
        act == "reglu" || act == "fast-reglu") {
      return MlpKind::kGated;
    }
    if (act == "gelu" || act == "relu" || act == "squared-relu" || act == "fast-gelu") {
      squared_relu = act == "squared-relu";
      return MlpKind::kPlain;
    }
    return m.ErrorAt("activation", "unknown activation '" + act +
                                       "'; expected swiglu, geglu, gelu, relu or squared-relu");
  }
  STRATA_ASSIGN_OR_RETURN(bool swiglu, m.BoolOr("swiglu", false));
  STRATA_ASSIGN_OR_RETURN(squared_relu, m.BoolOr("squared_relu", false));
  return swiglu ? MlpKind::kGated : MlpKind::kPlain;
}

// megatron-core's sliding-window attention: window_size [left, right] (--window-size; a query
// attends to the keys from left before it to right after it, left -1 unbounded) on the layers
// is_layer_window_attention picks: every layer, or with window_attn_skip_freq N every layer but
// each N-th (1-based layer numbers, `layer_number % N != 0`), which stays full attention
// (NVIDIA/Megatron-LM megatron/core/transformer/utils.py is_layer_window_attention,
// get_sliding_window_causal_mask). A causal window of left L attends L + 1 tokens: strata's
// sliding_window.
Status ApplyWindowAttention(const JsonFields& m, ModelConfig& c) {
  if (!m.Has("window_size")) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(const nlohmann::json* window, m.Array("window_size"));
  if (window->size() != 2 || !(*window)[0].is_number_integer() ||
      !(*window)[1].is_number_integer()) {
    return m.ErrorAt("window_size", "expected [left, right], two integers");
  }
  const int64_t left = (*window)[0].get<int64_t>();
  const int64_t right = (*window)[1].get<int64_t>();
  if (left < 0) return OkStatus();  // unbounded on the left: full causal attention
  if (right != 0) {
    return m.ErrorAt("window_size",
                     "a window that looks ahead (right " + std::to_string(right) +
                         ") is not causal attention; strata models causal windows (right 0)");
  }
  STRATA_ASSIGN_OR_RETURN(const int64_t skip, m.NonNegativeIntOr("window_attn_skip_freq", 0));
  c.attention.sliding_window = left + 1;
  for (size_t i = 0; i < c.layers.size(); ++i) {
    const int64_t number = static_cast<int64_t>(i) + 1;
    if (skip == 0 || number % skip != 0) c.layers[i].mixer = MixerKind::kSlidingAttention;
  }
  return OkStatus();
}

}  // namespace

bool LooksLikeMegatronModel(const nlohmann::json& object) {
  return object.is_object() && !object.contains("model_type") && object.contains("num_layers") &&
         object.contains("hidden_size");
}

int64_t MegatronPaddedVocab(int64_t vocab, int64_t divisible_by, int64_t tp) {
  const int64_t multiple = divisible_by * tp;
  if (multiple <= 0) return vocab;
  return (vocab + multiple - 1) / multiple * multiple;
}

Result<ModelConfig> ParseMegatronModel(const nlohmann::json& object, const std::string& file) {
  const JsonFields m(object, file, "");
  ModelConfig c;
  c.file = file;
  c.name = std::filesystem::path(file).stem().string();
  c.model_type = "megatron";
  c.family = "megatron";
  c.architecture = "megatron-core GPTModel";
  c.dtype = "bfloat16";
  STRATA_ASSIGN_OR_RETURN(int64_t num_layers, m.PositiveInt("num_layers"));
  if (num_layers > (1 << 16)) {
    return m.ErrorAt("num_layers",
                     "expected at most 65536 layers, got " + std::to_string(num_layers));
  }
  STRATA_ASSIGN_OR_RETURN(c.hidden_size, m.PositiveInt("hidden_size"));
  const int64_t h = c.hidden_size;
  STRATA_ASSIGN_OR_RETURN(c.attention.num_heads, m.PositiveInt("num_attention_heads"));
  // num_query_groups applies only with --group-query-attention; NeMo configs give it alone.
  STRATA_ASSIGN_OR_RETURN(bool gqa, m.BoolOr("group_query_attention", m.Has("num_query_groups")));
  STRATA_ASSIGN_OR_RETURN(int64_t groups,
                          m.PositiveIntOr("num_query_groups", c.attention.num_heads));
  c.attention.num_kv_heads = gqa ? groups : c.attention.num_heads;
  if (c.attention.num_heads % c.attention.num_kv_heads != 0) {
    return m.ErrorAt("num_query_groups", "num_attention_heads (" +
                                             std::to_string(c.attention.num_heads) +
                                             ") is not a multiple of num_query_groups (" +
                                             std::to_string(c.attention.num_kv_heads) + ")");
  }
  if (!m.Has("kv_channels") && h % c.attention.num_heads != 0) {
    return m.ErrorAt("num_attention_heads",
                     "hidden_size is not a multiple of "
                     "num_attention_heads and kv_channels is not given");
  }
  STRATA_ASSIGN_OR_RETURN(c.attention.head_dim,
                          m.PositiveIntOr("kv_channels", h / c.attention.num_heads));
  STRATA_ASSIGN_OR_RETURN(c.attention.qk_norm, m.BoolOr("qk_layernorm", false));

  bool squared_relu = false;
  STRATA_ASSIGN_OR_RETURN(c.mlp, MlpFromActivation(m, squared_relu));
  // Megatron's ffn_hidden_size defaults to 4h (arguments.py).
  STRATA_ASSIGN_OR_RETURN(c.dense_mlp.intermediate_size, m.PositiveIntOr("ffn_hidden_size", 4 * h));

  // --disable-bias-linear clears add_bias_linear (default true); NeMo calls it `bias`.
  const char* bias_key = m.Has("add_bias_linear") ? "add_bias_linear" : "bias";
  STRATA_ASSIGN_OR_RETURN(bool bias, m.BoolOr(bias_key, true));
  STRATA_ASSIGN_OR_RETURN(bool qkv_bias, m.BoolOr("add_qkv_bias", bias));
  c.attention.bias = bias;
  c.attention.qkv_bias = !bias && qkv_bias;
  c.mlp_bias = bias;

  STRATA_ASSIGN_OR_RETURN(std::string norm, m.StringOr("normalization", "LayerNorm"));
  if (norm == "LayerNorm") {
    c.norm = NormKind::kLayerNorm;
  } else if (norm == "RMSNorm") {
    c.norm = NormKind::kRmsNorm;
  } else {
    return m.ErrorAt("normalization",
                     "unknown normalization '" + norm + "'; expected LayerNorm or RMSNorm");
  }

  // Tied unless --untie-embeddings-and-output-weights (NeMo: share_embeddings_and_output_weights).
  bool untie = false;
  if (m.Has("share_embeddings_and_output_weights")) {
    STRATA_ASSIGN_OR_RETURN(bool share, m.BoolOr("share_embeddings_and_output_weights", true));
    untie = !share;
  } else {
    STRATA_ASSIGN_OR_RETURN(untie, m.BoolOr("untie_embeddings_and_output_weights", false));
  }
  c.tie_word_embeddings = !untie;

  if (m.Has("padded_vocab_size")) {
    STRATA_ASSIGN_OR_RETURN(c.vocab_size, m.PositiveInt("padded_vocab_size"));
  } else {
    STRATA_ASSIGN_OR_RETURN(int64_t vocab, m.PositiveInt("vocab_size"));
    STRATA_ASSIGN_OR_RETURN(int64_t divisible,
                            m.PositiveIntOr("make_vocab_size_divisible_by", 128));
    STRATA_ASSIGN_OR_RETURN(int64_t tp, m.PositiveIntOr("tensor_model_parallel_size", 1));
    c.vocab_size = MegatronPaddedVocab(vocab, divisible, tp);
  }

  STRATA_ASSIGN_OR_RETURN(std::string positions,
                          m.StringOr("position_embedding_type", "learned_absolute"));
  if (positions == "learned_absolute") {
    const auto key =
        m.FirstPresent({"max_position_embeddings", "encoder_seq_length", "seq_length"});
    if (!key) {
      return m.ErrorAt("max_position_embeddings",
                       "learned_absolute positions (Megatron's default) need "
                       "max_position_embeddings; or set position_embedding_type: rope");
    }
    STRATA_ASSIGN_OR_RETURN(c.position_embeddings, m.PositiveInt(*key));
  } else if (positions != "rope" && positions != "none" && positions != "mrope" &&
             positions != "yarn") {
    return m.ErrorAt("position_embedding_type", "unknown position embedding '" + positions +
                                                    "'; expected learned_absolute, rope or none");
  }

  STRATA_ASSIGN_OR_RETURN(int64_t experts, m.NonNegativeIntOr("num_moe_experts", 0));
  if (experts == 0) {
    STRATA_ASSIGN_OR_RETURN(experts, m.NonNegativeIntOr("num_experts", 0));
  }
  FfnKind ffn = FfnKind::kDense;
  if (experts > 0) {
    ffn = FfnKind::kMoe;
    c.moe.num_experts = experts;
    STRATA_ASSIGN_OR_RETURN(c.moe.top_k, m.PositiveIntOr("moe_router_topk", 2));
    STRATA_ASSIGN_OR_RETURN(c.moe.expert_intermediate_size,
                            m.PositiveIntOr("moe_ffn_hidden_size", c.dense_mlp.intermediate_size));
    STRATA_ASSIGN_OR_RETURN(c.moe.shared_expert_intermediate_size,
                            m.NonNegativeIntOr("moe_shared_expert_intermediate_size", 0));
    c.moe.num_shared_experts = c.moe.shared_expert_intermediate_size > 0 ? 1 : 0;
    if (c.moe.top_k > experts) {
      return m.ErrorAt("moe_router_topk", "routes to more experts than num_moe_experts");
    }
  }
  c.layers.assign(static_cast<size_t>(num_layers), LayerSpec{MixerKind::kFullAttention, ffn});
  STRATA_RETURN_IF_ERROR(ApplyWindowAttention(m, c));
  return c;
}

}  // namespace strata

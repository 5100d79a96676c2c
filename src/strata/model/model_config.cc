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

namespace strata {

namespace {

// The model_type values whose layer structure this parser understands. A config of another
// family is refused rather than counted wrongly.
const std::vector<std::string>& KnownModelTypes() {
  static const std::vector<std::string> kTypes = {
      "llama",        "mistral",
      "mixtral",      "qwen2",
      "qwen2_moe",    "qwen3",
      "qwen3_moe",    "qwen3_next",
      "qwen3_5_moe",  "qwen3_5_moe_text",
      "qwen3_5",      "qwen3_5_text",
      "qwen3_vl",     "qwen3_vl_text",
      "qwen3_vl_moe", "qwen3_vl_moe_text",
      "deepseek_v2",  "deepseek_v3",
      "gpt_oss",
  };
  return kTypes;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

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

Status ParseAttention(const JsonFields& text, const std::string& model_type, int64_t hidden,
                      AttentionConfig& out) {
  STRATA_ASSIGN_OR_RETURN(out.num_heads, text.PositiveInt("num_attention_heads"));
  STRATA_ASSIGN_OR_RETURN(out.num_kv_heads,
                          text.PositiveIntOr("num_key_value_heads", out.num_heads));
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
  STRATA_ASSIGN_OR_RETURN(out.output_gate,
                          text.BoolOr("attn_output_gate", model_type == "qwen3_next"));
  STRATA_ASSIGN_OR_RETURN(out.bias, text.BoolOr("attention_bias", false));
  // Qwen2 hard-codes q/k/v biases (no o bias) and has no field for them.
  out.qkv_bias = !out.bias && StartsWith(model_type, "qwen2");
  out.qk_norm = StartsWith(model_type, "qwen3");
  out.sinks = model_type == "gpt_oss";
  STRATA_ASSIGN_OR_RETURN(out.sliding_window, text.NonNegativeIntOr("sliding_window", 0));
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

Status ParseMoe(const JsonFields& text, const std::string& model_type, int64_t num_experts,
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
  if (StartsWith(model_type, "deepseek")) {
    // DeepSeek: n_shared_experts experts of the routed size, no gate; a per-expert score bias.
    STRATA_ASSIGN_OR_RETURN(out.num_shared_experts, text.NonNegativeIntOr("n_shared_experts", 0));
    out.shared_expert_intermediate_size = out.expert_intermediate_size;
    STRATA_ASSIGN_OR_RETURN(std::string topk_method, text.StringOr("topk_method", "greedy"));
    out.router_bias = topk_method == "noaux_tc";
  } else {
    // Qwen MoE: one shared expert of its own width behind a sigmoid gate.
    STRATA_ASSIGN_OR_RETURN(out.shared_expert_intermediate_size,
                            text.NonNegativeIntOr("shared_expert_intermediate_size", 0));
    out.num_shared_experts = out.shared_expert_intermediate_size > 0 ? 1 : 0;
    out.shared_expert_gate = out.num_shared_experts > 0;
  }
  if (model_type == "gpt_oss") {
    out.router_bias = true;
    out.expert_bias = true;
  }
  return OkStatus();
}

// Which layers are MoE, following each family's config convention.
Result<std::vector<FfnKind>> FfnPattern(const JsonFields& text, const std::string& model_type,
                                        int64_t num_layers, bool has_experts) {
  std::vector<FfnKind> ffn(static_cast<size_t>(num_layers), FfnKind::kDense);
  if (!has_experts) return ffn;
  if (StartsWith(model_type, "deepseek")) {
    STRATA_ASSIGN_OR_RETURN(int64_t first_dense, text.NonNegativeIntOr("first_k_dense_replace", 0));
    STRATA_ASSIGN_OR_RETURN(int64_t freq, text.PositiveIntOr("moe_layer_freq", 1));
    for (int64_t i = 0; i < num_layers; ++i) {
      if (i >= first_dense && i % freq == 0) ffn[static_cast<size_t>(i)] = FfnKind::kMoe;
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
    const std::vector<std::string> kNames = {"full_attention", "sliding_attention",
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
            .WithHint(DidYouMeanHint(name, kNames));
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

double D(int64_t v) { return static_cast<double>(v); }

// An upper bound of the parameter count computed in double, before any int64 arithmetic.
double ParamUpperBound(const ModelConfig& c) {
  const double h = D(c.hidden_size);
  const AttentionConfig& a = c.attention;
  const MlaConfig& m = c.mla;
  const LinearAttentionConfig& g = c.linear_attention;
  const MoeConfig& e = c.moe;
  const double q = D(a.num_heads) * D(a.head_dim);
  const double kv = D(a.num_kv_heads) * D(a.head_dim);
  const double attention = h * (3 * q + 2 * kv) + 3 * q + 2 * kv + h + D(a.num_heads);
  const double mla_heads =
      D(m.num_heads) * (D(m.qk_nope_head_dim) + D(m.qk_rope_head_dim) + D(m.v_head_dim));
  const double mla = (h + 1) * (D(m.q_lora_rank) + D(m.kv_lora_rank) + D(m.qk_rope_head_dim)) +
                     (D(m.q_lora_rank) + D(m.kv_lora_rank) + h + 1) * mla_heads + h * mla_heads;
  const double lin_k = D(g.num_key_heads) * D(g.key_head_dim);
  const double lin_v = D(g.num_value_heads) * D(g.value_head_dim);
  const double linear =
      (h + D(g.conv_kernel) + 2) * (2 * lin_k + 2 * lin_v + 2 * D(g.num_value_heads)) + lin_v * h +
      D(g.value_head_dim);
  const double experts = D(e.num_experts) * (3 * h * D(e.expert_intermediate_size) +
                                             2 * D(e.expert_intermediate_size) + 2 * h + 1) +
                         D(e.num_shared_experts) * 3 * h * D(e.shared_expert_intermediate_size) + h;
  const double layer =
      attention + mla + linear + experts + 3 * h * D(c.dense_mlp.intermediate_size) + 2 * h;
  const VisionConfig& v = c.vision;
  const double vd = D(v.hidden_size);
  const double vm = vd * D(v.spatial_merge_size) * D(v.spatial_merge_size);
  const double vision =
      D(v.depth) *
          (4 * vd * vd + 2 * vd * D(v.intermediate_size) + 9 * vd + D(v.intermediate_size)) +
      (D(v.deepstack_mergers) + 1) *
          (vm * vm + vm * D(v.out_hidden_size) + 4 * vm + D(v.out_hidden_size)) +
      vd * (D(v.in_channels) * D(v.temporal_patch_size) * D(v.patch_size) * D(v.patch_size) +
            D(v.num_position_embeddings) + 1);
  return (D(static_cast<int64_t>(c.layers.size())) + D(c.mtp_layers) + 1) * layer +
         2 * D(c.vocab_size) * h + h + 2 * h * h * D(c.mtp_layers) + vision;
}

Status ParseText(const JsonFields& text, const std::string& model_type, ModelConfig& config) {
  STRATA_ASSIGN_OR_RETURN(config.hidden_size, text.PositiveInt("hidden_size"));
  STRATA_ASSIGN_OR_RETURN(config.vocab_size, text.PositiveInt("vocab_size"));
  STRATA_ASSIGN_OR_RETURN(int64_t num_layers, text.PositiveInt("num_hidden_layers"));
  if (num_layers > kMaxLayers) {
    return text.ErrorAt("num_hidden_layers", "expected at most " + std::to_string(kMaxLayers) +
                                                 " layers, got " + std::to_string(num_layers));
  }
  STRATA_ASSIGN_OR_RETURN(config.dtype, text.StringOr("torch_dtype", config.dtype));

  const bool mla = text.Has("kv_lora_rank");
  if (mla) STRATA_RETURN_IF_ERROR(ParseMla(text, config.mla));
  // MLA configs also carry num_key_value_heads; the GQA shapes are kept for reference only.
  STRATA_RETURN_IF_ERROR(ParseAttention(text, model_type, config.hidden_size, config.attention));
  STRATA_ASSIGN_OR_RETURN(auto mixers, MixerPattern(text, num_layers, mla));
  const bool has_linear = std::count(mixers.begin(), mixers.end(), MixerKind::kGatedDeltaNet) > 0;
  if (has_linear) STRATA_RETURN_IF_ERROR(ParseLinearAttention(text, config.linear_attention));
  const bool has_sliding =
      std::count(mixers.begin(), mixers.end(), MixerKind::kSlidingAttention) > 0;
  if (has_sliding && config.attention.sliding_window == 0) {
    return text.ErrorAt("sliding_window",
                        "layer_types has sliding_attention layers but no sliding_window size");
  }

  const auto expert_key =
      text.FirstPresent({"num_experts", "num_local_experts", "n_routed_experts"});
  int64_t num_experts = 0;
  if (expert_key) {
    STRATA_ASSIGN_OR_RETURN(num_experts, text.NonNegativeIntOr(*expert_key, 0));
  }
  if (num_experts > 0) STRATA_RETURN_IF_ERROR(ParseMoe(text, model_type, num_experts, config.moe));
  STRATA_ASSIGN_OR_RETURN(auto ffns, FfnPattern(text, model_type, num_layers, num_experts > 0));
  if (std::count(ffns.begin(), ffns.end(), FfnKind::kDense) > 0) {
    STRATA_ASSIGN_OR_RETURN(config.dense_mlp.intermediate_size,
                            text.PositiveInt("intermediate_size"));
  }
  config.layers.clear();
  for (size_t i = 0; i < static_cast<size_t>(num_layers); ++i) {
    config.layers.push_back(LayerSpec{mixers[i], ffns[i]});
  }

  const auto mtp_key = text.FirstPresent({"mtp_num_hidden_layers", "num_nextn_predict_layers"});
  if (mtp_key) {
    STRATA_ASSIGN_OR_RETURN(config.mtp_layers, text.NonNegativeIntOr(*mtp_key, 0));
  }

  // Rope settings do not change parameter or FLOP counts, but a malformed block is still an
  // error: they may sit at the top level (rope_theta) or nested (rope_parameters/rope_scaling).
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    STRATA_ASSIGN_OR_RETURN(auto rope, text.Object(key));
    (void)rope;
  }
  return OkStatus();
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
  }
  return "?";
}

std::string_view FfnKindName(FfnKind kind) { return kind == FfnKind::kMoe ? "moe" : "dense"; }

int64_t ModelConfig::CountLayers(MixerKind kind) const {
  return std::count_if(layers.begin(), layers.end(),
                       [&](const LayerSpec& l) { return l.mixer == kind; });
}

int64_t ModelConfig::CountLayers(FfnKind kind) const {
  return std::count_if(layers.begin(), layers.end(),
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
  const JsonFields top(root, file, "");
  ModelConfig config;
  config.file = file;
  config.name = std::filesystem::path(file).stem().string();
  config.dtype = "bfloat16";
  STRATA_ASSIGN_OR_RETURN(config.model_type, top.StringOr("model_type", ""));
  if (top.Has("architectures")) {
    STRATA_ASSIGN_OR_RETURN(const nlohmann::json* archs, top.Array("architectures"));
    if (!archs->empty() && (*archs)[0].is_string()) config.architecture = (*archs)[0];
  }
  if (config.model_type.empty()) {
    return top.ErrorAt("model_type", "missing required field").WithHint("expected one of: " + [] {
      std::string all;
      for (const auto& t : KnownModelTypes()) all += (all.empty() ? "" : ", ") + t;
      return all;
    }());
  }
  const auto& known = KnownModelTypes();
  if (std::find(known.begin(), known.end(), config.model_type) == known.end()) {
    return top.ErrorAt("model_type", "unknown model type '" + config.model_type + "'")
        .WithHint(DidYouMeanHint(config.model_type, known));
  }
  STRATA_ASSIGN_OR_RETURN(config.tie_word_embeddings, top.BoolOr("tie_word_embeddings", false));
  STRATA_ASSIGN_OR_RETURN(config.dtype, top.StringOr("torch_dtype", config.dtype));

  STRATA_ASSIGN_OR_RETURN(auto text_config, top.Object("text_config"));
  const JsonFields& text = text_config ? *text_config : top;
  std::string text_type = config.model_type;
  if (text_config) {
    STRATA_ASSIGN_OR_RETURN(text_type, text.StringOr("model_type", text_type));
  }
  STRATA_RETURN_IF_ERROR(ParseText(text, text_type, config));
  if (text_config) {
    STRATA_ASSIGN_OR_RETURN(config.tie_word_embeddings,
                            text.BoolOr("tie_word_embeddings", config.tie_word_embeddings));
  }
  STRATA_ASSIGN_OR_RETURN(auto vision, top.Object("vision_config"));
  if (vision) STRATA_RETURN_IF_ERROR(ParseVision(*vision, config.vision));
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

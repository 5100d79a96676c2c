#include "strata/model/family_traits.h"

#include <algorithm>

#include "strata/core/did_you_mean.h"

namespace strata {

namespace {

using Aliases = std::vector<std::pair<std::string_view, std::string_view>>;

FamilyTraits Llama(std::string_view type) {
  FamilyTraits t;
  t.model_type = type;
  return t;
}

// The GPT-2 lineage: LayerNorm with biases, a GELU MLP with biases, biases on every projection.
FamilyTraits Gpt2Like(std::string_view type) {
  FamilyTraits t = Llama(type);
  t.norm = NormKind::kLayerNorm;
  t.mlp = MlpKind::kPlain;
  t.mlp_bias = true;
  t.attention_bias = true;
  t.tied_by_default = true;
  return t;
}

std::vector<FamilyTraits> BuildTable() {
  std::vector<FamilyTraits> rows;
  auto add = [&](FamilyTraits t) { rows.push_back(std::move(t)); };

  add(Llama("llama"));
  {
    FamilyTraits t = Llama("mistral");
    t.window = WindowLayers::kAll;  // Mistral 7B v0.1: sliding_window 4096 on every layer
    add(t);
  }
  {
    FamilyTraits t = Llama("mixtral");
    t.moe = MoeStyle::kPlain;
    t.window = WindowLayers::kAll;
    add(t);
  }
  for (std::string_view type : {"qwen2", "qwen2_moe"}) {
    FamilyTraits t = Llama(type);
    t.qkv_bias = true;  // hard-coded in Qwen2 attention, no config key
    add(t);
  }
  for (std::string_view type :
       {"qwen3", "qwen3_moe", "qwen3_next", "qwen3_5_moe", "qwen3_5_moe_text", "qwen3_5",
        "qwen3_5_text", "qwen3_vl", "qwen3_vl_text", "qwen3_vl_moe", "qwen3_vl_moe_text"}) {
    FamilyTraits t = Llama(type);
    t.qk_norm = true;
    t.output_gate = type == "qwen3_next";
    add(t);
  }
  for (std::string_view type : {"deepseek_v2", "deepseek_v3", "kimi_k2"}) {
    FamilyTraits t = Llama(type);  // Kimi K2 is DeepSeek-V3 under another name
    t.moe = MoeStyle::kDeepSeek;
    add(t);
  }
  {
    FamilyTraits t = Llama("gpt_oss");
    t.moe = MoeStyle::kPlain;
    t.sinks = true;
    t.expert_biases = true;
    add(t);
  }
  {
    FamilyTraits t = Gpt2Like("gpt2");
    t.learned_positions = true;
    t.aliases = {{"n_embd", "hidden_size"},
                 {"n_layer", "num_hidden_layers"},
                 {"n_head", "num_attention_heads"},
                 {"n_inner", "intermediate_size"},
                 {"n_positions", "max_position_embeddings"}};
    add(t);
  }
  {
    FamilyTraits t = Gpt2Like("gpt_bigcode");  // SantaCoder / StarCoder: GPT-2 with MQA
    t.learned_positions = true;
    t.multi_query_key = true;
    t.aliases = rows.back().aliases;
    add(t);
  }
  {
    FamilyTraits t = Gpt2Like("starcoder2");  // rotary, GQA, biases controlled by use_bias
    t.learned_positions = false;
    t.window = WindowLayers::kAll;
    add(t);
  }
  {
    FamilyTraits t = Llama("nemotron");  // LayerNorm1p (weight and bias), squared-ReLU MLP
    t.norm = NormKind::kLayerNorm;
    t.mlp = MlpKind::kPlain;
    add(t);
  }
  {
    FamilyTraits t = Llama("nemotron_h");  // Mamba-2 / attention / MLP blocks, one norm each
    t.mlp = MlpKind::kPlain;
    t.pattern = LayerPattern::kNemotronH;
    add(t);
  }
  {
    FamilyTraits t = Llama("gemma");
    t.tied_by_default = true;
    add(t);
  }
  {
    FamilyTraits t = Llama("gemma2");  // pre and post norms around attention and MLP
    t.tied_by_default = true;
    t.norms_per_layer = 4;
    t.window = WindowLayers::kEvenLayers;
    add(t);
  }
  {
    FamilyTraits t = Llama("gemma3_text");
    t.tied_by_default = true;
    t.norms_per_layer = 4;
    t.qk_norm = true;
    t.window = WindowLayers::kEveryNthFull;
    add(t);
  }
  {
    FamilyTraits t = Llama("phi3");  // fused qkv and gate_up: the same counts as Llama
    t.window = WindowLayers::kAll;
    add(t);
  }
  {
    FamilyTraits t = Llama("phimoe");
    t.norm = NormKind::kLayerNorm;
    t.moe = MoeStyle::kPlain;
    t.window = WindowLayers::kAll;
    add(t);
  }
  {
    FamilyTraits t = Llama("glm4");  // GLM-4-0414: sandwich norms, q/k/v biases only
    t.norms_per_layer = 4;
    t.bias_key_is_qkv = true;
    add(t);
  }
  {
    FamilyTraits t = Llama("olmo2");  // post-norms only (2 per layer); q/k norms over all heads
    t.qk_norm_full_width = true;
    add(t);
  }
  {
    FamilyTraits t = Llama("olmoe");
    t.qk_norm_full_width = true;
    t.moe = MoeStyle::kPlain;
    add(t);
  }
  {
    FamilyTraits t = Llama("dbrx");
    t.norm = NormKind::kLayerNormNoBias;
    t.moe = MoeStyle::kPlain;
    t.aliases = {{"d_model", "hidden_size"},
                 {"n_layers", "num_hidden_layers"},
                 {"n_heads", "num_attention_heads"},
                 {"attn_config.kv_n_heads", "num_key_value_heads"},
                 {"ffn_config.ffn_hidden_size", "moe_intermediate_size"},
                 {"ffn_config.moe_num_experts", "num_local_experts"},
                 {"ffn_config.moe_top_k", "num_experts_per_tok"}};
    add(t);
  }
  std::sort(rows.begin(), rows.end(), [](const FamilyTraits& a, const FamilyTraits& b) {
    return a.model_type < b.model_type;
  });
  return rows;
}

const std::vector<FamilyTraits>& Table() {
  static const std::vector<FamilyTraits> kTable = BuildTable();
  return kTable;
}

// Families strata does not count yet, with the nearest known family and what is missing: the
// message a user sees instead of a wrong number.
struct KnownGap {
  std::string_view model_type;
  std::string_view close_to;
  std::string_view missing;
};

constexpr KnownGap kGaps[] = {
    {"jamba", "nemotron_h (hybrid) and mixtral (MoE)",
     "Mamba-1 mixers (mamba_d_state, mamba_dt_rank, mamba_expand) are not modelled"},
    {"minimax", "mixtral (MoE)",
     "lightning-attention layers (attn_type_list, layer_types) are not modelled"},
    {"minimax_m1", "mixtral (MoE)",
     "lightning-attention layers (attn_type_list) are not modelled"},
    {"ernie4_5_moe", "qwen2_moe / deepseek_v3 (MoE with shared experts)",
     "moe_num_shared_experts and moe_layer_start_index/interval are not read yet"},
    {"glm4_moe", "deepseek_v3 (first_k_dense_replace, n_shared_experts) and glm4",
     "its MTP layer layout and partial-rotary q/k norms are not modelled"},
    {"gemma3", "gemma3_text (its text_config)",
     "the SigLIP vision tower (vision_config.model_type siglip_vision_model) is not modelled"},
    {"llava", "the text_config's own family",
     "CLIP/SigLIP vision towers and the multi-modal projector are not modelled"},
    {"internvl_chat", "qwen2 / internlm2 (llm_config)",
     "InternViT (vision_config) and the mlp1 projector are not modelled"},
    {"qwen2_5_vl", "qwen2 (the text part) and qwen3_vl (vision tower)",
     "the Qwen2.5-VL tower (RMSNorm, SwiGLU blocks, window attention) differs from Qwen3-VL's"},
};

}  // namespace

const FamilyTraits* FindFamily(std::string_view model_type) {
  for (const FamilyTraits& t : Table()) {
    if (t.model_type == model_type) return &t;
  }
  return nullptr;
}

std::vector<std::string> KnownFamilies() {
  std::vector<std::string> names;
  for (const FamilyTraits& t : Table()) names.emplace_back(t.model_type);
  return names;
}

std::string DescribeUnknownFamily(std::string_view model_type,
                                  const std::vector<std::string>& config_keys) {
  for (const KnownGap& gap : kGaps) {
    if (gap.model_type == model_type) {
      return "closest known: " + std::string(gap.close_to) + "; " + std::string(gap.missing);
    }
  }
  auto has = [&](std::string_view key) {
    return std::find(config_keys.begin(), config_keys.end(), key) != config_keys.end();
  };
  std::string close;
  if (has("kv_lora_rank")) close = "deepseek_v3 (it has kv_lora_rank: MLA)";
  else if (has("hybrid_override_pattern")) close = "nemotron_h (hybrid_override_pattern)";
  else if (has("layer_types") && has("linear_num_value_heads")) close = "qwen3_next";
  else if (has("num_local_experts") || has("num_experts")) close = "mixtral / qwen3_moe (MoE)";
  else if (has("num_attention_heads") && has("intermediate_size")) close = "llama (dense GQA)";
  // A near spelling of a known family is most likely a typo: say only that.
  std::string hint = DidYouMeanHint(std::string(model_type), KnownFamilies());
  if (hint.starts_with("did you mean")) return hint;
  std::string out = close.empty() ? "" : "closest known by its keys: " + close;
  std::string need;
  for (std::string_view key :
       {"hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"}) {
    if (!has(key)) need += (need.empty() ? "" : ", ") + std::string(key);
  }
  if (!need.empty()) out += (out.empty() ? "" : "; ") + ("missing keys strata needs: " + need);
  if (out.empty()) out = "known families: " + [] {
    std::string all;
    for (const auto& n : KnownFamilies()) all += (all.empty() ? "" : ", ") + n;
    return all;
  }();
  return out;
}

}  // namespace strata

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
  // Baichuan 2: Llama's layer with q, k and v in one W_pack matrix (the same 3 h^2 weights) and
  // a NormHead output layer (the same V x h weights, normalised when applied); the 13B model's
  // ALiBi has no parameters.
  add(Llama("baichuan"));
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
  {
    FamilyTraits t = Llama("ernie4_5_moe");  // ERNIE 4.5: Llama attention, shared experts
    t.moe = MoeStyle::kErnie;
    t.router_score_bias = true;  // moe_statics.e_score_correction_bias
    t.aliases = {{"moe_num_experts", "num_experts"}, {"moe_k", "num_experts_per_tok"}};
    add(t);
  }
  {
    FamilyTraits t = Llama("glm4_moe");  // GLM-4.5: DeepSeek-V3 MoE layout on GQA attention
    t.moe = MoeStyle::kDeepSeek;
    t.bias_key_is_qkv = true;       // attention_bias: q/k/v only
    t.router_score_bias = true;     // e_score_correction_bias, no topk_method key
    t.mtp_embedding_copies = true;  // model.layers.N.embed_tokens and shared_head.head
    add(t);
  }
  {
    FamilyTraits t = Llama("jamba");  // Mamba-1 / attention 1:7, MoE every other layer
    t.moe = MoeStyle::kPlain;
    t.pattern = LayerPattern::kJamba;
    add(t);
  }
  // MiniMax-Text-01 ("minimax" in transformers, "minimax_text_01" in its own repository) and
  // MiniMax-M1 (the same architecture): 7 lightning : 1 softmax attention layers, all MoE.
  for (std::string_view type : {"minimax", "minimax_text_01", "minimax_m1"}) {
    FamilyTraits t = Llama(type);
    t.moe = MoeStyle::kPlain;
    t.pattern = LayerPattern::kMiniMax;
    add(t);
  }
  {
    FamilyTraits t = Llama("llava");  // CLIP tower + 2-layer projector + text_config's family
    t.vision = VisionTower::kClip;
    add(t);
  }
  {
    FamilyTraits t = Llama("internvl_chat");  // InternViT + mlp1 + llm_config's family
    t.vision = VisionTower::kInternVit;
    t.text_key = "llm_config";
    add(t);
  }
  {
    FamilyTraits t = Llama("qwen2_5_vl");  // Qwen2 text at the top level, its own tower
    t.qkv_bias = true;
    t.vision = VisionTower::kQwen25Vl;
    add(t);
  }
  {
    // Gemma3ForConditionalGeneration: SigLIP tower + pooling projector + text_config's
    // gemma3_text; tied like Gemma3Config (the Hub file names no tie_word_embeddings).
    FamilyTraits t = Llama("gemma3");
    t.tied_by_default = true;
    t.vision = VisionTower::kSiglip;
    add(t);
  }
  std::sort(rows.begin(), rows.end(), [](const FamilyTraits& a, const FamilyTraits& b) {
    return a.model_type < b.model_type;
  });
  return rows;
}

const std::vector<FamilyTraits>& Table() {
  static const std::vector<FamilyTraits> table = BuildTable();
  return table;
}

// Families strata does not count yet, with the nearest known family and what is missing: the
// message a user sees instead of a wrong number.
struct KnownGap {
  std::string_view model_type;
  std::string_view close_to;
  std::string_view missing;
};

constexpr KnownGap kGaps[] = {
    {"gemma3n", "gemma3_text / gemma3 (SigLIP wrapper)",
     "Gemma 3n's per-layer embeddings, AltUp, LAuReL blocks and its MobileNet and audio towers "
     "are not modelled"},
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
  if (has("kv_lora_rank"))
    close = "deepseek_v3 (it has kv_lora_rank: MLA)";
  else if (has("hybrid_override_pattern"))
    close = "nemotron_h (hybrid_override_pattern)";
  else if (has("mamba_d_state") || has("attn_layer_period"))
    close = "jamba (Mamba-1 hybrid)";
  else if (has("attn_type_list"))
    close = "minimax (lightning-attention hybrid)";
  else if (has("layer_types") && has("linear_num_value_heads"))
    close = "qwen3_next";
  else if (has("num_local_experts") || has("num_experts"))
    close = "mixtral / qwen3_moe (MoE)";
  else if (has("num_attention_heads") && has("intermediate_size"))
    close = "llama (dense GQA)";
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
  if (out.empty())
    out = "known families: " + [] {
      std::string all;
      for (const auto& n : KnownFamilies()) all += (all.empty() ? "" : ", ") + n;
      return all;
    }();
  return out;
}

}  // namespace strata

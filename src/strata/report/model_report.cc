#include "strata/report/model_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "strata/core/table.h"

namespace strata {

namespace {

std::string Group(int64_t value) {
  std::string s = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string Gflop(FlopCount f) { return fmt::format("{:.3f}", f.gflop()); }

std::string Share(int64_t part, int64_t whole) {
  return whole > 0
             ? fmt::format("{:.2f}", 100.0 * static_cast<double>(part) / static_cast<double>(whole))
             : "-";
}

std::string LayerSummary(const ModelConfig& c) {
  std::string mixers;
  for (MixerKind k : {MixerKind::kFullAttention, MixerKind::kSlidingAttention,
                      MixerKind::kGatedDeltaNet, MixerKind::kMla, MixerKind::kMamba2,
                      MixerKind::kMamba1, MixerKind::kLightning, MixerKind::kNone}) {
    if (int64_t n = c.CountLayers(k); n > 0) {
      mixers += fmt::format("{}{} {}", mixers.empty() ? "" : " + ", n, MixerKindName(k));
    }
  }
  std::string ffns;
  for (FfnKind k : {FfnKind::kDense, FfnKind::kMoe, FfnKind::kNone}) {
    if (int64_t n = c.CountLayers(k); n > 0) {
      ffns += fmt::format("{}{} {}", ffns.empty() ? "" : " + ", n, FfnKindName(k));
    }
  }
  std::string moe;
  if (c.CountLayers(FfnKind::kMoe) > 0) {
    moe = fmt::format("; MoE: {} experts, top {}, {} shared", c.moe.num_experts, c.moe.top_k,
                      c.moe.num_shared_experts);
  }
  return fmt::format("{} layers: {}; {}{}", c.layers.size(), mixers, ffns, moe);
}

// The per-kind formulas with this model's shapes substituted (docs/formulas.md, "Parameters").
std::string ExplainShapes(const ModelConfig& c) {
  const int64_t h = c.hidden_size;
  std::string out;
  auto layer_of = [&](MixerKind mixer, FfnKind ffn) {
    return CountLayerParams(c, LayerSpec{mixer, ffn}, 0);
  };
  const FfnKind any_ffn = c.layers.empty() ? FfnKind::kDense : c.layers.front().ffn;
  if (c.CountLayers(MixerKind::kFullAttention) + c.CountLayers(MixerKind::kSlidingAttention) > 0) {
    const AttentionConfig& a = c.attention;
    const int64_t q = a.num_heads * a.head_dim;
    const int64_t kv = a.num_kv_heads * a.head_dim;
    out += fmt::format(
        "  attention  = h q{} + 2 h kv + q h{}{}{} = {} x {} + 2 x {} x {} + {} x {}{}{}{} = {}\n",
        a.output_gate ? " x 2 (output gate)" : "", a.bias ? " + biases" : "",
        a.qk_norm ? " + q/k norms" : "", a.sinks ? " + sinks" : "", h, q * (a.output_gate ? 2 : 1),
        h, kv, q, h, a.bias ? fmt::format(" + {}", q + 2 * kv + h) : "",
        a.qk_norm ? fmt::format(" + {}", 2 * a.head_dim) : "",
        a.sinks ? fmt::format(" + {}", a.num_heads) : "",
        Group(layer_of(MixerKind::kFullAttention, any_ffn).modules[ModuleKind::kAttention]));
  }
  if (c.CountLayers(MixerKind::kGatedDeltaNet) > 0) {
    const LinearAttentionConfig& g = c.linear_attention;
    out += fmt::format(
        "  GDN        = h conv + h v + 2 h n_v + conv x kernel + 2 n_v + d_v + v h = {} x {} + {} "
        "x "
        "{} + 2 x {} x {} + {} x {} + {} + {} + {} x {} = {}\n",
        h, g.conv_dim(), h, g.value_dim(), h, g.num_value_heads, g.conv_dim(), g.conv_kernel,
        2 * g.num_value_heads, g.value_head_dim, g.value_dim(), h,
        Group(layer_of(MixerKind::kGatedDeltaNet, any_ffn).modules[ModuleKind::kLinearAttention]));
  }
  for (MixerKind k : {MixerKind::kMamba2, MixerKind::kMamba1, MixerKind::kLightning}) {
    if (c.CountLayers(k) == 0) continue;
    out += fmt::format("  {:<10} = {} per layer (docs/formulas.md)\n", MixerKindName(k),
                       Group(layer_of(k, any_ffn).modules[ModuleKind::kLinearAttention]));
  }
  if (c.CountLayers(MixerKind::kMla) > 0) {
    out += fmt::format("  MLA        = {} per layer (docs/formulas.md, MLA)\n",
                       Group(layer_of(MixerKind::kMla, any_ffn).modules[ModuleKind::kAttention]));
  }
  if (c.CountLayers(FfnKind::kDense) > 0) {
    out += fmt::format("  dense MLP  = {} h f{} = {} x {} x {} = {}\n", c.MlpMatrices(),
                       c.mlp_bias ? " + biases" : "", c.MlpMatrices(), h,
                       c.dense_mlp.intermediate_size,
                       Group(CountLayerParams(c, LayerSpec{MixerKind::kNone, FfnKind::kDense}, 0)
                                 .modules[ModuleKind::kDenseMlp]));
  }
  if (c.CountLayers(FfnKind::kMoe) > 0) {
    const MoeConfig& m = c.moe;
    const LayerParams l = layer_of(MixerKind::kFullAttention, FfnKind::kMoe);
    out += fmt::format("  experts    = E x one expert = {} x {} (3 h f = 3 x {} x {}{}) = {}\n",
                       m.num_experts, Group(l.per_expert), h, m.expert_intermediate_size,
                       m.expert_bias ? " + biases" : "", Group(l.expert()));
    out += fmt::format("  router     = E h{} = {}; shared = {} x 3 h f_s{} = {}\n",
                       m.router_bias ? " + E" : "", Group(l.modules[ModuleKind::kRouter]),
                       m.num_shared_experts, m.shared_expert_gate ? " + gate h" : "",
                       Group(l.modules[ModuleKind::kSharedExperts]));
  }
  return out;
}

}  // namespace

ModelReport BuildModelReport(const ModelConfig& config, double seq_tokens,
                             std::optional<int64_t> nominal_active_params) {
  ModelReport r;
  r.config = config;
  r.params = CountParams(config);
  r.seq_tokens = seq_tokens;
  r.forward = CountForwardFlops(config, seq_tokens, AttentionMask::kCausal);
  r.conventions =
      TrainingFlopsPerToken(config, r.params, ConventionInputs{seq_tokens, nominal_active_params});
  return r;
}

std::string RenderModelText(const ModelReport& r, bool explain) {
  const ModelConfig& c = r.config;
  const ParamBreakdown& p = r.params;
  std::string out;
  out += fmt::format("Model {} ({}, model_type {})\n", c.name,
                     c.architecture.empty() ? "?" : c.architecture, c.model_type);
  out += fmt::format(
      "  {}\n  hidden {}, vocab {}, head {}{}{}\n\n", LayerSummary(c), c.hidden_size,
      Group(c.vocab_size), c.tie_word_embeddings ? "tied" : "untied",
      c.mtp_layers > 0 ? fmt::format(", {} MTP layer(s)", c.mtp_layers) : "",
      c.vision.present ? fmt::format(", vision tower of {} blocks", c.vision.depth) : "");

  out += "Parameters by module kind\n";
  Table kinds({{"module", Align::kLeft}, {"parameters"}, {"share of total (%)"}});
  const ModuleParams all = p.AllModules();
  for (ModuleKind k : AllModuleKinds()) {
    kinds.AddRow({std::string(ModuleKindName(k)), Group(all[k]), Share(all[k], p.Total())});
  }
  kinds.AddSeparator();
  kinds.AddRow({"text model (layers + embedding + head + final norm)", Group(p.text_total()),
                Share(p.text_total(), p.Total())});
  kinds.AddRow(
      {"  of which routed experts", Group(p.text_expert()), Share(p.text_expert(), p.Total())});
  kinds.AddRow(
      {"  of which non-expert", Group(p.text_non_expert()), Share(p.text_non_expert(), p.Total())});
  kinds.AddRow({"total (text + MTP + vision)", Group(p.Total()), "100.00"});
  out += kinds.Render();

  out += "\nActive parameters per token\n";
  Table active({{"what", Align::kLeft}, {"parameters"}});
  active.AddRow({"matmul only (layers with top-k experts + head)", Group(p.active_matmul)});
  active.AddRow({"with the input embedding (and final norm)", Group(p.active_with_embedding)});
  out += active.Render();
  if (explain) {
    out += "  text total = sum of layers + embedding V h + head V h + final norm h\n";
    out += fmt::format(
        "             = {} + {} + {} + {} = {}\n",
        Group(p.text_total() - all[ModuleKind::kEmbedding] - all[ModuleKind::kHead] - p.final_norm),
        Group(all[ModuleKind::kEmbedding]), Group(all[ModuleKind::kHead]), Group(p.final_norm),
        Group(p.text_total()));
    out += "  active     = sum over layers of (non-expert + top_k x one expert) + head V h\n";
    out += ExplainShapes(c);
  }

  out += "\nPer layer (consecutive identical layers grouped)\n";
  Table layers({{"layers", Align::kLeft},
                {"mixer", Align::kLeft},
                {"ffn", Align::kLeft},
                {"params/layer"},
                {"experts/layer"},
                {"non-expert/layer"},
                {"active/layer"}});
  for (size_t i = 0; i < p.layers.size();) {
    size_t j = i;
    while (j + 1 < p.layers.size() && p.layers[j + 1].spec.mixer == p.layers[i].spec.mixer &&
           p.layers[j + 1].spec.ffn == p.layers[i].spec.ffn) {
      ++j;
    }
    const LayerParams& l = p.layers[i];
    layers.AddRow({i == j ? std::to_string(i) : fmt::format("{}-{}", i, j),
                   std::string(MixerKindName(l.spec.mixer)), std::string(FfnKindName(l.spec.ffn)),
                   Group(l.total()), Group(l.expert()), Group(l.non_expert()), Group(l.active)});
    i = j + 1;
  }
  out += layers.Render();

  const ForwardFlops& f = r.forward;
  out += fmt::format("\nFLOPs per token at S = {} tokens (causal attention)\n",
                     Group(static_cast<int64_t>(r.seq_tokens)));
  Table flops({{"work", Align::kLeft}, {"forward (GFLOP)"}, {"training (GFLOP)"}});
  auto row = [&](const std::string& name, FlopCount v) {
    flops.AddRow({name, Gflop(v), Gflop(FlopCount(kTrainingToForwardRatio * v))});
  };
  row("mixer projections (GEMMs)", f.projections);
  row("core attention (QK^T, PV)", f.core_attention);
  row("Gated DeltaNet conv + state update", f.linear_state);
  row("FFN (dense, top-k + shared experts)", f.ffn);
  row("logits (h x V)", f.logits);
  flops.AddSeparator();
  row("main total", f.main());
  row("router (separate)", f.router);
  if (c.mtp_layers > 0) row("MTP blocks (separate)", f.mtp);
  if (c.vision.present) row("vision tower GEMMs per image patch (separate)", f.vision_per_patch);
  out += flops.Render();

  out += "\nTraining FLOP per token by convention\n";
  Table conv({{"convention", Align::kLeft}, {"training (GFLOP)"}});
  for (const auto& cf : r.conventions) {
    conv.AddRow({std::string(FlopConventionName(cf.convention)), Gflop(cf.training_per_token)});
  }
  out += conv.Render();
  if (explain) {
    for (const auto& cf : r.conventions) {
      out += fmt::format("  {}: {}\n", FlopConventionName(cf.convention), cf.formula);
    }
  }
  return out;
}

Json ModelJson(const ModelReport& r) {
  const ModelConfig& c = r.config;
  const ParamBreakdown& p = r.params;
  Json doc = JsonDocument("model");
  doc["model"] = c.name;
  doc["architecture"] = c.architecture;
  doc["model_type"] = c.model_type;
  doc["hidden_size"] = c.hidden_size;
  doc["vocab_size"] = c.vocab_size;
  doc["num_layers"] = c.layers.size();
  Json params;
  Json by_kind;
  const ModuleParams all = p.AllModules();
  for (ModuleKind k : AllModuleKinds()) by_kind[std::string(ModuleKindName(k))] = all[k];
  params["params_by_module"] = by_kind;
  params["params_text_total"] = p.text_total();
  params["params_text_expert"] = p.text_expert();
  params["params_text_non_expert"] = p.text_non_expert();
  params["params_mtp"] = p.mtp.total;
  params["params_vision"] = p.vision.total;
  params["params_total"] = p.Total();
  params["params_active_matmul"] = p.active_matmul;
  params["params_active_with_embedding"] = p.active_with_embedding;
  doc["params"] = params;
  Json layers = Json::array();
  for (const LayerParams& l : p.layers) {
    layers.push_back({{"index", l.index},
                      {"mixer", std::string(MixerKindName(l.spec.mixer))},
                      {"ffn", std::string(FfnKindName(l.spec.ffn))},
                      {"params", l.total()},
                      {"params_expert", l.expert()},
                      {"params_non_expert", l.non_expert()},
                      {"params_active", l.active}});
  }
  doc["layers"] = layers;
  const ForwardFlops& f = r.forward;
  Json fwd = {{"projections", JsonNumber(f.projections.count())},
              {"core_attention", JsonNumber(f.core_attention.count())},
              {"linear_state", JsonNumber(f.linear_state.count())},
              {"ffn", JsonNumber(f.ffn.count())},
              {"logits", JsonNumber(f.logits.count())},
              {"main", JsonNumber(f.main().count())},
              {"router", JsonNumber(f.router.count())},
              {"mtp", JsonNumber(f.mtp.count())},
              {"vision_per_patch", JsonNumber(f.vision_per_patch.count())}};
  Json conv = Json::array();
  for (const auto& cf : r.conventions) {
    conv.push_back({{"convention", std::string(FlopConventionName(cf.convention))},
                    {"training_flop_per_token", JsonNumber(cf.training_per_token.count())}});
  }
  doc["flops"] = {{"seq_tokens", JsonNumber(r.seq_tokens)},
                  {"attention_mask", "causal"},
                  {"forward_flop_per_token", fwd},
                  {"training_to_forward_ratio", kTrainingToForwardRatio},
                  {"training_flop_per_token_by_convention", conv}};
  return doc;
}

}  // namespace strata

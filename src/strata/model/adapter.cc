#include "strata/model/adapter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "strata/core/strings.h"

namespace strata {

std::string_view AdapterKindName(AdapterKind kind) {
  switch (kind) {
    case AdapterKind::kNone:
      return "none";
    case AdapterKind::kLora:
      return "lora";
    case AdapterKind::kQlora:
      return "qlora";
    case AdapterKind::kDora:
      return "dora";
  }
  return "none";
}

// Which linear layers all-linear reaches, per engine (docs/formulas.md, "Adapters"):
//  - PEFT: every torch.nn.Linear but the output embedding (huggingface/peft@5d602fd:
//    src/peft/tuners/tuners_utils.py, _maybe_include_all_linear_layers); ms-swift's own
//    find_all_linears for HF models keeps the router too (modelscope/ms-swift@3602360:
//    swift/utils/transformers_utils.py). In transformers 4.x's Qwen3-MoE the router `gate` is an
//    nn.Linear and the experts an nn.ModuleList of gate/up/down_proj nn.Linear
//    (huggingface/transformers@00d4b3d: src/transformers/models/qwen3_moe/modeling_qwen3_moe.py,
//    Qwen3MoeSparseMoeBlock); Qwen3-Next adds shared_expert (gate/up/down_proj) and
//    shared_expert_gate, and its Gated DeltaNet holds in_proj_qkvz, in_proj_ba and out_proj as
//    nn.Linear (conv1d is a Conv1d). transformers 5 stores the routed experts as 3-D parameters
//    and the router as a bare parameter (huggingface/transformers@01cdc60:
//    src/transformers/models/qwen3_next/modeling_qwen3_next.py, Qwen3NextExperts,
//    Qwen3NextTopKRouter), which nn.Linear matching does not reach: the rule here is 4.x's
//    unless AdapterSpec::fused_experts says 5.x's (Qwen3.5-MoE, huggingface/transformers@5fd974e:
//    src/transformers/models/qwen3_5_moe/modeling_qwen3_5_moe.py, Qwen3_5MoeExperts holds
//    gate_up_proj and down_proj as 3-D nn.Parameter, Qwen3_5MoeTopKRouter a bare weight; the
//    shared_expert MLP and shared_expert_gate are nn.Linear): then no name reaches the routed
//    experts or the router, and gate/up/down_proj reach the shared expert alone, as PEFT's
//    suffix match of nn.Linear module names does.
//  - megatron-core through ms-swift: TELinear, TELayerNormColumnParallelLinear, TEGroupedLinear
//    and nn.Linear but output_layer; the TopKRouter only with all-router
//    (modelscope/ms-swift@3602360: swift/megatron/utils/utils.py, find_all_linears,
//    get_target_modules). A routed expert's TEGroupedLinear gets grouped A and B with one GEMM
//    per local expert (modelscope/mcore-bridge@f020e47: src/mcore_bridge/tuners/lora.py,
//    LoraParallelLinear.update_layer, num_gemms=base_layer.num_gemms); the shared expert's
//    linear_fc1/fc2 one each; Qwen3-Next's Gated DeltaNet is transformers' module
//    (src/mcore_bridge/model/gpts/qwen3_next.py, Qwen3NextGatedDeltaNet), so its three
//    nn.Linear are adapted by name as under PEFT.
const std::vector<std::string>& PeftTargetNames() {
  static const std::vector<std::string> names = {"q_proj",       "k_proj",     "v_proj",
                                                 "o_proj",       "gate_proj",  "up_proj",
                                                 "down_proj",    "gate",       "shared_expert_gate",
                                                 "in_proj_qkvz", "in_proj_ba", "out_proj",
                                                 "all-linear"};
  return names;
}

const std::vector<std::string>& MegatronFusedTargetNames() {
  static const std::vector<std::string> names = {"linear_qkv", "linear_proj", "linear_fc1",
                                                 "linear_fc2"};
  return names;
}

const std::vector<std::string>& MegatronTargetNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = MegatronFusedTargetNames();
    all.emplace_back("router");
    return all;
  }();
  return names;
}

const std::vector<std::string>& AdapterTargetNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = PeftTargetNames();
    const std::vector<std::string>& megatron = MegatronTargetNames();
    all.insert(all.end(), megatron.begin(), megatron.end());
    return all;
  }();
  return names;
}

std::string_view FusedTargetOf(std::string_view name) {
  if (name == "q_proj" || name == "k_proj" || name == "v_proj") return "linear_qkv";
  if (name == "o_proj") return "linear_proj";
  if (name == "gate_proj" || name == "up_proj") return "linear_fc1";
  if (name == "down_proj") return "linear_fc2";
  if (name == "gate") return "router";
  return "";
}

std::vector<std::string> MegatronAllLinear(const ModelConfig& model) {
  std::vector<std::string> names = MegatronFusedTargetNames();
  if (model.HasLayers(MixerKind::kGatedDeltaNet)) {
    names.insert(names.end(), {"in_proj_qkvz", "in_proj_ba", "out_proj"});
  }
  return names;
}

std::string_view AdapterSiteName(AdapterSite site) {
  switch (site) {
    case AdapterSite::kLayer:
      return "layer";
    case AdapterSite::kRoutedExperts:
      return "routed experts";
    case AdapterSite::kSharedExperts:
      return "shared experts";
    case AdapterSite::kRouter:
      return "router";
    case AdapterSite::kGatedDeltaNet:
      return "Gated DeltaNet";
  }
  return "layer";
}

std::vector<AdaptedMatrix> AdaptedMatrices(const ModelConfig& model, const AdapterSpec& adapter,
                                           const LayerSpec& layer) {
  auto named = [&](std::string_view name) {
    return std::find(adapter.targets.begin(), adapter.targets.end(), name) != adapter.targets.end();
  };
  const bool all = named("all-linear");
  auto targeted = [&](std::string_view name) { return all || named(name); };
  // megatron-core's fused linears carry one adapter each (one A over the shared input, one B
  // over the concatenated outputs): named, they replace the separate ones they fuse.
  auto fused = named;
  std::vector<AdaptedMatrix> out;
  const int64_t h = model.hidden_size;
  if (layer.mixer == MixerKind::kFullAttention || layer.mixer == MixerKind::kSlidingAttention) {
    const AttentionConfig& a = model.attention;
    const int64_t q = a.num_heads * a.head_dim;
    const int64_t kv = a.num_kv_heads * a.head_dim;
    const int64_t q_out = a.output_gate ? 2 * q : q;
    if (fused("linear_qkv")) out.push_back({"linear_qkv", h, q_out + 2 * kv});
    if (fused("linear_proj")) out.push_back({"linear_proj", q, h});
    const AdaptedMatrix attention[] = {
        {"q_proj", h, q_out}, {"k_proj", h, kv}, {"v_proj", h, kv}, {"o_proj", q, h}};
    for (const AdaptedMatrix& m : attention) {
      if (targeted(m.name) && !fused(FusedTargetOf(m.name))) out.push_back(m);
    }
  }
  if (layer.mixer == MixerKind::kGatedDeltaNet) {
    // transformers' Qwen3NextGatedDeltaNet: in_proj_qkvz h -> 2 key_dim + 2 value_dim,
    // in_proj_ba h -> 2 value heads, out_proj value_dim -> h.
    const LinearAttentionConfig& g = model.linear_attention;
    const AdaptedMatrix gdn[] = {
        {"in_proj_qkvz", h, 2 * g.key_dim() + 2 * g.value_dim(), AdapterSite::kGatedDeltaNet},
        {"in_proj_ba", h, 2 * g.num_value_heads, AdapterSite::kGatedDeltaNet},
        {"out_proj", g.value_dim(), h, AdapterSite::kGatedDeltaNet}};
    for (const AdaptedMatrix& m : gdn) {
      if (targeted(m.name)) out.push_back(m);
    }
  }
  // A gated MLP of width f, held `copies` times, `per_token` of them on a token's path.
  auto mlp = [&](int64_t f, bool gated, AdapterSite site, int64_t copies, int64_t per_token) {
    if (fused("linear_fc1"))
      out.push_back({"linear_fc1", h, gated ? 2 * f : f, site, copies, per_token});
    if (fused("linear_fc2")) out.push_back({"linear_fc2", f, h, site, copies, per_token});
    // A plain MLP (GPT-2's fc1/fc2) has no gate: up and down only.
    const bool separate_fc1 = !fused("linear_fc1");
    if (gated && separate_fc1 && targeted("gate_proj"))
      out.push_back({"gate_proj", h, f, site, copies, per_token});
    if (separate_fc1 && targeted("up_proj"))
      out.push_back({"up_proj", h, f, site, copies, per_token});
    if (!fused("linear_fc2") && targeted("down_proj"))
      out.push_back({"down_proj", f, h, site, copies, per_token});
  };
  if (layer.ffn == FfnKind::kDense) {
    mlp(model.dense_mlp.intermediate_size, model.mlp == MlpKind::kGated, AdapterSite::kLayer, 1, 1);
  }
  if (layer.ffn == FfnKind::kMoe) {
    const MoeConfig& e = model.moe;
    const bool linear_experts = !adapter.fused_experts;  // 4.x: nn.Linear experts and router
    if (fused("router")) {
      out.push_back({"router", h, e.num_experts, AdapterSite::kRouter});
    } else if (linear_experts && targeted("gate")) {
      out.push_back({"gate", h, e.num_experts, AdapterSite::kRouter});
    }
    // Each routed expert is a SwiGLU with its own A and B; a token passes top_k of them.
    if (linear_experts)
      mlp(e.expert_intermediate_size, true, AdapterSite::kRoutedExperts, e.num_experts, e.top_k);
    // The shared experts are one MLP of their summed width in both megatron-core
    // (SharedExpertMLP) and transformers (shared_expert / shared_experts).
    if (e.num_shared_experts > 0) {
      mlp(e.num_shared_experts * e.shared_expert_intermediate_size, true,
          AdapterSite::kSharedExperts, 1, 1);
      // megatron-core's shared-expert gate is a bare parameter (SharedExpertMLP.gate_weight),
      // transformers' an nn.Linear h -> 1.
      if (e.shared_expert_gate && targeted("shared_expert_gate"))
        out.push_back({"shared_expert_gate", h, 1, AdapterSite::kSharedExperts});
    }
  }
  return out;
}

AdapterLayerCost AdapterCostOfLayer(const ModelConfig& model, const AdapterSpec& adapter,
                                    const LayerSpec& layer) {
  AdapterLayerCost c;
  if (!adapter.on()) return c;
  const auto r = static_cast<double>(adapter.rank);
  for (const AdaptedMatrix& m : AdaptedMatrices(model, adapter, layer)) {
    const auto d_in = static_cast<double>(m.d_in);
    const auto d_out = static_cast<double>(m.d_out);
    const auto per_token = static_cast<double>(m.copies_per_token);
    int64_t params = m.copies * adapter.rank * (m.d_in + m.d_out);
    double per_forward = 0;
    if (adapter.kind == AdapterKind::kDora) {
      params += m.copies * m.d_out;
      per_forward = static_cast<double>(m.copies) * 2 * r * d_in * d_out;
    }
    c.flop_per_forward += per_forward;
    double saved = per_token * r;
    double mask = 0;
    if (adapter.dropout > 0) {
      saved += per_token * d_in;
      mask = per_token * d_in;
    }
    const double flop = per_token * 2 * r * (d_in + d_out);
    c.params += params;
    c.saved_elements_per_token += saved;
    c.mask_bytes_per_token += mask;
    c.flop_per_token += flop;
    if (m.site == AdapterSite::kRoutedExperts) {
      c.routed_params += params;
      c.routed_saved_elements_per_token += saved;
      c.routed_mask_bytes_per_token += mask;
      c.routed_flop_per_token += flop;
    }
    if (m.site == AdapterSite::kGatedDeltaNet) {
      c.gdn_params += params;
      c.gdn_saved_elements_per_token += saved;
      c.gdn_mask_bytes_per_token += mask;
      c.gdn_flop_per_token += flop;
      c.gdn_flop_per_forward += per_forward;
    }
  }
  return c;
}

AdapterCoverage CoverageOf(const ModelConfig& model, const AdapterSpec& adapter) {
  AdapterCoverage cov;
  if (!adapter.on()) return cov;
  struct Row {
    AdaptedMatrix m;
    int64_t layers = 0;
  };
  std::vector<Row> rows;
  for (const LayerSpec& layer : model.layers) {
    const AdapterLayerCost cost = AdapterCostOfLayer(model, adapter, layer);
    cov.params += cost.params;
    cov.routed_params += cost.routed_params;
    for (const AdaptedMatrix& m : AdaptedMatrices(model, adapter, layer)) {
      auto same = [&](const Row& row) {
        return row.m.name == m.name && row.m.site == m.site && row.m.d_in == m.d_in &&
               row.m.d_out == m.d_out && row.m.copies == m.copies;
      };
      auto it = std::find_if(rows.begin(), rows.end(), same);
      if (it == rows.end()) {
        rows.push_back({m, 1});
      } else {
        ++it->layers;
      }
    }
  }
  for (const Row& row : rows) {
    const AdaptedMatrix& m = row.m;
    std::string where;
    switch (m.site) {
      case AdapterSite::kLayer:
      case AdapterSite::kGatedDeltaNet:  // the name says where
        break;
      case AdapterSite::kRoutedExperts:
        where = fmt::format(" x {} routed experts ({} a token)", m.copies, m.copies_per_token);
        break;
      case AdapterSite::kSharedExperts:
      case AdapterSite::kRouter:
        where = fmt::format(" ({})", AdapterSiteName(m.site));
        break;
    }
    cov.matrices.push_back(
        fmt::format("{} {}->{}{} on {} layers", m.name, m.d_in, m.d_out, where, row.layers));
  }
  return cov;
}

std::vector<std::string> AdapterAssumptions(const ModelConfig& model, const AdapterSpec& adapter) {
  std::vector<std::string> lines;
  if (!adapter.on()) return lines;
  const AdapterCoverage cov = CoverageOf(model, adapter);
  lines.push_back(fmt::format("adapter: {} r={}, {} params on {}", AdapterKindName(adapter.kind),
                              adapter.rank, GroupDigits(static_cast<double>(cov.params)),
                              fmt::join(cov.matrices, "; ")));
  const bool peft_all_linear = std::find(adapter.targets.begin(), adapter.targets.end(),
                                         "all-linear") != adapter.targets.end();
  if (peft_all_linear && model.HasLayers(FfnKind::kMoe) && adapter.fused_experts) {
    lines.emplace_back(
        "adapter: all-linear as PEFT reads transformers 5's modules: the routed experts are 3-D "
        "parameters and the router a bare weight, which it does not reach; the shared expert and "
        "its gate are nn.Linear");
  } else if (peft_all_linear && model.HasLayers(FfnKind::kMoe)) {
    lines.emplace_back(
        "adapter: all-linear as PEFT reads transformers 4.x's modules (routed experts an "
        "nn.ModuleList of nn.Linear, the router an nn.Linear 'gate'); transformers 5 holds the "
        "experts as 3-D parameters, which all-linear does not reach");
  }
  return lines;
}

double Nf4BitsPerWeight() {
  return 4.0 + 8.0 / static_cast<double>(kNf4Block) +
         32.0 / static_cast<double>(kNf4Block * kNf4SecondBlock);
}

}  // namespace strata

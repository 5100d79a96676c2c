#include "strata/model/adapter.h"

#include <algorithm>

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

const std::vector<std::string>& PeftTargetNames() {
  static const std::vector<std::string> names = {"q_proj",    "k_proj",  "v_proj",    "o_proj",
                                                 "gate_proj", "up_proj", "down_proj", "all-linear"};
  return names;
}

const std::vector<std::string>& MegatronFusedTargetNames() {
  static const std::vector<std::string> names = {"linear_qkv", "linear_proj", "linear_fc1",
                                                 "linear_fc2"};
  return names;
}

const std::vector<std::string>& AdapterTargetNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = PeftTargetNames();
    const std::vector<std::string>& fused = MegatronFusedTargetNames();
    all.insert(all.end(), fused.begin(), fused.end());
    return all;
  }();
  return names;
}

std::string_view FusedTargetOf(std::string_view name) {
  if (name == "q_proj" || name == "k_proj" || name == "v_proj") return "linear_qkv";
  if (name == "o_proj") return "linear_proj";
  if (name == "gate_proj" || name == "up_proj") return "linear_fc1";
  if (name == "down_proj") return "linear_fc2";
  return "";
}

std::vector<AdaptedMatrix> AdaptedMatrices(const ModelConfig& model, const AdapterSpec& adapter,
                                           const LayerSpec& layer) {
  const bool all = std::find(adapter.targets.begin(), adapter.targets.end(), "all-linear") !=
                   adapter.targets.end();
  auto targeted = [&](std::string_view name) {
    return all ||
           std::find(adapter.targets.begin(), adapter.targets.end(), name) != adapter.targets.end();
  };
  // megatron-core's fused linears carry one adapter each (one A over the shared input, one B
  // over the concatenated outputs): named, they replace the separate ones they fuse.
  auto fused = [&](std::string_view name) {
    return std::find(adapter.targets.begin(), adapter.targets.end(), name) != adapter.targets.end();
  };
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
  if (layer.ffn == FfnKind::kDense) {
    const int64_t f = model.dense_mlp.intermediate_size;
    const bool gated = model.mlp == MlpKind::kGated;
    if (fused("linear_fc1")) out.push_back({"linear_fc1", h, gated ? 2 * f : f});
    if (fused("linear_fc2")) out.push_back({"linear_fc2", f, h});
    // A plain MLP (GPT-2's fc1/fc2) has no gate: up and down only.
    const bool separate_fc1 = !fused("linear_fc1");
    if (gated && separate_fc1 && targeted("gate_proj")) out.push_back({"gate_proj", h, f});
    if (separate_fc1 && targeted("up_proj")) out.push_back({"up_proj", h, f});
    if (!fused("linear_fc2") && targeted("down_proj")) out.push_back({"down_proj", f, h});
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
    c.params += adapter.rank * (m.d_in + m.d_out);
    if (adapter.kind == AdapterKind::kDora) {
      c.params += m.d_out;
      c.flop_per_forward += 2 * r * d_in * d_out;
    }
    c.saved_elements_per_token += r;
    if (adapter.dropout > 0) {
      c.saved_elements_per_token += d_in;
      c.mask_bytes_per_token += d_in;
    }
    c.flop_per_token += 2 * r * (d_in + d_out);
  }
  return c;
}

double Nf4BitsPerWeight() {
  return 4.0 + 8.0 / static_cast<double>(kNf4Block) +
         32.0 / static_cast<double>(kNf4Block * kNf4SecondBlock);
}

}  // namespace strata

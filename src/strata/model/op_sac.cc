#include "strata/model/op_sac.h"

#include <fmt/format.h>

namespace strata {
namespace {

bool GatedMlp(const ModelConfig& model) {
  const FamilyTraits* traits = FindFamily(model.family);
  return traits == nullptr || traits->mlp == MlpKind::kGated;
}

void AddMlp(std::vector<OpSacMatmul>& out, const std::string& prefix, double h, double f,
            bool gated) {
  // torchtitan's FeedForward: w2(silu(w1(x)) * w3(x)): w1 runs first, then w3, then w2.
  out.push_back({prefix + ".w1", h, f, false, true, false});
  if (gated) out.push_back({prefix + ".w3", h, f, false, true, false});
  out.push_back({prefix + ".w2", f, h, true, true, false});
}

}  // namespace

OpSacBlock OpSacPlan(const ModelConfig& model, const LayerSpec& layer) {
  OpSacBlock block;
  const auto h = static_cast<double>(model.hidden_size);
  if (layer.mixer != MixerKind::kFullAttention && layer.mixer != MixerKind::kSlidingAttention) {
    block.unsupported = fmt::format(
        "op-level SAC is modelled for softmax-attention blocks; this model has {} blocks",
        MixerKindName(layer.mixer));
    return block;
  }
  std::vector<OpSacMatmul>& mm = block.matmuls;
  const AttentionConfig& at = model.attention;
  const auto q = static_cast<double>(at.num_heads * at.head_dim);
  const auto kv = static_cast<double>(at.num_kv_heads * at.head_dim);
  mm.push_back({"attention.wq", h, at.output_gate ? 2 * q : q, false, true, false});
  mm.push_back({"attention.wk", h, kv, false, true, false});
  mm.push_back({"attention.wv", h, kv, false, true, false});
  mm.push_back({"attention.wo", q, h, true, true, false});
  const bool gated = GatedMlp(model);
  if (layer.ffn == FfnKind::kDense) {
    AddMlp(mm, "feed_forward", h, static_cast<double>(model.dense_mlp.intermediate_size), gated);
  } else if (layer.ffn == FfnKind::kMoe) {
    const MoeConfig& moe = model.moe;
    mm.push_back({"moe.router.gate", h, static_cast<double>(moe.num_experts), false, false, false});
    if (moe.num_shared_experts > 0) {
      AddMlp(mm, "moe.shared_experts", h,
             static_cast<double>(moe.num_shared_experts * moe.shared_expert_intermediate_size),
             true);
      if (moe.shared_expert_gate) mm.push_back({"moe.shared_gate", h, 1, false, true, false});
    }
  }
  // The policy's counter: the 1st, 3rd, ... counted mm are saved, the 2nd, 4th, ... recomputed.
  int count = 0;
  for (OpSacMatmul& m : mm) {
    if (!m.counted) continue;
    ++count;
    m.saved = count % 2 == 1;
  }
  return block;
}

double OpSacRecomputedMatmulFraction(const ModelConfig& model) {
  double recomputed = 0, total = 0;
  for (const LayerSpec& layer : model.layers) {
    for (const OpSacMatmul& m : OpSacPlan(model, layer).matmuls) {
      total += m.flop_per_token();
      if (!m.saved) recomputed += m.flop_per_token();
    }
  }
  return total > 0 ? recomputed / total : 0.0;
}

}  // namespace strata

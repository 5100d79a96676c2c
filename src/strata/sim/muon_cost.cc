#include "strata/sim/muon_cost.h"

#include <algorithm>
#include <string_view>

#include "strata/model/adapter.h"
#include "strata/sim/step_constants.h"
#include "strata/sim/step_model.h"

namespace strata {
namespace {

constexpr double kNsSteps = 5;  // num_ns_steps / steps: 5 in every reference implementation

// megatron-core's row-parallel linears (the attention's output projection, the MLP's second
// layer, the Gated DeltaNet's out_proj) split their input over TP; the rest split the output.
bool RowParallel(std::string_view name) {
  return name == "o_proj" || name == "linear_proj" || name == "down_proj" || name == "linear_fc2" ||
         name == "out_proj";
}

}  // namespace

std::vector<MuonMatrix> MuonMatricesOf(const ModelConfig& c, const LayerSpec& layer) {
  using Layout = MuonMatrix::Layout;
  using Split = MuonMatrix::Split;
  std::vector<MuonMatrix> out;
  auto add = [&](int64_t d_in, int64_t d_out, Split split, Layout layout) {
    MuonMatrix& w = out.emplace_back();
    w.d_in = static_cast<double>(d_in);
    w.d_out = static_cast<double>(d_out);
    w.split = split;
    w.layout = layout;
  };
  const int64_t h = c.hidden_size;
  if (layer.mixer == MixerKind::kFullAttention || layer.mixer == MixerKind::kSlidingAttention) {
    const AttentionConfig& a = c.attention;
    const int64_t q = a.num_heads * a.head_dim;
    const int64_t kv = a.num_kv_heads * a.head_dim;
    // megatron-core: linear_qkv split into q (and the output gate's rows), k, v.
    add(h, q, Split::kOutput, Layout::kMegatronCore);
    if (a.output_gate) add(h, q, Split::kOutput, Layout::kMegatronCore);
    add(h, kv, Split::kOutput, Layout::kMegatronCore);
    add(h, kv, Split::kOutput, Layout::kMegatronCore);
    // transformers: q_proj (the gate's rows in it), k_proj, v_proj.
    add(h, a.output_gate ? 2 * q : q, Split::kOutput, Layout::kSeparateModules);
    add(h, kv, Split::kOutput, Layout::kSeparateModules);
    add(h, kv, Split::kOutput, Layout::kSeparateModules);
    add(q, h, Split::kInput, Layout::kEvery);  // linear_proj / o_proj
  }
  if (layer.mixer == MixerKind::kMla) {
    // megatron-core's MLASelfAttention and transformers' DeepseekV3Attention hold the same
    // five matrices (q_lora_rank 0: one q projection instead of the two); the down projections
    // are whole on every TP rank, the up projections column-parallel, linear_proj row-parallel.
    const MlaConfig& m = c.mla;
    const int64_t q_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if (m.q_lora_rank > 0) {
      add(h, m.q_lora_rank, Split::kNone, Layout::kEvery);                       // q_a_proj
      add(m.q_lora_rank, m.num_heads * q_head, Split::kOutput, Layout::kEvery);  // q_b_proj
    } else {
      add(h, m.num_heads * q_head, Split::kOutput, Layout::kEvery);  // q_proj
    }
    add(h, m.kv_lora_rank + m.qk_rope_head_dim, Split::kNone, Layout::kEvery);  // kv_a_proj
    add(m.kv_lora_rank, m.num_heads * (m.qk_nope_head_dim + m.v_head_dim), Split::kOutput,
        Layout::kEvery);                                                // kv_b_proj
    add(m.num_heads * m.v_head_dim, h, Split::kInput, Layout::kEvery);  // o_proj
  }
  // The Gated DeltaNet's projections and the feed-forward's linears as adapter.cc lists them:
  // megatron-core's fused linear_fc1 / linear_fc2, transformers' gate_proj, up_proj, down_proj;
  // both keep the router ("router" / "gate") and the shared-expert gate.
  auto linears = [&](Layout layout) {
    AdapterSpec spec;
    spec.targets = {"in_proj_qkvz", "in_proj_ba", "out_proj", "shared_expert_gate"};
    if (layout == Layout::kMegatronCore) {
      spec.targets.insert(spec.targets.end(), {"linear_fc1", "linear_fc2", "router"});
    } else {
      spec.targets.insert(spec.targets.end(), {"gate_proj", "up_proj", "down_proj", "gate"});
    }
    for (const AdaptedMatrix& m : AdaptedMatrices(c, spec, layer)) {
      // One copy of the layouts' shared weights: the separate list adds only its own.
      const bool shared = m.site == AdapterSite::kGatedDeltaNet || m.site == AdapterSite::kRouter ||
                          m.name == "shared_expert_gate" || m.name == "linear_fc2" ||
                          m.name == "down_proj";
      if (shared && layout == Layout::kSeparateModules) continue;
      MuonMatrix& w = out.emplace_back();
      w.d_in = static_cast<double>(m.d_in);
      w.d_out = static_cast<double>(m.d_out);
      w.copies = static_cast<double>(m.copies);
      w.expert = m.site == AdapterSite::kRoutedExperts;
      w.gated_deltanet = m.site == AdapterSite::kGatedDeltaNet;
      w.layout = shared ? Layout::kEvery : layout;
      // The router and the shared-expert gate are whole on every TP rank.
      if (m.site != AdapterSite::kRouter && m.name != "shared_expert_gate") {
        w.split = RowParallel(m.name) ? Split::kInput : Split::kOutput;
      }
    }
  };
  linears(Layout::kMegatronCore);
  linears(Layout::kSeparateModules);
  return out;
}

double NewtonSchulzFlop(double rows, double cols) {
  const double m = std::min(rows, cols);
  const double n = std::max(rows, cols);
  return kNsSteps * (4 * m * m * n + 2 * m * m * m);
}

MuonSeconds NewtonSchulzSeconds(const std::vector<MuonMatrix>& matrices, double peak,
                                const KernelEfficiency& e, bool megatron_core, int64_t tp,
                                int64_t etp, bool gdn_replicated) {
  MuonSeconds out;
  if (peak <= 0) return out;
  for (const MuonMatrix& w : matrices) {
    if (!w.UsedBy(megatron_core)) continue;
    double d_in = w.d_in, d_out = w.d_out;
    const bool whole = !megatron_core || (w.gated_deltanet && gdn_replicated);
    const auto ways = static_cast<double>(std::max<int64_t>(1, w.expert ? etp : tp));
    if (!whole && w.split == MuonMatrix::Split::kOutput) d_out /= ways;
    if (!whole && w.split == MuonMatrix::Split::kInput) d_in /= ways;
    const double m = std::min(d_in, d_out);
    const double n = std::max(d_in, d_out);
    const double flop = w.copies * NewtonSchulzFlop(m, n);
    (w.expert ? out.expert : out.non_expert) += flop / (peak * GemmEfficiency(e, m, m, n));
    (w.expert ? out.expert_flop : out.non_expert_flop) += flop;
  }
  return out;
}

}  // namespace strata

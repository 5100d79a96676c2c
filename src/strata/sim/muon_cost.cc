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
  AdapterSpec every_linear;
  every_linear.targets = {"all-linear"};
  std::vector<MuonMatrix> out;
  for (const AdaptedMatrix& m : AdaptedMatrices(c, every_linear, layer)) {
    if (m.site == AdapterSite::kRouter) continue;  // AdamW's, as the memory ledger counts it
    MuonMatrix& w = out.emplace_back();
    w.d_in = static_cast<double>(m.d_in);
    w.d_out = static_cast<double>(m.d_out);
    w.copies = static_cast<double>(m.copies);
    w.expert = m.site == AdapterSite::kRoutedExperts;
    w.gated_deltanet = m.site == AdapterSite::kGatedDeltaNet;
    // The shared-expert gate (h -> 1) is whole on every TP rank.
    if (m.name != "shared_expert_gate") {
      w.split = RowParallel(m.name) ? MuonMatrix::Split::kInput : MuonMatrix::Split::kOutput;
    }
  }
  return out;
}

double NewtonSchulzFlop(double rows, double cols) {
  const double m = std::min(rows, cols);
  const double n = std::max(rows, cols);
  return kNsSteps * (4 * m * m * n + 2 * m * m * m);
}

MuonSeconds NewtonSchulzSeconds(const std::vector<MuonMatrix>& matrices, double peak,
                                const KernelEfficiency& e, bool blockwise, int64_t tp, int64_t etp,
                                bool gdn_replicated) {
  MuonSeconds out;
  if (peak <= 0) return out;
  for (const MuonMatrix& w : matrices) {
    double d_in = w.d_in, d_out = w.d_out;
    const bool whole = !blockwise || (w.gated_deltanet && gdn_replicated);
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

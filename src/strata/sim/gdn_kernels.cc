#include "strata/sim/gdn_kernels.h"

#include <algorithm>
#include <cmath>

namespace strata {

double TriangularSolveElements(double chunk) {
  // sum_{i=1}^{n} i^2 = n (n + 1) (2n + 1) / 6 with n = chunk - 1.
  const double n = std::max(0.0, chunk - 1);
  return n * (n + 1) * (2 * n + 1) / 6;
}

LinearStateTimes LinearStateKernelTimes(const StepTables& t, double tokens, double sequences,
                                        double tp) {
  const KernelEfficiency& e = t.efficiency;
  const GdnKernels& g = e.gated_deltanet;
  const double peak = t.peak.flop_per_s() * e.sustained_clock;
  LinearStateTimes out;
  // Mamba and lightning attention: one rate, the backward twice the forward's FLOP.
  const double other = t.other_linear_flop_per_token * tokens / tp / (peak * g.other_linear_mixers);
  out.forward = Seconds::Of(other);
  out.backward = Seconds::Of(2 * other);
  if (t.gdn_layers == 0 || tokens <= 0) return out;
  const FrameworkProfile& fw = t.framework;
  // Whole on every TP rank when the framework replicates the layer (StepTables::gdn_replicated).
  const double gdn_tp = t.gdn_replicated ? 1.0 : tp;
  const double flop = t.gdn_flop_per_token * tokens / gdn_tp;
  if (fw.gdn_kernel != "torch") {
    const GdnKernelRate& r = fw.gdn_kernel == "flashqla" ? g.flashqla : g.fla;
    out.forward += Seconds::Of(flop / (peak * r.forward));
    out.backward += Seconds::Of(2 * flop / (peak * r.backward));
    return out;
  }
  // The fallback walks each sequence's chunks in order (the samples of a micro batch side by
  // side), issuing a few small kernels per chunk; the GPU finishes each before the host issues
  // the next, so the host's time is the loop's. The triangular solve runs once per layer over
  // every chunk, 63 rows each of a few kernels, copying each row's i x i block in fp32.
  const double layers = static_cast<double>(t.gdn_layers);
  const double chunk = t.gdn_chunk_tokens;
  const double per_sequence = std::ceil(tokens / std::max(sequences, 1.0) / chunk);
  const double rows = chunk - 1;
  const double host = fw.host_op_s;
  const double hbm = t.hbm.bytes_per_s() * e.hbm_efficiency;
  const double solve_bytes = g.torch_solve_bytes_per_element * TriangularSolveElements(chunk) *
                             per_sequence * sequences * t.gdn_value_heads / gdn_tp;
  out.forward +=
      Seconds::Of(layers * (per_sequence * g.torch_forward_ops_per_chunk * host +
                            rows * g.torch_solve_ops_per_row * host + solve_bytes / hbm));
  out.backward +=
      Seconds::Of(layers * (per_sequence * g.torch_backward_ops_per_chunk * host +
                            2 * rows * g.torch_solve_ops_per_row * host + 2 * solve_bytes / hbm));
  return out;
}

}  // namespace strata

#include "strata/sim/recompute_share.h"

#include <algorithm>
#include <cmath>

namespace strata {

Recompute RecomputeShare::hfu_kind() const {
  switch (granularity) {
    case RecomputeGranularity::kNone:
      return Recompute::kNone;
    case RecomputeGranularity::kSelective:
      return Recompute::kSelective;
    case RecomputeGranularity::kFull:
      return Recompute::kFull;
  }
  return Recompute::kNone;
}

RecomputeShare RecomputeShareOf(const JobSpec& spec, int64_t layers, int64_t pp, int64_t vpp) {
  RecomputeShare r;
  r.granularity = spec.recompute.granularity;
  const auto n = static_cast<double>(layers);
  if (r.granularity == RecomputeGranularity::kFull &&
      spec.recompute.method == RecomputeMethod::kBlock) {
    // block: only the first num_layers layers of each (virtual) stage are recomputed
    // (megatron/core/transformer/transformer_block.py, _checkpointed_forward).
    const double per_stage = n / static_cast<double>(pp * vpp);
    r.full_layer_fraction =
        std::min(1.0, static_cast<double>(spec.recompute.num_layers) / per_stage);
  }
  const TitanSelectiveAc& titan = spec.recompute.titan;
  if (r.granularity == RecomputeGranularity::kSelective && titan.every_n_layers > 0) {
    // torchtitan's every N-th block in full AC: floor(layers / N) of each rank's blocks re-run
    // their whole forward, as megatron-core's block method does for its first num_layers.
    const double per_rank = n / static_cast<double>(pp);
    r.granularity = RecomputeGranularity::kFull;
    r.full_layer_fraction =
        std::floor(per_rank / static_cast<double>(titan.every_n_layers)) / per_rank;
  }
  return r;
}

}  // namespace strata

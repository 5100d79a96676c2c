// What a job's recompute re-runs, read once from its recompute settings and layout: the kind
// (none, selective, full) and, under full recompute, the share of the decoder layers whose
// forward runs again. The step model prices that share's time and HFU counts its FLOP, so both
// read it from here.
#ifndef STRATA_SIM_RECOMPUTE_SHARE_H_
#define STRATA_SIM_RECOMPUTE_SHARE_H_

#include <cstdint>

#include "strata/job/job_spec.h"
#include "strata/model/flop_conventions.h"

namespace strata {

struct RecomputeShare {
  RecomputeGranularity granularity = RecomputeGranularity::kNone;
  /// Under full recompute: the decoder layers whose forward runs again, as a share of all.
  /// megatron-core's uniform method re-runs every layer (1); its block method the first
  /// num_layers of each virtual stage; torchtitan's selective "N" every N-th block of a rank.
  double full_layer_fraction = 1;

  /// The FLOP convention's recompute kind (for HFU).
  Recompute hfu_kind() const;
};

/// `layers` decoder layers over `pp` stages of `vpp` virtual stages each.
RecomputeShare RecomputeShareOf(const JobSpec& spec, int64_t layers, int64_t pp, int64_t vpp);

}  // namespace strata

#endif  // STRATA_SIM_RECOMPUTE_SHARE_H_

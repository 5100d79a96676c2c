// What a pipeline schedule keeps in flight: the micro batches whose activations each model
// chunk of a rank holds at the rank's peak (the first backward after the warm-up forwards), as
// megatron-core and torchtitan run each schedule by default. Derivations: docs/formulas.md,
// "Pipeline schedules".
#ifndef STRATA_JOB_PIPELINE_SCHEDULE_H_
#define STRATA_JOB_PIPELINE_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "strata/job/parallel_layout.h"

namespace strata {

/// Micro batches in flight on each of `rank`'s model chunks (ChunksOfRank's order; size VPP),
/// with `micro_batches` per step on each pipeline:
///   1F1B, ZB-H1:   min(PP - r, m)
///   interleaved:   the first min(2 (PP - r - 1) + (VPP - 1) g + 1, m VPP) forwards, which run
///                  g micro batches through chunk 0, then chunk 1, ...; g = PP (megatron-core),
///                  m when m < PP (PyTorch's rounds)
///   GPipe:         m on every rank
///   ZB-H1 looped:  as interleaved with one forward per hop: (PP - r - 1) + (VPP - 1) g + 1
///   ZB-V:          min(2 PP - r - 1, m) and min(r + 1, m): 2 PP chunks, 1F1B's peak, on every
///                  rank (PyTorch's ScheduleZBVZeroBubble warm-up)
///   DualPipeV:     2 PP + 1 chunk activations: min(2 PP - r, m) and min(r + 1, m) (PyTorch's
///                  ScheduleDualPipeV at its first overlapped forward and backward)
std::vector<double> MicroBatchesInFlight(const ParallelLayout& layout, int64_t micro_batches,
                                         int64_t rank);

}  // namespace strata

#endif  // STRATA_JOB_PIPELINE_SCHEDULE_H_

// The memory ledger split for callers that try many micro batches and recompute choices on one
// parallel layout (the planner): what of a stage's ledger those choices do not change is
// computed once and reused. The result is ComputeLedger's, number for number.
#ifndef STRATA_MEMORY_LEDGER_STATICS_H_
#define STRATA_MEMORY_LEDGER_STATICS_H_

#include <vector>

#include "strata/memory/ledger.h"
#include "strata/memory/sharding.h"
#include "strata/memory/static_memory.h"

namespace strata {

/// The parts of one stage's ledger that no micro batch or recompute choice changes: weights,
/// gradients, optimizer states (ComputeStaticMemory) and the mode buffers (ComputeModeMemory).
struct StageStatics {
  StaticMemory st;
  ModeMemory mode;
};
/// For every pipeline stage of the job's layout, stage 0 first. `params`: CountParams(job.model),
/// which the caller may compute once for many layouts.
std::vector<StageStatics> ComputeStageStatics(const Job& job, const ParamBreakdown& params,
                                              Detail detail = Detail::kExplained);
std::vector<StageStatics> ComputeStageStatics(const Job& job);

/// ComputeLedger on statics computed before for the same parallel layout (and the same job
/// otherwise): the planner computes them once per layout and reuses them for its micro batches
/// and recompute choices. `floor`: as for ComputeLedger in ledger.h. With kNumbersOnly the
/// ledger's items, host items, rank and phase texts are empty; its numbers are the same.
MemoryLedger ComputeLedger(const Job& job, const MemoryConstants& constants,
                           const std::vector<StageStatics>& statics, Bytes& floor,
                           Detail detail = Detail::kExplained);

}  // namespace strata

#endif  // STRATA_MEMORY_LEDGER_STATICS_H_

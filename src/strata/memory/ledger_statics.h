// The memory ledger split for callers that try many micro batches and recompute choices on one
// parallel layout (the planner): what of a stage's ledger those choices do not change is
// computed once and reused. The result is ComputeLedger's, number for number.
#ifndef STRATA_MEMORY_LEDGER_STATICS_H_
#define STRATA_MEMORY_LEDGER_STATICS_H_

#include <optional>
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

/// The statics of one parallel layout's stages, each computed (numbers only) the first time a
/// ledger needs it: a search that stops at the first stage over the card never computes the
/// others. Valid for one parallel layout of one job; Clear() before another.
class LazyStageStatics {
 public:
  /// `params`: CountParams(job.model), the same on every call.
  const StageStatics& Of(const Job& job, const ParamBreakdown& params, int64_t stage);
  /// Whether pipeline stages 1 to PP - 2 hold alike layers in the same order (the same mixer and
  /// feed-forward kinds, the same parameters): then they differ only in the micro batches in
  /// flight, min(PP - s, m), which fall with the stage, so stage 1 peaks at least as high as
  /// every later middle stage and has the same activation-free phases. Computed once per layout.
  bool MiddleStagesAlike(const Job& job, const ParamBreakdown& params);
  void Clear() {
    std::vector<std::optional<StageStatics>>().swap(stages_);
    middle_alike_.reset();
  }

 private:
  std::vector<std::optional<StageStatics>> stages_;
  std::optional<bool> middle_alike_;
};

/// Whether the job fits, for a search that needs that answer of thousands of candidates and the
/// peak of only a few: the numbers-only ledger, stage by stage (stage 0, which holds the most
/// micro batches in flight, then the last, with the output layer and logits, then the others),
/// stopping at the first stage over the card. When the middle stages are alike
/// (MiddleStagesAlike), stage 1 stands for all of them. `complete` says whether every stage was
/// computed: then the ledger and `floor` are ComputeLedger's, number for number; otherwise the job
/// does not fit, the ledger is the stage that showed it (its peak a lower bound of the job's) and
/// `floor` is raised to the largest activation-free phase of the stages computed (a lower bound of
/// ComputeLedger's floor, which is what the planner's floor test needs).
MemoryLedger ComputeLedgerUntilOver(const Job& job, const MemoryConstants& constants,
                                    const ParamBreakdown& params, LazyStageStatics& statics,
                                    Bytes& floor, bool& complete);

}  // namespace strata

#endif  // STRATA_MEMORY_LEDGER_STATICS_H_

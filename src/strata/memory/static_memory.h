// Weights, gradient buffers and optimizer states of one pipeline stage: exact counts from the
// model's parameter breakdown, sharded the way megatron-core shards them.
#ifndef STRATA_MEMORY_STATIC_MEMORY_H_
#define STRATA_MEMORY_STATIC_MEMORY_H_

#include <cstdint>
#include <vector>

#include "strata/core/strings.h"
#include "strata/job/job_validation.h"
#include "strata/memory/ledger.h"
#include "strata/model/param_count.h"

namespace strata {

/// The decoder layers (0-based indices) one pipeline stage holds, in order, without a list (the
/// planner's ledgers ask for them millions of times): `chunks` runs of `per_chunk` consecutive
/// layers, run c starting at first + c x stride.
class StageLayers {
 public:
  StageLayers(int64_t first, int64_t per_chunk, int64_t chunks, int64_t stride)
      : first_(first), per_chunk_(per_chunk), chunks_(chunks), stride_(stride) {}
  int64_t size() const { return per_chunk_ * chunks_; }
  int64_t operator[](int64_t i) const {
    return first_ + (i / per_chunk_) * stride_ + i % per_chunk_;
  }
  class Iterator {
   public:
    Iterator(const StageLayers* layers, int64_t i) : layers_(layers), i_(i) {}
    int64_t operator*() const { return (*layers_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return i_ != other.i_; }

   private:
    const StageLayers* layers_;
    int64_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

 private:
  int64_t first_, per_chunk_, chunks_, stride_;
};

/// The layers pipeline stage `stage` holds: with VPP chunks, chunk c of stage s holds layers
/// [(c x PP + s) x L/(PP x VPP), ... + L/(PP x VPP)); an uneven split gives each stage one run.
StageLayers StageLayerIndices(const Job& job, int64_t stage);

struct StaticMemory {
  std::vector<LedgerItem> weights;  // one per module kind present on the stage
  LedgerItem gradients;
  LedgerItem master_weights;  // zero when the parameters are already fp32
  LedgerItem moments;         // allocated lazily at the first optimizer step
  LedgerItem step_transient;  // fp32 copy of the bf16 gradient shard during the step
  int64_t params = 0;         // per GPU
  int64_t trainable_params = 0;
  double dense_trainable = 0;       // per GPU, sharded over DP x CP by the distributed optimizer
  double expert_trainable = 0;      // per GPU, sharded over the expert-data-parallel group
  double adamw_only_trainable = 0;  // embedding, head, norms, routers (AdamW even under Muon)
  std::vector<LedgerItem> host;     // what offload moves to CPU or NVMe (bytes there)
};

/// GEMM weights (what FP8 recipes quantise): attention, linear attention, MLPs, experts.
bool IsGemmKind(ModuleKind k);

/// The optimizer's per-parameter state besides master weights: Adam's two moments, Muon's
/// momentum (AdamW on the `adamw_only` parameters), 8-bit Adam's uint8 states with scales.
struct OptimizerStates {
  std::string name;
  double bytes_per_param = 0;
  std::string formula;
};
/// kNumbersOnly leaves the name and formula empty.
OptimizerStates OptimizerStatesOf(const OptimizerSpec& opt, int64_t trainable, double adamw_only,
                                  Detail detail = Detail::kExplained);

/// Whether the job freezes the module kind (`frozen:` names it): no gradient or optimizer state.
bool IsFrozen(const Job& job, ModuleKind kind);

/// With Detail::kNumbersOnly the items' names, formulas and notes are left empty;
/// every number is the same.
StaticMemory ComputeStaticMemory(const Job& job, const ParamBreakdown& params, int64_t stage,
                                 Detail detail = Detail::kExplained);

}  // namespace strata

#endif  // STRATA_MEMORY_STATIC_MEMORY_H_

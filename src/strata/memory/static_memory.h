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

/// The decoder layers (0-based indices) one pipeline stage holds, in order, without a list for
/// the even split (the planner's ledgers ask for them millions of times): `chunks` runs of
/// `per_chunk` consecutive layers, run c starting at first + c x stride. An uneven split (its
/// chunks of different sizes) lists its runs.
class StageLayers {
 public:
  struct Run {
    int64_t first = 0;
    int64_t count = 0;
  };
  StageLayers(int64_t first, int64_t per_chunk, int64_t chunks, int64_t stride)
      : first_(first), per_chunk_(per_chunk), chunks_(chunks), stride_(stride) {}
  explicit StageLayers(std::vector<Run> runs);
  int64_t size() const { return runs_.empty() ? per_chunk_ * chunks_ : listed_; }
  int64_t operator[](int64_t i) const {
    if (runs_.empty()) return first_ + (i / per_chunk_) * stride_ + i % per_chunk_;
    const Run& run = runs_[static_cast<size_t>(ChunkOf(i))];
    return run.first + IndexInChunk(i);
  }
  /// The stage's model chunk (0-based, in the rank's order) that holds its i-th layer, and the
  /// layer's place in that chunk.
  int64_t ChunkOf(int64_t i) const;
  int64_t IndexInChunk(int64_t i) const;
  /// Layers of each of the stage's chunks (size VPP).
  std::vector<int64_t> ChunkSizes() const;
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
  int64_t first_ = 0, per_chunk_ = 0, chunks_ = 0, stride_ = 0;
  std::vector<Run> runs_;
  int64_t listed_ = 0;  // the runs' layers
};

/// The layers pipeline stage `stage` holds: with VPP chunks, chunk c of stage s holds layers
/// [(c x PP + s) x L/(PP x VPP), ... + L/(PP x VPP)); an uneven split (job/pipeline_split.h) one
/// run per virtual stage of the rank.
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
  double adamw_only_trainable = 0;  // embedding, head, norms, router biases (AdamW under Muon)
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

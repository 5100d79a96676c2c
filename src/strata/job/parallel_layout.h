// The parallel layout of a training job, as megatron-core names its dimensions.
#ifndef STRATA_JOB_PARALLEL_LAYOUT_H_
#define STRATA_JOB_PARALLEL_LAYOUT_H_

#include <cstdint>
#include <string>

namespace strata {

/// world = tp * pp * cp * dp. Experts: ep * etp * expert_dp = tp * cp * dp (megatron-core's
/// "expert parallelism inside TP x CP x DP"), so expert_dp is derived, never given.
struct ParallelLayout {
  int64_t tp = 1;   // tensor parallel
  int64_t pp = 1;   // pipeline parallel
  int64_t vpp = 1;  // virtual pipeline stages per rank (interleaved 1F1B); 1 = none
  int64_t cp = 1;   // context parallel
  int64_t ep = 1;   // expert parallel
  int64_t etp = 1;  // expert tensor parallel
  int64_t dp = 1;   // data parallel
  bool sequence_parallel = false;
  /// Uneven pipelines (megatron-core --decoder-first-pipeline-num-layers and
  /// --decoder-last-pipeline-num-layers): layers of the first and the last stage, 0 = the even
  /// share; the stages in between split the rest evenly.
  int64_t first_stage_layers = 0;
  int64_t last_stage_layers = 0;
  /// megatron-core --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-
  /// split: the embedding (loss) counts as one layer of the first (last) stage, so that stage
  /// holds one decoder layer fewer; (layers + those) split evenly over PP.
  bool account_for_embedding = false;
  bool account_for_loss = false;
  bool uneven_pipeline() const {
    return first_stage_layers > 0 || last_stage_layers > 0 || account_for_embedding ||
           account_for_loss;
  }

  int64_t world() const { return tp * pp * cp * dp; }
  /// Ranks holding the same experts: (tp * cp * dp) / (ep * etp).
  int64_t expert_dp() const { return (tp * cp * dp) / (ep * etp); }
};

/// The one way every view names a layout: "TP1 PP1 VPP1 CP1 EP8 ETP1 DP40 (expert-DP 5), SP off".
/// Sequence parallelism is always stated, on or off. `experts`: whether the model has routed
/// experts; a dense model has no expert-data-parallel group, so none is named.
std::string LayoutHeader(const ParallelLayout& layout, bool experts);

/// " (last 11 layers)" for an uneven pipeline (megatron's first/last stage layer counts), "" for
/// even stages.
std::string StageSplitSuffix(const ParallelLayout& layout);

}  // namespace strata

#endif  // STRATA_JOB_PARALLEL_LAYOUT_H_

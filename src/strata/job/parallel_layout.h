// The parallel layout of a training job, as megatron-core names its dimensions.
#ifndef STRATA_JOB_PARALLEL_LAYOUT_H_
#define STRATA_JOB_PARALLEL_LAYOUT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata {

/// The order in which a pipeline runs its micro batches (parallel.pp_schedule): bubbles and
/// micro batches in flight differ (docs/formulas.md, "Pipeline schedules"). kDefault is what
/// megatron-core and torchtitan run unless told otherwise: 1F1B, interleaved 1F1B with VPP > 1.
enum class PipelineSchedule : uint8_t {
  kDefault,
  k1F1B,             // PipeDream-flush (megatron-core, torchtitan "1F1B")
  kInterleaved1F1B,  // Narayanan et al. 2021 (megatron-core with VPP, torchtitan "Interleaved1F1B")
  kGpipe,            // all forwards, then all backwards (torchtitan "GPipe")
  kZeroBubble,       // ZB-H1, looped over VPP chunks (Qi et al. 2023; "InterleavedZeroBubble")
  kZbv,              // ZB-V: two chunks per rank in a V (torchtitan "ZBVZeroBubble")
  kDualPipeV,        // DualPipe cut in half: two chunks per rank in a V (torchtitan "DualPipeV")
};

/// How decoder layers are dealt to the virtual stages when no counts are given: megatron-core's
/// even split (or its first/last, accounted or layout-string rules), or torchtitan's default
/// (the embedding and the output layer each count as a layer; the remainder goes to the
/// earliest stages).
enum class StageSplitRule : uint8_t { kMegatron, kTorchtitan };

/// How context-parallel ranks exchange attention's inputs (megatron-core --cp-comm-type, whose
/// default is p2p): Transformer Engine's ring attention sends each K/V chunk to the next CP
/// rank, CP - 1 steps a pass (p2p); all-gathers the whole K/V once (all_gather); or swaps the
/// sequence split for a head split with all-to-alls of Q, K, V and the output (a2a, Ulysses).
enum class CpCommType : uint8_t { kP2p, kAllGather, kA2a };

/// megatron-core's --pipeline-model-parallel-layout, parsed (job/pipeline_split.h): the
/// decoder and MTP layers of each virtual stage in model order (virtual stage k is chunk k / PP
/// of rank k % PP).
struct PipelineLayoutString {
  std::string text;
  std::vector<int64_t> decoder_layers;
  std::vector<int64_t> mtp_layers;
  int64_t virtual_stages_per_rank = 1;
};

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
  CpCommType cp_comm_type = CpCommType::kP2p;  // parallel.cp_comm_type
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
  PipelineSchedule pp_schedule = PipelineSchedule::kDefault;
  StageSplitRule stage_split = StageSplitRule::kMegatron;
  /// --pipeline-model-parallel-layout when given (never by the planner, which enumerates its
  /// own splits); shared, so that copying a layout stays cheap.
  std::shared_ptr<const PipelineLayoutString> pipeline_layout = nullptr;
  bool uneven_pipeline() const {
    return first_stage_layers > 0 || last_stage_layers > 0 || account_for_embedding ||
           account_for_loss || stage_split == StageSplitRule::kTorchtitan ||
           pipeline_layout != nullptr;
  }
  /// The schedule that runs: kDefault resolved by VPP.
  PipelineSchedule schedule() const {
    if (pp_schedule != PipelineSchedule::kDefault) return pp_schedule;
    return vpp > 1 ? PipelineSchedule::kInterleaved1F1B : PipelineSchedule::k1F1B;
  }
  /// V-shaped schedules put virtual stages r and 2 PP - 1 - r on rank r, so the first rank
  /// holds the embedding and the output layer; looped ones put stage k on rank k % PP.
  bool v_shaped() const {
    return schedule() == PipelineSchedule::kZbv || schedule() == PipelineSchedule::kDualPipeV;
  }
  /// The pipeline rank holding the output layer and the loss.
  int64_t output_stage() const { return v_shaped() ? 0 : pp - 1; }

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

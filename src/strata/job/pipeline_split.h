// Which decoder layers each pipeline rank holds, as megatron-core and torchtitan deal them out:
// an even split, megatron-core's first/last stage counts, its embedding/loss accounting, its
// --pipeline-model-parallel-layout string, or torchtitan's default split, each over PP x VPP
// virtual stages, placed on the ranks in a loop (1F1B, interleaved) or a V (ZB-V, DualPipeV).
// Formulas and the framework sources they follow: docs/formulas.md, "Uneven pipeline stages".
#ifndef STRATA_JOB_PIPELINE_SPLIT_H_
#define STRATA_JOB_PIPELINE_SPLIT_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/job/enum_names.h"
#include "strata/job/parallel_layout.h"

namespace strata {

/// Each schedule by the name of torchtitan's (PyTorch's) schedule class, lower-case.
inline constexpr EnumName<PipelineSchedule> kPipelineSchedules[] = {
    {PipelineSchedule::k1F1B, "1f1b"},   {PipelineSchedule::kInterleaved1F1B, "interleaved_1f1b"},
    {PipelineSchedule::kGpipe, "gpipe"}, {PipelineSchedule::kZeroBubble, "zero_bubble"},
    {PipelineSchedule::kZbv, "zbv"},     {PipelineSchedule::kDualPipeV, "dualpipev"}};
inline constexpr EnumName<CpCommType> kCpCommTypes[] = {
    {CpCommType::kP2p, "p2p"}, {CpCommType::kAllGather, "all_gather"}, {CpCommType::kA2a, "a2a"}};

inline constexpr EnumName<StageSplitRule> kStageSplitRules[] = {
    {StageSplitRule::kMegatron, "megatron"}, {StageSplitRule::kTorchtitan, "torchtitan"}};

/// The name of the schedule that runs (kDefault resolved by VPP): "1f1b", "zbv", ...
inline std::string_view PipelineScheduleName(const ParallelLayout& layout) {
  return NameOf(kPipelineSchedules, layout.schedule());
}

/// Parses megatron-core's layout string ("Et*3|(tt|)*29,m|L": E embedding, t decoder layer,
/// m MTP layer, L loss; '|' ends a virtual stage; "(..)*n" and "x*n" repeat; commas are
/// cosmetic). The virtual stages must be a multiple of PP.
Result<std::shared_ptr<const PipelineLayoutString>> ParsePipelineLayout(std::string_view text,
                                                                        int64_t pp);

/// Decoder layers of each virtual stage in model order (size PP x VPP; virtual stage k holds
/// the layers after those of stages 0..k-1). Assumes the split passed CheckPipelineSplit.
std::vector<int64_t> ChunkLayerCounts(const ParallelLayout& layout, int64_t layers);

/// The rank that runs virtual stage k: k mod PP (looped), or the V (k < PP: k, else 2 PP-1-k).
int64_t RankOfChunk(const ParallelLayout& layout, int64_t chunk);

/// The virtual stages of `rank`, in the order the rank's model chunks are numbered (its first
/// chunk first): k = rank + c x PP (looped), or {rank, 2 PP - 1 - rank} (V).
std::vector<int64_t> ChunksOfRank(const ParallelLayout& layout, int64_t rank);

/// Layers of each pipeline rank (size PP): the sum of its virtual stages.
std::vector<int64_t> StageLayerCounts(const ParallelLayout& layout, int64_t layers);

/// The output stage's layer count and the largest count among the other stages (0 when PP is
/// 1), as StageLayerCounts gives them; without building a vector for the planner's splits
/// (even, first/last, accounted), which it evaluates for every layout.
struct StageExtremes {
  int64_t last = 0;  // the stage holding the output layer (layout.output_stage())
  int64_t max_other = 0;
};
StageExtremes StageLayerExtremes(const ParallelLayout& layout, int64_t layers);

/// megatron-core's and torchtitan's rules for the split and the schedule: counts that add up,
/// stage counts divisible by VPP, one split rule at a time, the layout string's E/L/MTP, and the
/// schedule's chunks per rank. `mtp_layers`: the MTP layers built (0 without mtp).
Status CheckPipelineSplit(const ParallelLayout& layout, int64_t layers, int64_t mtp_layers);

}  // namespace strata

#endif  // STRATA_JOB_PIPELINE_SPLIT_H_

// What a framework's pipeline engine runs (data/frameworks.yaml, `pipeline:`): the schedules it
// has, and how many micro batches per step its looped (interleaved) schedules accept. megatron-core
// runs 1F1B and interleaved 1F1B only, and its interleaved schedule takes the micro batches in
// groups of PP; PyTorch's torch.distributed.pipelining (torchtitan) has every schedule strata
// models and splits the micro batches into rounds. `step`, `memory` and the planner refuse a
// layout its framework would refuse at launch.
#ifndef STRATA_JOB_PIPELINE_RULES_H_
#define STRATA_JOB_PIPELINE_RULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/yaml_fields.h"
#include "strata/job/parallel_layout.h"

namespace strata {

/// How many micro batches per step M a looped schedule (interleaved 1F1B, looped zero bubble)
/// accepts on PP stages.
enum class LoopedMicroBatches : uint8_t {
  kAny,              // no rule known
  kMultipleOfPp,     // megatron-core: M a multiple of PP (groups of PP micro batches)
  kMultipleOfRounds  // torch.distributed.pipelining: M a multiple of max(1, M // PP) rounds
};

/// One framework's `pipeline:` entry.
struct PipelineRule {
  std::string framework;  // whose entry ("" when no framework on the chain has one)
  std::vector<PipelineSchedule> schedules;  // empty: any
  LoopedMicroBatches looped = LoopedMicroBatches::kAny;
  std::string source;
  bool known() const { return !framework.empty(); }
};

/// Parses `pipeline:` of a framework entry: {schedules: [names] (optional: any),
/// looped_micro_batches: multiple_of_pp | multiple_of_rounds (optional: any), source}.
Result<PipelineRule> ParsePipelineRule(YamlMap& entry, const std::string& framework);

/// Whether `rule` accepts `micro_batches` per step on `pp` stages with `schedule` (true for a
/// schedule that is not looped, or with no rule).
bool LoopedScheduleAccepts(LoopedMicroBatches rule, PipelineSchedule schedule, int64_t pp,
                           int64_t micro_batches);

/// The layout's schedule under `rule`, for `micro_batches` per step: OK, or an error naming
/// parallel.pp_schedule (a schedule the framework lacks: the ones it has) or parallel.vpp (too
/// few micro batches for the looped schedule: what would work). `release` is printed with the
/// framework's name ("" for none).
Status CheckPipelineRule(const PipelineRule& rule, const std::string& release,
                         const ParallelLayout& layout, int64_t micro_batches, int64_t micro_batch);

}  // namespace strata

#endif  // STRATA_JOB_PIPELINE_RULES_H_

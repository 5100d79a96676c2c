#include "strata/job/parallel_layout.h"

#include <fmt/format.h>

#include "strata/job/pipeline_split.h"

namespace strata {

std::string StageSplitSuffix(const ParallelLayout& l) {
  if (!l.uneven_pipeline()) return "";
  if (l.pipeline_layout) return fmt::format(" (layout {})", l.pipeline_layout->text);
  if (l.stage_split == StageSplitRule::kTorchtitan) return " (torchtitan's split)";
  if (l.account_for_embedding || l.account_for_loss) {
    return fmt::format(" ({} counted as a layer)", l.account_for_embedding && l.account_for_loss
                                                       ? "embedding and loss each"
                                                   : l.account_for_embedding ? "embedding"
                                                                             : "loss");
  }
  if (l.first_stage_layers > 0 && l.last_stage_layers > 0) {
    return fmt::format(" (first {}, last {} layers)", l.first_stage_layers, l.last_stage_layers);
  }
  return l.first_stage_layers > 0 ? fmt::format(" (first {} layers)", l.first_stage_layers)
                                  : fmt::format(" (last {} layers)", l.last_stage_layers);
}

std::string LayoutHeader(const ParallelLayout& l, bool experts) {
  // The schedule is named when the job names one; otherwise it follows VPP (1F1B,
  // interleaved).
  std::string schedule;
  if (l.pp_schedule != PipelineSchedule::kDefault) {
    schedule = fmt::format(" ({})", PipelineScheduleName(l));
  }
  return fmt::format("TP{} PP{}{} VPP{}{} CP{} EP{} ETP{} DP{}{}, SP {}", l.tp, l.pp,
                     StageSplitSuffix(l), l.vpp, schedule, l.cp, l.ep, l.etp, l.dp,
                     experts ? fmt::format(" (expert-DP {})", l.expert_dp()) : "",
                     l.sequence_parallel ? "on" : "off");
}

}  // namespace strata

// The pipeline bubble of each schedule (parallel.pp_schedule), as its paper prices it, in
// micro-batch times of the slowest stage. Formulas with a worked example: docs/formulas.md,
// "Pipeline schedules".
#ifndef STRATA_SIM_PIPELINE_BUBBLE_H_
#define STRATA_SIM_PIPELINE_BUBBLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/job/parallel_layout.h"

namespace strata {

/// One micro batch's passes on the critical stage (any unit; only their ratios matter).
struct PassTimes {
  double forward = 0;
  double backward = 0;         // the whole backward: input and weight gradients, recompute
  double weight_gradient = 0;  // its weight-gradient GEMMs (W in the zero-bubble papers)
};

/// The bubble as a fraction of m micro-batch times, k / m, with k in micro-batch times
/// (F + B of the stage; p = PP, v = VPP, F, B_in = B - W and W of one micro batch):
///   1F1B, GPipe:      p - 1
///   interleaved:      (p - 1) / v                                (Narayanan et al. 2021)
///   ZB-H1 (looped):   (p - 1) / v x (F + B_in - W) / (F + B)    (Qi et al. 2023)
///   ZB-V:             (p - 1) x (F + B_in - 2 W) / 2 / (F + B)  (chunks of half a stage)
///   DualPipeV:        (p - 1) x (F&B + B - 3 W) / 2 / (F + B),  F&B = F + B  (DeepSeek-V3)
/// each clamped at 0.
double ScheduleBubbleFraction(const ParallelLayout& layout, int64_t micro_batches,
                              const PassTimes& passes);

/// The micro-batch time the bubble counts when the ranks' micro batches differ: the mean of
/// the other ranks' (`rank_micro_batch_s`, one per pipeline rank), the slowest left out once.
/// 1F1B's warm-up runs the first micro batch's forward through every rank before the slowest
/// is busy, and its cool-down the last one's backward back through them; in between the step
/// runs at the slowest rank's pace. With T_i one rank's forward + backward, the step is
///   sum_i T_i + (m - 1) max_i T_i = m max T + (p - 1) x mean_{i != slowest} T_i,
/// exact when the slowest rank is the last (the output layer's), an upper bound otherwise; equal
/// ranks give Narayanan et al.'s (p - 1) T. 0 for fewer than two ranks.
double OtherRanksMicroBatch(const std::vector<double>& rank_micro_batch_s);

/// "(p - 1) / (m v) = (4 - 1) / (8 x 2)" and its like, for --explain.
std::string ScheduleBubbleFormula(const ParallelLayout& layout, int64_t micro_batches,
                                  const PassTimes& passes);

}  // namespace strata

#endif  // STRATA_SIM_PIPELINE_BUBBLE_H_

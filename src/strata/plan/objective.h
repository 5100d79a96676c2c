// What the planner ranks by. The search keeps the GPU count and the global batch (hence the
// tokens per step) fixed, so every objective here is a monotone function of the step time and
// all of them give the same order: they differ in the figure printed beside each layout.
//   time:             the predicted step time, in seconds.
//   cost:             GPU-hours per million tokens. No price per GPU-hour is known to strata
//                     (data/gpus.yaml has none), so the cost is in GPU-hours, not money.
//   tokens-per-joule: tokens / (TDP x GPUs x step time). Every GPU is taken to draw its
//                     datasheet TDP (data/gpus.yaml tdp_watts) for the whole step: the energy is
//                     an upper bound (GPUs only, no host, network or cooling) and the tokens per
//                     joule a lower bound.
#ifndef STRATA_PLAN_OBJECTIVE_H_
#define STRATA_PLAN_OBJECTIVE_H_

#include <optional>
#include <string_view>

#include "strata/core/result.h"
#include "strata/sim/step_job.h"
#include "strata/sim/step_model.h"

namespace strata::plan {

enum class Objective { kTime, kCost, kTokensPerJoule };

/// "time", "cost", "tokens-per-joule".
std::string_view ObjectiveName(Objective objective);
/// Parses ObjectiveName's spellings; an error naming the field "--objective" otherwise.
Result<Objective> ParseObjective(std::string_view text);

/// The per-step figures every objective reads, for one evaluated layout.
struct StepEconomy {
  double tokens_per_step = 0;
  double gpu_hours_per_million_tokens = 0;  // GPUs x step time / 3600 s, per 1e6 tokens
  std::optional<double> energy_per_step_j;  // TDP x GPUs x step time; empty without a TDP
  std::optional<double> tokens_per_joule;   // tokens_per_step / energy_per_step_j
};
StepEconomy EconomyOf(const StepSetup& setup, const StepResult& step);

/// An error when the objective needs a figure the job's GPU lacks (tokens-per-joule without a
/// tdp_watts in data/gpus.yaml).
Status CheckObjective(const StepSetup& setup, Objective objective);

}  // namespace strata::plan

#endif  // STRATA_PLAN_OBJECTIVE_H_

#include "strata/plan/objective.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "strata/core/did_you_mean.h"

namespace strata::plan {

std::string_view ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kTime:
      return "time";
    case Objective::kCost:
      return "cost";
    case Objective::kTokensPerJoule:
      return "tokens-per-joule";
  }
  return "?";
}

Result<Objective> ParseObjective(std::string_view text) {
  for (Objective o : {Objective::kTime, Objective::kCost, Objective::kTokensPerJoule}) {
    if (text == ObjectiveName(o)) return o;
  }
  const std::vector<std::string> names = {"time", "cost", "tokens-per-joule"};
  Error e = InvalidInput(fmt::format("'{}' is not an objective", text));
  e.field = "--objective";
  return e.WithHint(DidYouMeanHint(text, names));
}

StepEconomy EconomyOf(const StepSetup& setup, const StepResult& step) {
  StepEconomy e;
  const double gpus = static_cast<double>(setup.job.spec.cluster.world());
  const double step_s = step.step.s();
  e.tokens_per_step = setup.job.step.tokens_per_step;
  if (e.tokens_per_step > 0) {
    e.gpu_hours_per_million_tokens = gpus * step_s / 3600.0 / (e.tokens_per_step / 1e6);
  }
  const double tdp_w = setup.job.gpu().tdp_watts;
  if (tdp_w > 0) {
    e.energy_per_step_j = tdp_w * gpus * step_s;
    if (*e.energy_per_step_j > 0) e.tokens_per_joule = e.tokens_per_step / *e.energy_per_step_j;
  }
  return e;
}

Status CheckObjective(const StepSetup& setup, Objective objective) {
  if (objective == Objective::kTokensPerJoule && !(setup.job.gpu().tdp_watts > 0)) {
    Error e = InvalidInput(
        fmt::format("--objective tokens-per-joule needs the GPU's power, and '{}' has no tdp_watts",
                    setup.job.gpu().name));
    e.field = "--objective";
    return e.WithHint(
        "give the GPU a power in the job file (cluster.gpu: {base: NAME, "
        "power_w: W}) or rank by time");
  }
  return OkStatus();
}

}  // namespace strata::plan

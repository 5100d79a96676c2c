// What the job's framework can run, for the planner: data/frameworks.yaml's `parallel:` entries
// resolved for one job (its framework and release, its model) under each sharding mode searched.
// The search then tries nothing else, and the plan says which dimensions were left out and why.
// A job that names no framework, or a framework without `parallel:` data, is searched in every
// dimension, and the scope says so.
#ifndef STRATA_PLAN_FRAMEWORK_SCOPE_H_
#define STRATA_PLAN_FRAMEWORK_SCOPE_H_

#include <string>
#include <vector>

#include "strata/job/job_spec.h"
#include "strata/plan/layout_space.h"
#include "strata/sim/framework_profile.h"

namespace strata::plan {

/// The framework's reach under one sharding mode.
struct ModeScope {
  ShardingMode mode = ShardingMode::kZero1;
  std::string engine;     // the framework whose `parallel:` entry applied ("" when none did)
  bool known = false;     // false: no data; every dimension searched
  bool runs_mode = true;  // false: the framework has no entry for this mode (not searched)
  DimensionSet dimensions;
  std::vector<std::string> excluded;  // "PP", "CP", ... in layout order
  std::vector<std::string> limits;    // dimensions searched only in part ("ETP only 1 or ...")
  std::string why;                    // the data's reason for `excluded`, with release notes
  std::string source;
};

struct FrameworkScope {
  std::string framework;         // as the job names it
  bool named = false;            // the job names its framework (framework.given)
  std::vector<ModeScope> modes;  // every mode asked for, those not run (runs_mode) included
  /// Every searched mode runs every dimension the layout rules allow.
  bool unrestricted() const;
};

/// The scope of `job`'s framework for each mode in `modes`, for a model of `model_type` (`moe`:
/// it has routed experts; a dense model's EP and ETP are 1 whatever the framework, so they are
/// not reported as left out).
FrameworkScope ResolveScope(const FrameworkCatalog& catalog, const JobSpec& job,
                            const std::string& model_type, bool moe,
                            const std::vector<ShardingMode>& modes);

/// One line per mode that leaves something out, or says why nothing was left out:
/// "hf-trainer, sharding zero3: PP, VPP, CP, EP, ETP not searched: <why>".
std::vector<std::string> ScopeLines(const FrameworkScope& scope);

}  // namespace strata::plan

#endif  // STRATA_PLAN_FRAMEWORK_SCOPE_H_

// The planner: every valid layout of a job (layout_space.h), ranked by the step-time model, with
// the memory ledger deciding which fit. The search is exhaustive in time (every layout gets a
// predicted step time) and lazy in memory: layouts are checked against the ledger in order of
// predicted time until the top K that fit are known, so a layout slower than the K-th fitting one
// is never a candidate for the top K whatever its memory. Formulas: docs/formulas.md, "Planner".
#ifndef STRATA_PLAN_PLANNER_H_
#define STRATA_PLAN_PLANNER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/core/result.h"
#include "strata/memory/ledger.h"
#include "strata/memory/memory_constants.h"
#include "strata/plan/framework_scope.h"
#include "strata/plan/layout_caveats.h"
#include "strata/plan/layout_space.h"
#include "strata/plan/objective.h"
#include "strata/sim/step_job.h"
#include "strata/sim/step_model.h"

namespace strata::plan {

struct PlanOptions {
  int64_t top_k = 5;
  /// The figure printed beside each layout; the order is the step time's whatever the objective
  /// (objective.h: the GPU count and the tokens per step are fixed in one search).
  Objective objective = Objective::kTime;
  SearchSpace space;  // world, global batch and max_tokens are filled from the job when 0
  /// Threads the fast search evaluates layouts on (0: the machine's cores). The result is the
  /// same with any number.
  unsigned threads = 0;
  /// `--fits-only`: a layout counts as fitting only when the top of the ledger's error band fits
  /// the card (verdict fits); at_risk layouts are left out like those over the card.
  bool fits_only = false;
  /// The step model's error per expert-parallel layout family (data/step_layout_error.yaml):
  /// with it, the result carries a caveat for each compared layout of a family it lists.
  const std::vector<StepLayoutError>* layout_errors = nullptr;
};

/// One evaluated layout.
struct RankedLayout {
  Candidate candidate;
  StepResult step;
  Bytes peak;  // the memory ledger's peak (from the second step on)
  Bytes capacity;
  bool memory_checked = false;
  bool fits = false;                            // the predicted peak fits the card
  MemoryVerdict verdict = MemoryVerdict::kOom;  // with the ledger's error band: fits / at risk
};

struct PlanResult {
  Objective objective = Objective::kTime;
  PruneCounts rules;                   // removals per layout rule; rules.valid = layouts ranked
  std::vector<ShardingMode> sharding;  // the modes tried for every layout
  FrameworkScope scope;                // what the job's framework runs under each of them
  bool fits_only = false;              // PlanOptions::fits_only
  int64_t unplaceable = 0;             // valid layouts the step model could not place
  int64_t memory_checked = 0;          // layouts evaluated with the ledger (fastest first)
  int64_t removed_by_memory = 0;       // of those, the ones over the card
  int64_t not_memory_checked = 0;      // slower than the K-th fitting layout: cannot enter the top
  int64_t ledger_evaluations = 0;  // of the memory-checked, those the ledger computed; the others
                                   // were over the card on their layout's floor alone
  int64_t step_evaluations = 0;    // layouts the step model evaluated in full; the others' compute
                                   // alone was slower than where the walk stopped (time_order.h)
  std::vector<RankedLayout> top;   // the K fastest that fit, fastest first
  RankedLayout current;            // the job's own layout, evaluated the same way
  std::optional<int64_t> current_rank;  // 1-based rank of the job's layout among all that fit
                                        // faster-or-equal; empty when it does not fit
  /// The winner, the runner-up and the job's own layout (when not the winner) whose layout
  /// family the validation misses (PlanOptions::layout_errors; empty without them).
  std::vector<LayoutCaveat> layout_caveats;
};

/// The job on `nodes` nodes of the same kind (the cluster file's GPU, fabric and NICs kept), its
/// layout kept except DP, which follows the world size; the job's rules run again. (`--set
/// cluster.nodes=N` would replace the cluster file by a GPU and counts, without its network.)
Status ResizeJob(ResolvedJob& job, int64_t nodes);

/// Searches every layout of `setup`'s job on its cluster: each is bounded by its compute alone
/// and evaluated in full only when that bound could place it before where the walk stops
/// (time_order.h); the result is the reference search's.
Result<PlanResult> PlanLayouts(const StepSetup& setup, const CollectiveModel& comm,
                               const MemoryConstants& memory, const PlanOptions& options);

/// The same search the simple way: every layout evaluated in full (groups placed per layout) and
/// sorted. Slow (thousands of layouts per second); kept as the reference the fast path is tested
/// against.
Result<PlanResult> PlanLayoutsReference(const StepSetup& setup, const CollectiveModel& comm,
                                        const MemoryConstants& memory, const PlanOptions& options);

/// `strata plan --sharding`: "job" (empty: the job's own mode), "megatron" (zero1), "zero3",
/// "fsdp2" or "any" (all three). Anything else is an error on field --sharding with a hint.
Result<std::vector<ShardingMode>> ParseShardingChoice(std::string_view text);

/// The job a candidate stands for: the job's spec with the candidate's layout, micro batch,
/// recompute (full: uniform, one layer per checkpoint) and sharding mode (the distributed-
/// optimizer switch follows it; options only sharded weights allow are dropped for a mode that
/// keeps whole weights); activation offload dropped where megatron-core refuses it.
void ApplyCandidate(JobSpec& spec, const Candidate& c);

/// The step inputs of a candidate: the job's options (overlap, dtypes, optimizer) with the
/// candidate's layout, micro batch and recompute.
StepLayout StepLayoutFor(const StepSetup& setup, const Candidate& c);

/// One line per step-model component whose exposed time differs between `a` and `b` by more than
/// `min_s`, largest first: "EP all-to-all: 1.10 s -> 0.20 s (-0.90 s), NVSwitch -> RoCE".
std::vector<std::string> CompareLayouts(const RankedLayout& a, const RankedLayout& b,
                                        double min_s = 0.01);

/// How layouts of equal predicted step time are ordered (by memory verdict and peak, then the
/// search order, which both paths keep), in words for the plan's output.
std::string_view TieBreakRule();

/// "TP1 PP1 VPP1 CP1 EP8 ETP1 DP40 mb1 full"; "TP2 SP PP8 ..." with sequence parallelism on.
std::string LayoutName(const Candidate& c);

}  // namespace strata::plan

#endif  // STRATA_PLAN_PLANNER_H_

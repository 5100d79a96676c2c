// The space of layouts the planner searches: every TP/PP/VPP/CP/EP/ETP/DP, micro batch and
// recompute choice for a model on a number of GPUs, enumerated exhaustively under megatron-core's
// rules. The rules are the ones job/job_validation.h enforces, reduced to integer predicates so
// that a search over millions of candidates pays no string formatting; a test checks on a grid
// that both agree layout by layout.
#ifndef STRATA_PLAN_LAYOUT_SPACE_H_
#define STRATA_PLAN_LAYOUT_SPACE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "strata/job/job_spec.h"
#include "strata/job/overlap_rules.h"
#include "strata/job/pipeline_rules.h"
#include "strata/job/query_group_split.h"
#include "strata/model/model_config.h"

namespace strata::plan {

/// The divisibility facts of a model that the layout rules need, computed once per model.
struct ModelRules {
  std::vector<int64_t> tp_divides;  // counts TP must divide: heads, MLP widths...
  int64_t query_groups = 0;         // softmax attention's KV heads (0: none), under the split
  QueryGroupSplit query_group_split = QueryGroupSplit::kTpDivides;
  int64_t num_layers = 0;
  int64_t num_experts = 0;  // 0: a dense model (EP and ETP must be 1)
  int64_t expert_ffn = 0;   // the routed experts' FFN width (ETP must divide it)
};
/// `split`: how the job's engine splits the KV heads (ResolvedJob::query_groups).
ModelRules RulesOf(const ModelConfig& model, QueryGroupSplit split);

/// One candidate: a layout plus the per-step choices that change memory and time.
struct Candidate {
  ParallelLayout layout;
  int64_t micro_batch = 1;
  RecomputeGranularity recompute = RecomputeGranularity::kNone;
  ShardingMode sharding = ShardingMode::kZero1;  // what the data-parallel ranks shard
};

/// The layout dimensions a framework can run beyond 1 (plan/framework_scope.h); all by default.
struct DimensionSet {
  bool tp = true, pp = true, vpp = true, cp = true, ep = true, etp = true;
  bool etp_one_or_tp = false;  // ETP only 1 or TP (torchtitan)
  /// How the mode's engine splits the KV heads (job/query_group_split.h).
  QueryGroupSplit query_groups = QueryGroupSplit::kMultipleOrDivisor;
  /// The micro batches per step the mode's pipeline engine accepts with VPP > 1
  /// (job/pipeline_rules.h; megatron-core: a multiple of PP).
  LoopedMicroBatches looped = LoopedMicroBatches::kAny;
  /// With the job's overlap.moe_a2a on: what the mode's framework refuses of it (full
  /// recompute, PP > 1 without VPP, the moe module recomputed; job/overlap_rules.h), and
  /// whether the job's recompute.modules holds moe (kept by selective candidates).
  MoeA2aRefusals moe_a2a_refuses{};
  bool moe_recomputed = false;
  /// Whether `l` uses only these dimensions (the others at 1).
  bool Admits(const ParallelLayout& l) const;
  bool all() const { return tp && pp && vpp && cp && ep && etp; }
  bool operator==(const DimensionSet&) const = default;
};

/// What bounds the search. A value of 0 in `fixed` leaves that dimension free.
struct SearchSpace {
  int64_t world = 0;
  int64_t global_batch = 0;       // kept fixed: micro batch x DP x accumulation = global batch
  int64_t max_tokens = 0;         // CP cuts each sequence into 2 x CP chunks
  bool cp_allowed = true;         // false with unfused attention: CP runs ring attention over flash
  bool cp_linear_allowed = true;  // false: the Gated DeltaNet layers' module has no CP
  int64_t max_vpp = 8;            // interleaving deeper than this is never worth its bubbles' cost
  std::vector<RecomputeGranularity> recompute = {
      RecomputeGranularity::kNone, RecomputeGranularity::kSelective, RecomputeGranularity::kFull};
  ParallelLayout fixed{0, 0, 0, 0, 0, 0, 0, false};  // --fix tp=1 ...
  int64_t fixed_micro_batch = 0;
  CpCommType cp_comm_type = CpCommType::kP2p;  // the job's parallel.cp_comm_type, kept
  /// The sharding modes tried for every layout (`--sharding`); the job's own mode when empty.
  std::vector<ShardingMode> sharding;
  /// What the job's framework runs under each mode of `sharding` (same positions); empty:
  /// every dimension under every mode.
  std::vector<DimensionSet> mode_dimensions;
};

/// Why a partial layout was dropped; each rule is one of job_validation.cc's checks.
enum class Rule {
  kTpDividesModel,       // heads, MLP widths divisible by TP; KV heads as the engine splits them
  kLayersDividePp,       // layers split into PP x VPP chunks, evenly or as an uneven split
  kCpSplitsSequence,     // max_tokens divisible by 2 x CP
  kCpNeedsFlash,         // CP > 1 only with flash attention (attention.kernel)
  kCpNeedsLinearCp,      // CP > 1 only where the Gated DeltaNet module runs CP (GdnPlacement)
  kExpertsDivideEp,      // experts split evenly over EP (or EP = 1 for a dense model)
  kExpertFfnDividesEtp,  // the expert FFN width divisible by ETP (or ETP = 1 for a dense model)
  kBatchDividesDp,       // global batch a multiple of micro batch x DP
  kLoopedMicroBatches,   // VPP > 1: micro batches per step as the framework's schedule takes them
  kMoeA2aOverlap,        // recompute / pipeline the framework refuses with overlap.moe_a2a
  kFrameworkCannotRun,   // a dimension the job's framework does not run (data/frameworks.yaml)
  kFixedValue,           // outside a --fix value
  kCount
};
std::string_view RuleDescription(Rule rule);

struct PruneCounts {
  std::array<int64_t, static_cast<size_t>(Rule::kCount)> by_rule{};
  int64_t valid = 0;
  int64_t& operator[](Rule r) { return by_rule[static_cast<size_t>(r)]; }
  int64_t operator[](Rule r) const { return by_rule[static_cast<size_t>(r)]; }
};

/// Megatron's uneven pipeline (--decoder-first/last-pipeline-num-layers); 0 = the even share.
/// Or megatron-core's accounted split (--account-for-embedding/loss-in-pipeline-split): the
/// embedding and/or the loss take a layer's slot of the first/last virtual stage.
struct StageSplit {
  int64_t first = 0;
  int64_t last = 0;
  bool embedding = false;
  bool loss = false;
};

/// The uneven splits the planner tries for L layers on PP stages: a lighter last stage (the other
/// stages take ceil(L / PP) or ceil(L / PP) + 1 layers each, the last the rest) and a lighter
/// first stage (the others ceil(L / PP)); only splits job validation accepts, at VPP 1.
std::vector<StageSplit> UnevenSplits(int64_t layers, int64_t pp);

/// The accounted splits (embedding and loss, embedding alone, loss alone) that job validation
/// accepts for L layers on PP stages of VPP chunks (CheckPipelineSplit: PP > 1, L plus the
/// accounted slots split evenly into PP x VPP chunks of at least 2), leaving out the one whose
/// stages equal the even split (both accounted at PP 2, VPP 1).
std::vector<StageSplit> AccountedSplits(int64_t layers, int64_t pp, int64_t vpp);

/// Calls `visit` for every valid candidate, in a fixed order (TP, PP, CP, VPP, EP, ETP, micro
/// batch, recompute, sharding ascending; sharding as listed in the space, once with an empty list).
/// A rule that fails prunes the whole subtree below it and counts one removal at the level where it
/// was checked. `visit` returns false to stop the search.
PruneCounts EnumerateLayouts(const ModelRules& rules, const SearchSpace& space,
                             const std::function<bool(const Candidate&)>& visit);

/// The positive divisors of n, ascending.
std::vector<int64_t> Divisors(int64_t n);

}  // namespace strata::plan

#endif  // STRATA_PLAN_LAYOUT_SPACE_H_

// What a framework refuses to launch with megatron-core's EP all-to-all overlap
// (overlap.moe_a2a, --overlap-moe-expert-parallel-comm): data/frameworks.yaml's
// `moe_a2a_overlap:` of the framework's entry, by release. megatron-core's TransformerConfig
// asserts against full recompute and against PP > 1 without a virtual pipeline, and later
// releases against recomputing the MoE module. `step`, `memory` and the planner refuse (skip)
// what the job's release refuses.
#ifndef STRATA_JOB_OVERLAP_RULES_H_
#define STRATA_JOB_OVERLAP_RULES_H_

#include <optional>
#include <string>

#include "strata/core/result.h"
#include "strata/core/yaml_fields.h"
#include "strata/job/job_spec.h"

namespace strata {

/// One framework's `moe_a2a_overlap:` entry: the first release that refuses each combination
/// ("" = no release does).
struct MoeA2aOverlapRule {
  std::string framework;  // whose entry ("" when no framework on the chain has one)
  std::string full_recompute_from;
  std::string pp_without_vpp_from;
  std::string moe_recompute_from;
  std::string source;
  bool known() const { return !framework.empty(); }
};

/// Parses `moe_a2a_overlap:` of a framework entry: {refuses_full_recompute_from,
/// refuses_pp_without_vpp_from, refuses_moe_recompute_from (each optional, a release), source}.
Result<MoeA2aOverlapRule> ParseMoeA2aOverlapRule(YamlMap& entry, const std::string& framework);

/// What `rule` at `release` refuses of the overlap for this layout and recompute choice, as
/// booleans the planner tests per candidate.
struct MoeA2aRefusals {
  bool full_recompute = false;
  bool pp_without_vpp = false;
  bool moe_recompute = false;
  bool operator==(const MoeA2aRefusals&) const = default;
};
MoeA2aRefusals MoeA2aRefusalsAt(const MoeA2aOverlapRule& rule, const std::string& release);

/// Whether a layout with `pp` stages and `vpp` virtual stages, recomputing `granularity` (and
/// the MoE module when `moe_recomputed`), launches with the overlap under `refusals`.
bool MoeA2aOverlapAccepts(const MoeA2aRefusals& refusals, int64_t pp, int64_t vpp,
                          RecomputeGranularity granularity, bool moe_recomputed);

/// OK, or an error naming the field to change (recompute.granularity, parallel.vpp or
/// recompute.modules) with the framework's own assertion, when `moe_a2a` is on and the rule
/// refuses the combination at `release`.
Status CheckMoeA2aOverlapRule(const MoeA2aOverlapRule& rule, const std::string& release,
                              bool moe_a2a, const ParallelLayout& layout,
                              RecomputeGranularity granularity, bool moe_recomputed);

}  // namespace strata

#endif  // STRATA_JOB_OVERLAP_RULES_H_

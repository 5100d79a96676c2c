#include "strata/job/overlap_rules.h"

#include <fmt/format.h>

#include <utility>

#include "strata/core/release.h"

namespace strata {
namespace {

// A rule applies from its release on ("" = never).
bool From(const std::string& release, const std::string& from) {
  return !from.empty() && !release.empty() && ReleaseAtLeast(release, from);
}

Error Refusal(std::string field, std::string message, std::string hint) {
  Error e = InvalidInput(std::move(message));
  e.field = std::move(field);
  e.hint = std::move(hint);
  return e;
}

}  // namespace

Result<MoeA2aOverlapRule> ParseMoeA2aOverlapRule(YamlMap& entry, const std::string& framework) {
  MoeA2aOverlapRule rule;
  rule.framework = framework;
  STRATA_ASSIGN_OR_RETURN(YamlMap m, entry.Map("moe_a2a_overlap"));
  for (auto [key, field] : {std::pair{"refuses_full_recompute_from", &rule.full_recompute_from},
                            std::pair{"refuses_pp_without_vpp_from", &rule.pp_without_vpp_from},
                            std::pair{"refuses_moe_recompute_from", &rule.moe_recompute_from}}) {
    if (m.Has(key)) {
      STRATA_ASSIGN_OR_RETURN(*field, m.String(key));
    }
  }
  STRATA_ASSIGN_OR_RETURN(rule.source, m.String("source"));
  STRATA_RETURN_IF_ERROR(m.CheckNoUnknownKeys());
  return rule;
}

MoeA2aRefusals MoeA2aRefusalsAt(const MoeA2aOverlapRule& rule, const std::string& release) {
  return {From(release, rule.full_recompute_from), From(release, rule.pp_without_vpp_from),
          From(release, rule.moe_recompute_from)};
}

bool MoeA2aOverlapAccepts(const MoeA2aRefusals& refusals, int64_t pp, int64_t vpp,
                          RecomputeGranularity granularity, bool moe_recomputed) {
  if (refusals.full_recompute && granularity == RecomputeGranularity::kFull) return false;
  if (refusals.pp_without_vpp && pp > 1 && vpp <= 1) return false;
  if (refusals.moe_recompute && granularity == RecomputeGranularity::kSelective && moe_recomputed) {
    return false;
  }
  return true;
}

Status CheckMoeA2aOverlapRule(const MoeA2aOverlapRule& rule, const std::string& release,
                              bool moe_a2a, const ParallelLayout& layout,
                              RecomputeGranularity granularity, bool moe_recomputed) {
  if (!moe_a2a || !rule.known()) return OkStatus();
  const MoeA2aRefusals r = MoeA2aRefusalsAt(rule, release);
  // The assertions are megatron-core's TransformerConfig.__post_init__ messages, verbatim.
  const std::string who = fmt::format("{} {}", rule.framework, release);
  const std::string where =
      fmt::format(" (data/frameworks.yaml, frameworks.{}.moe_a2a_overlap)", rule.framework);
  if (r.full_recompute && granularity == RecomputeGranularity::kFull) {
    return Refusal("recompute.granularity",
                   fmt::format("overlap.moe_a2a (--overlap-moe-expert-parallel-comm) cannot run "
                               "with full recompute: {} asserts \"disable full recomputation when "
                               "enabling overlap_moe_expert_parallel_comm\"{}",
                               who, where),
                   "set recompute.granularity: selective (or none), or overlap.moe_a2a: false");
  }
  if (r.pp_without_vpp && layout.pp > 1 && layout.vpp <= 1) {
    return Refusal("parallel.vpp",
                   fmt::format("overlap.moe_a2a (--overlap-moe-expert-parallel-comm) with PP {} "
                               "needs a virtual pipeline (VPP > 1): {} asserts \"If enabling EP "
                               "A2A overlap, virtual_pipeline_model_parallel_size must be "
                               "specified when pipeline_model_parallel_size > 1\" (VPP 1 is "
                               "passed as None){}",
                               layout.pp, who, where),
                   "set parallel.vpp > 1 (a divisor of each stage's layers), or overlap.moe_a2a: "
                   "false");
  }
  if (r.moe_recompute && granularity == RecomputeGranularity::kSelective && moe_recomputed) {
    return Refusal(
        "recompute.modules",
        fmt::format("overlap.moe_a2a (--overlap-moe-expert-parallel-comm) cannot run "
                    "with the moe module recomputed: {} asserts \"disable moe in "
                    "recompute_modules when enabling overlap_moe_expert_parallel_comm\"{}",
                    who, where),
        "drop moe from recompute.modules (moe_act recomputes the experts' "
        "activation only), or set overlap.moe_a2a: false");
  }
  return OkStatus();
}

}  // namespace strata

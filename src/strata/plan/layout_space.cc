#include "strata/plan/layout_space.h"

#include <algorithm>
#include <utility>

namespace strata::plan {
namespace {

bool Divides(int64_t d, int64_t n) { return d > 0 && n % d == 0; }

/// A fixed value (0 = free) admits v.
bool Admits(int64_t fixed, int64_t v) { return fixed == 0 || fixed == v; }

/// The divisors of n among `pool` (the divisors of the world size, ascending): every layout
/// dimension divides the world, so one table serves every loop.
void DivisorsFrom(const std::vector<int64_t>& pool, int64_t n, std::vector<int64_t>& out) {
  out.clear();
  for (int64_t d : pool) {
    if (d > n) break;
    if (n % d == 0) out.push_back(d);
  }
}

}  // namespace

std::vector<StageSplit> UnevenSplits(int64_t layers, int64_t pp) {
  std::vector<StageSplit> out;
  if (pp < 2 || layers < pp) return out;
  const int64_t others = pp - 1;
  const int64_t ceil_share = (layers + pp - 1) / pp;
  auto add = [&](StageSplit s) {
    for (const StageSplit& o : out) {
      if (o.first == s.first && o.last == s.last) return;
    }
    out.push_back(s);
  };
  // A lighter last stage (it also runs the output layer and the loss): the other stages take
  // ceil(L / PP) or one more layer each, the last what is left.
  for (int64_t k : {ceil_share, ceil_share + 1}) {
    const int64_t last = layers - others * k;
    if (last >= 1 && last < k) add({0, last});
  }
  // A lighter first stage (it holds the embedding): the same with the first.
  const int64_t first = layers - others * ceil_share;
  if (first >= 1 && first < ceil_share) add({first, 0});
  return out;
}

std::vector<StageSplit> AccountedSplits(int64_t layers, int64_t pp, int64_t vpp) {
  std::vector<StageSplit> out;
  if (pp < 2 || vpp < 1) return out;
  const std::pair<bool, bool> kinds[] = {{true, true}, {true, false}, {false, true}};
  for (const auto& [embedding, loss] : kinds) {
    const int64_t total = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
    // pipeline_split.cc, CheckAccounted: every chunk keeps a decoder layer besides the slot.
    if (total % pp != 0 || total / pp < 2 * vpp || (total / pp) % vpp != 0) continue;
    // Both accounted at PP 2 and VPP 1: (L + 2) / 2 - 1 = L / 2 on each stage, the even split.
    if (embedding && loss && pp == 2 && vpp == 1) continue;
    out.push_back({0, 0, embedding, loss});
  }
  return out;
}

std::string_view RuleDescription(Rule rule) {
  switch (rule) {
    case Rule::kTpDividesModel:
      return "TP must divide the heads and MLP widths, and split the KV heads as the engine does";
    case Rule::kLayersDividePp:
      return "the layers must split into PP x VPP chunks (evenly; with an uneven first or last "
             "stage at VPP 1; or, counting the embedding and/or the loss as a layer, "
             "megatron-core's "
             "account-for-embedding/loss split, evenly)";
    case Rule::kCpSplitsSequence:
      return "max_tokens must be divisible by 2 x CP";
    case Rule::kCpNeedsFlash:
      return "CP > 1 needs flash attention (ring attention); the job's attention is unfused";
    case Rule::kCpNeedsLinearCp:
      return "CP > 1 needs a Gated DeltaNet module that runs context parallelism (megatron-core's "
             "from its context_parallel_from release, data/frameworks.yaml); the job's does not";
    case Rule::kExpertsDivideEp:
      return "EP must divide the number of experts (1 for a dense model)";
    case Rule::kExpertFfnDividesEtp:
      return "ETP must divide the expert FFN width (1 for a dense model)";
    case Rule::kBatchDividesDp:
      return "the global batch must be a multiple of micro batch x DP";
    case Rule::kLoopedMicroBatches:
      return "VPP > 1 needs the micro batches per step (global batch / (micro batch x DP)) its "
             "framework's interleaved schedule takes: a multiple of PP for megatron-core, of "
             "max(1, M // PP) rounds for torch.distributed.pipelining (data/frameworks.yaml, "
             "pipeline)";
    case Rule::kMoeA2aOverlap:
      return "with overlap.moe_a2a on, megatron-core refuses full recompute and PP > 1 without "
             "VPP (from 0.14), and the moe module recomputed (from 0.17) (data/frameworks.yaml, "
             "moe_a2a_overlap)";
    case Rule::kFrameworkCannotRun:
      return "a dimension the job's framework cannot run (data/frameworks.yaml, parallel)";
    case Rule::kFixedValue:
      return "outside a value fixed with --fix";
    case Rule::kCount:
      break;
  }
  return "?";
}

bool DimensionSet::Admits(const ParallelLayout& l) const {
  return (tp || l.tp == 1) && (pp || l.pp == 1) && (vpp || l.vpp == 1) && (cp || l.cp == 1) &&
         (ep || l.ep == 1) && (etp || l.etp == 1) &&
         (!etp_one_or_tp || l.etp == 1 || l.etp == l.tp);
}

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

// Mirrors CheckLayoutAgainstModel (job/job_validation.cc): keep the two in step; the test
// LayoutSpace.AgreesWithJobValidation compares them layout by layout.
ModelRules RulesOf(const ModelConfig& model, QueryGroupSplit split) {
  ModelRules r;
  auto add = [&](int64_t count) {
    if (count > 0) r.tp_divides.push_back(count);
  };
  if (model.CountLayers(MixerKind::kFullAttention) +
          model.CountLayers(MixerKind::kSlidingAttention) >
      0) {
    add(model.attention.num_heads);
    r.query_groups = model.attention.num_kv_heads;
    r.query_group_split = split;
  }
  if (model.CountLayers(MixerKind::kMla) > 0) add(model.mla.num_heads);
  if (model.CountLayers(MixerKind::kGatedDeltaNet) > 0) {
    add(model.linear_attention.num_key_heads);
    add(model.linear_attention.num_value_heads);
  }
  if (model.CountLayers(FfnKind::kDense) > 0) add(model.dense_mlp.intermediate_size);
  r.num_layers = static_cast<int64_t>(model.layers.size());
  if (model.CountLayers(FfnKind::kMoe) > 0) {
    r.num_experts = model.moe.num_experts;
    r.expert_ffn = model.moe.expert_intermediate_size;
  }
  return r;
}

PruneCounts EnumerateLayouts(const ModelRules& rules, const SearchSpace& space,
                             const std::function<bool(const Candidate&)>& visit) {
  PruneCounts counts;
  if (space.world <= 0) return counts;
  const ParallelLayout& fix = space.fixed;
  const std::vector<int64_t> pool = Divisors(space.world);
  std::vector<int64_t> pps, cps, eps, etps, mbs;
  std::vector<std::pair<int64_t, StageSplit>> splits;     // (VPP, uneven split) per PP
  std::vector<std::pair<int64_t, StageSplit>> accounted;  // (VPP, accounted split) per PP
  const std::vector<ShardingMode> modes =
      space.sharding.empty() ? std::vector<ShardingMode>{ShardingMode::kZero1} : space.sharding;
  // What any searched mode's framework runs prunes at each dimension's level; what one mode
  // alone does not run is checked per candidate.
  DimensionSet any;
  if (!space.mode_dimensions.empty()) {
    any = DimensionSet{false, false, false, false, false, false, true, QueryGroupSplit::kTpDivides};
    for (const DimensionSet& d : space.mode_dimensions) {
      any.tp |= d.tp, any.pp |= d.pp, any.vpp |= d.vpp;
      any.cp |= d.cp, any.ep |= d.ep, any.etp |= d.etp;
      any.etp_one_or_tp &= d.etp_one_or_tp;
      if (d.query_groups == QueryGroupSplit::kMultipleOrDivisor) any.query_groups = d.query_groups;
    }
  }
  // Only modes that run less than the union need the per-candidate check.
  const bool check_modes = std::any_of(space.mode_dimensions.begin(), space.mode_dimensions.end(),
                                       [&](const DimensionSet& d) { return !(d == any); });
  // A value the user's --fix excludes, or a dimension above 1 that no mode of the framework
  // runs: counted under its rule and skipped.
  const auto admitted = [&counts](int64_t fixed, int64_t value, bool framework_runs) {
    if (!Admits(fixed, value)) {
      ++counts[Rule::kFixedValue];
      return false;
    }
    if (value > 1 && !framework_runs) {
      ++counts[Rule::kFrameworkCannotRun];
      return false;
    }
    return true;
  };
  Candidate c;
  for (int64_t tp : pool) {
    if (!admitted(fix.tp, tp, any.tp)) continue;
    if (std::any_of(rules.tp_divides.begin(), rules.tp_divides.end(),
                    [&](int64_t n) { return !Divides(tp, n); }) ||
        !TpFitsQueryGroups(
            tp, rules.query_groups,
            space.mode_dimensions.empty() ? rules.query_group_split : any.query_groups)) {
      ++counts[Rule::kTpDividesModel];
      continue;
    }
    DivisorsFrom(pool, space.world / tp, pps);
    for (int64_t pp : pps) {
      if (!admitted(fix.pp, pp, any.pp)) continue;
      // Even stages (with VPP) when PP divides the layers; megatron's uneven first/last stage
      // counts (VPP 1) either way; and megatron-core's accounted splits at every VPP whose
      // chunks divide the layers plus the embedding and/or loss slots.
      const bool even = Divides(pp, rules.num_layers);
      const std::vector<StageSplit> uneven = (fix.vpp == 0 || fix.vpp == 1)
                                                 ? UnevenSplits(rules.num_layers, pp)
                                                 : std::vector<StageSplit>{};
      accounted.clear();
      for (int64_t vpp = 1; vpp <= space.max_vpp; ++vpp) {
        for (const StageSplit& a : AccountedSplits(rules.num_layers, pp, vpp)) {
          accounted.emplace_back(vpp, a);
        }
      }
      if (!even && uneven.empty() && accounted.empty()) {
        ++counts[Rule::kLayersDividePp];
        continue;
      }
      DivisorsFrom(pool, space.world / (tp * pp), cps);
      for (int64_t cp : cps) {
        const int64_t dp = space.world / (tp * pp * cp);
        if (!Admits(fix.cp, cp) || !Admits(fix.dp, dp)) {
          ++counts[Rule::kFixedValue];
          continue;
        }
        if (cp > 1 && !any.cp) {
          ++counts[Rule::kFrameworkCannotRun];
          continue;
        }
        if (cp > 1 && !space.cp_allowed) {
          ++counts[Rule::kCpNeedsFlash];
          continue;
        }
        if (cp > 1 && !space.cp_linear_allowed) {
          ++counts[Rule::kCpNeedsLinearCp];
          continue;
        }
        if (cp > 1 && !Divides(2 * cp, space.max_tokens)) {
          ++counts[Rule::kCpSplitsSequence];
          continue;
        }
        if (!Divides(dp, space.global_batch)) {
          ++counts[Rule::kBatchDividesDp];
          continue;
        }
        DivisorsFrom(Divisors(space.global_batch / dp), space.global_batch / dp, mbs);
        const int64_t expert_space = tp * cp * dp;
        // The stage shapes: even with VPP 1..max (when PP divides the layers), then each
        // uneven split at VPP 1.
        splits.clear();
        if (even) {
          const int64_t chunks = rules.num_layers / pp;
          for (int64_t vpp = 1; vpp <= std::min(chunks, space.max_vpp); ++vpp) {
            // VPP needs PP > 1 and divides the layers of a stage; other values are not layouts.
            if (!Divides(vpp, chunks) || (vpp > 1 && pp == 1)) continue;
            if (admitted(fix.vpp, vpp, any.vpp)) splits.push_back({vpp, {}});
          }
        }
        for (const StageSplit& u : uneven) splits.push_back({1, u});
        for (const auto& [vpp, a] : accounted) {
          if (admitted(fix.vpp, vpp, any.vpp)) splits.push_back({vpp, a});
        }
        for (const auto& [vpp, split] : splits) {
          DivisorsFrom(pool, expert_space, eps);
          for (int64_t ep : eps) {
            if (!admitted(fix.ep, ep, any.ep)) continue;
            if (rules.num_experts == 0 ? ep > 1 : !Divides(ep, rules.num_experts)) {
              ++counts[Rule::kExpertsDivideEp];
              continue;
            }
            DivisorsFrom(pool, expert_space / ep, etps);
            for (int64_t etp : etps) {
              if (!Admits(fix.etp, etp)) {
                ++counts[Rule::kFixedValue];
                continue;
              }
              if (etp > 1 && (!any.etp || (any.etp_one_or_tp && etp != tp))) {
                ++counts[Rule::kFrameworkCannotRun];
                continue;
              }
              if (rules.num_experts == 0 ? etp > 1 : !Divides(etp, rules.expert_ffn)) {
                ++counts[Rule::kExpertFfnDividesEtp];
                continue;
              }
              for (int64_t mb : mbs) {
                if (!Admits(space.fixed_micro_batch, mb)) {
                  ++counts[Rule::kFixedValue];
                  continue;
                }
                for (RecomputeGranularity rc : space.recompute) {
                  for (size_t m = 0; m < modes.size(); ++m) {
                    const ShardingMode sh = modes[m];
                    if (check_modes && m < space.mode_dimensions.size() &&
                        (!space.mode_dimensions[m].Admits(
                             ParallelLayout{tp, pp, vpp, cp, ep, etp, dp, false}) ||
                         !TpFitsQueryGroups(tp, rules.query_groups,
                                            space.mode_dimensions[m].query_groups))) {
                      ++counts[Rule::kFrameworkCannotRun];
                      continue;
                    }
                    if (vpp > 1 && m < space.mode_dimensions.size() &&
                        !LoopedScheduleAccepts(space.mode_dimensions[m].looped,
                                               PipelineSchedule::kInterleaved1F1B, pp,
                                               space.global_batch / (mb * dp))) {
                      ++counts[Rule::kLoopedMicroBatches];
                      continue;
                    }
                    if (m < space.mode_dimensions.size() &&
                        !MoeA2aOverlapAccepts(space.mode_dimensions[m].moe_a2a_refuses, pp, vpp, rc,
                                              space.mode_dimensions[m].moe_recomputed)) {
                      ++counts[Rule::kMoeA2aOverlap];
                      continue;
                    }
                    // Megatron-core requires sequence parallelism with TP > 1 and EP > 1; the
                    // planner turns it on whenever TP > 1, where it only saves memory.
                    c.layout = ParallelLayout{tp, pp, vpp, cp, ep, etp, dp, tp > 1};
                    c.layout.first_stage_layers = split.first;
                    c.layout.last_stage_layers = split.last;
                    c.layout.account_for_embedding = split.embedding;
                    c.layout.account_for_loss = split.loss;
                    c.layout.cp_comm_type = space.cp_comm_type;
                    c.micro_batch = mb;
                    c.recompute = rc;
                    c.sharding = sh;
                    ++counts.valid;
                    if (!visit(c)) return counts;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return counts;
}

}  // namespace strata::plan

#include "strata/plan/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace strata::plan {
namespace {

struct Timed {
  double step_s;
  Candidate candidate;
};

/// The group whose link a communication component of the step model runs on.
std::optional<GroupKind> GroupOf(StepPart part) {
  switch (part) {
    case StepPart::kTp:
      return GroupKind::kTp;
    case StepPart::kCp:
      return GroupKind::kCp;
    case StepPart::kEp:
      return GroupKind::kEp;
    case StepPart::kPp:
      return GroupKind::kPp;
    case StepPart::kDpGrad:
    case StepPart::kDpParam:
      return GroupKind::kDp;
    case StepPart::kExpertDpGrad:
    case StepPart::kExpertDpParam:
      return GroupKind::kExpertDp;
    default:
      return std::nullopt;
  }
}

/// The bandwidth-map level a group's traffic runs on in this layout, "" when it has none.
std::string LevelOf(const StepResult& step, GroupKind kind) {
  for (const PricedTraffic& t : step.traffic) {
    if (t.item.group == kind || (kind == GroupKind::kDp && t.item.group == GroupKind::kDpCp)) {
      return t.cost.level;
    }
  }
  return "";
}

Candidate CurrentCandidate(const StepSetup& setup) {
  Candidate c;
  c.layout = setup.job.spec.layout;
  c.micro_batch = setup.job.spec.micro_batch;
  c.recompute = setup.job.spec.recompute.granularity;
  return c;
}

/// Fills the memory fields of `r` from the ledger of the job with r's layout.
void CheckMemory(const StepSetup& setup, const MemoryConstants& memory, RankedLayout& r) {
  Job job = setup.job;
  job.spec.layout = r.candidate.layout;
  job.spec.micro_batch = r.candidate.micro_batch;
  job.spec.recompute.granularity = r.candidate.recompute;
  if (r.candidate.recompute == RecomputeGranularity::kFull) {
    job.spec.recompute.num_layers = 1;  // uniform, one layer per checkpoint: the least memory
    job.spec.recompute.method = RecomputeMethod::kUniform;
  }
  if (r.candidate.layout.pp > 1 || r.candidate.recompute != RecomputeGranularity::kNone) {
    job.spec.activation_offload = {};  // as StepLayoutFor: no offload where megatron refuses it
  }
  if (!RederiveJob(job).ok()) {  // the enumeration's rules are the validation's: not expected
    r.memory_checked = true;
    r.fits = false;
    return;
  }
  const MemoryLedger ledger = ComputeLedger(job, memory);
  r.peak = ledger.Peak();
  r.capacity = ledger.capacity;
  r.fits = ledger.fits;
  r.verdict = ledger.verdict;
  r.memory_checked = true;
}

}  // namespace

std::string LayoutName(const Candidate& c) {
  const ParallelLayout& l = c.layout;
  return fmt::format("TP{} PP{} VPP{} CP{} EP{} ETP{} DP{} mb{} {}", l.tp, l.pp, l.vpp, l.cp, l.ep,
                     l.etp, l.dp, c.micro_batch, RecomputeGranularityName(c.recompute));
}

StepLayout StepLayoutFor(const StepSetup& setup, const Candidate& c) {
  StepLayout s = setup.layout;
  s.layout = c.layout;
  s.micro_batch = c.micro_batch;
  s.micro_batches = setup.job.spec.global_batch / (c.micro_batch * c.layout.dp);
  s.recompute = c.recompute;
  s.recompute_layer_fraction = 1;
  // megatron-core offloads activations only at PP 1 without recompute; elsewhere none.
  if (c.layout.pp > 1 || c.recompute != RecomputeGranularity::kNone) {
    s.offload_activation_layers = 0;
    s.offload_activation_bytes_per_token = 0;
  }
  return s;
}

Status ResizeJob(ResolvedJob& job, int64_t nodes) {
  job.spec.cluster.nodes = nodes;
  job.cluster.nodes = nodes;
  job.spec.layout.dp = 0;
  return RederiveJob(job);
}

Result<PlanResult> PlanLayouts(const StepSetup& setup, const CollectiveModel& comm,
                               const MemoryConstants& memory, const PlanOptions& options) {
  const JobSpec& spec = setup.job.spec;
  SearchSpace space = options.space;
  if (space.world == 0) space.world = spec.cluster.world();
  if (space.global_batch == 0) space.global_batch = spec.global_batch;
  if (space.max_tokens == 0) space.max_tokens = static_cast<int64_t>(spec.sequence.max_tokens);

  STRATA_RETURN_IF_ERROR(CheckObjective(setup, options.objective));
  PlanResult plan;
  plan.objective = options.objective;
  std::vector<Timed> timed;
  plan.rules = EnumerateLayouts(RulesOf(setup.job.model), space, [&](const Candidate& c) {
    auto step = EvaluateStep(setup.tables, StepLayoutFor(setup, c), comm);
    if (!step.ok()) {
      ++plan.unplaceable;
    } else {
      timed.push_back({step->step.s(), c});
    }
    return true;
  });
  std::sort(timed.begin(), timed.end(),
            [](const Timed& a, const Timed& b) { return a.step_s < b.step_s; });

  // The job's own layout keeps all of its options (recompute method and layer count included).
  plan.current.candidate = CurrentCandidate(setup);
  STRATA_ASSIGN_OR_RETURN(plan.current.step, EvaluateStep(setup.tables, setup.layout, comm));
  const MemoryLedger own = ComputeLedger(setup.job, memory);
  plan.current.peak = own.Peak();
  plan.current.capacity = own.capacity;
  plan.current.fits = own.fits;
  plan.current.verdict = own.verdict;
  plan.current.memory_checked = true;
  const double current_s = plan.current.step.step.s();

  // Walk fastest first until the top K that fit are known and, when the job's own layout fits,
  // every faster layout has been checked (so its rank is exact).
  int64_t faster_fitting = 0;
  size_t i = 0;
  for (; i < timed.size(); ++i) {
    const bool top_full = static_cast<int64_t>(plan.top.size()) >= options.top_k;
    const bool past_current = !plan.current.fits || timed[i].step_s >= current_s;
    if (top_full && past_current) break;
    RankedLayout r;
    r.candidate = timed[i].candidate;
    CheckMemory(setup, memory, r);
    ++plan.memory_checked;
    if (!r.fits) {
      ++plan.removed_by_memory;
      continue;
    }
    if (timed[i].step_s < current_s) ++faster_fitting;
    if (!top_full) {
      STRATA_ASSIGN_OR_RETURN(r.step,
                              EvaluateStep(setup.tables, StepLayoutFor(setup, r.candidate), comm));
      plan.top.push_back(std::move(r));
    }
  }
  plan.not_memory_checked = static_cast<int64_t>(timed.size() - i);
  if (plan.current.fits) plan.current_rank = faster_fitting + 1;
  return plan;
}

std::vector<std::string> CompareLayouts(const RankedLayout& a, const RankedLayout& b,
                                        double min_s) {
  struct Diff {
    double delta_s;
    std::string line;
  };
  std::vector<Diff> diffs;
  for (size_t p = 0; p < kStepPartCount; ++p) {
    const auto part = static_cast<StepPart>(p);
    const double ta = a.step[part].exposed.s();
    const double tb = b.step[part].exposed.s();
    if (std::fabs(tb - ta) <= min_s) continue;
    std::string line =
        fmt::format("{}: {:.2f} s -> {:.2f} s ({:+.2f} s)", StepPartName(part), ta, tb, tb - ta);
    if (auto group = GroupOf(part)) {
      const std::string la = LevelOf(a.step, *group);
      const std::string lb = LevelOf(b.step, *group);
      if (la != lb) {
        line += fmt::format(", {} -> {}", la.empty() ? "no traffic" : la,
                            lb.empty() ? "no traffic" : lb);
      } else if (!la.empty()) {
        line += fmt::format(", on {}", la);
      }
    }
    diffs.push_back({tb - ta, std::move(line)});
  }
  std::sort(diffs.begin(), diffs.end(), [](const Diff& x, const Diff& y) {
    return std::fabs(x.delta_s) > std::fabs(y.delta_s);
  });
  std::vector<std::string> lines;
  for (Diff& d : diffs) lines.push_back(std::move(d.line));
  return lines;
}

}  // namespace strata::plan

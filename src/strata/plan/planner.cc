#include "strata/plan/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "strata/core/did_you_mean.h"
#include "strata/core/parallel.h"
#include "strata/memory/ledger_statics.h"
#include "strata/plan/time_order.h"

namespace strata::plan {
namespace {

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
  c.sharding = setup.job.spec.sharding.mode;
  return c;
}

/// A job's sharding section with another mode: the distributed-optimizer switch follows it, and
/// what only sharded weights allow (reshard-after-forward off, parameter offload) is dropped for
/// a mode that keeps whole weights.
void UseShardingMode(ShardingSpec& sh, bool& distributed_optimizer, ShardingMode mode) {
  sh.mode = mode;
  distributed_optimizer = mode != ShardingMode::kNone;
  if (!sh.shards_weights()) {
    sh.reshard_after_forward = true;
    sh.offload_param = OffloadTarget::kNone;
  }
  if (mode == ShardingMode::kFsdp2) sh.offload_optimizer = OffloadTarget::kNone;
  if (sh.offload_optimizer == OffloadTarget::kNvme && mode != ShardingMode::kZero3) {
    sh.offload_optimizer = OffloadTarget::kNone;
  }
  if (mode == ShardingMode::kNone) sh.replicate = 1;
}

/// What the fast path keeps per parallel layout: the ledger's statics (the same for every micro
/// batch and recompute choice) and the activation-free floor, once a ledger of it was computed.
struct LayoutMemory {
  bool known = false;
  std::vector<StageStatics> statics;
  Bytes floor;
};

/// The memory fields of a RankedLayout, apart: the parallel check returns thousands of these, and
/// a whole RankedLayout (its step result included) is a kilobyte of fresh pages each.
struct MemoryFields {
  Bytes peak;
  Bytes capacity;
  bool fits = false;
  MemoryVerdict verdict = MemoryVerdict::kOom;
};

MemoryFields MemoryFieldsOf(const MemoryLedger& ledger) {
  return {ledger.Peak(), ledger.capacity, ledger.fits, ledger.verdict};
}

void SetMemory(RankedLayout& r, const MemoryFields& m) {
  r.peak = m.peak;
  r.capacity = m.capacity;
  r.fits = m.fits;
  r.verdict = m.verdict;
  r.memory_checked = true;
}

/// Fills the memory fields of `r` from the ledger of the job with r's layout.
void CheckMemory(const StepSetup& setup, const MemoryConstants& memory, RankedLayout& r) {
  Job job = setup.job;
  ApplyCandidate(job.spec, r.candidate);
  // The enumeration's rules are the validation's: a failure is not expected; it does not fit.
  SetMemory(r, RederiveJob(job).ok() ? MemoryFieldsOf(ComputeLedger(job, memory)) : MemoryFields{});
}

}  // namespace

Result<std::vector<ShardingMode>> ParseShardingChoice(std::string_view text) {
  static const std::vector<std::string> kChoices = {"job", "megatron", "zero3", "fsdp2", "any"};
  if (text == "job") return std::vector<ShardingMode>{};
  if (text == "megatron") return std::vector<ShardingMode>{ShardingMode::kZero1};
  if (text == "zero3") return std::vector<ShardingMode>{ShardingMode::kZero3};
  if (text == "fsdp2") return std::vector<ShardingMode>{ShardingMode::kFsdp2};
  if (text == "any") {
    return std::vector<ShardingMode>{ShardingMode::kZero1, ShardingMode::kZero3,
                                     ShardingMode::kFsdp2};
  }
  Error e = InvalidInput(
      fmt::format("--sharding '{}': expected job, megatron (zero1), zero3, fsdp2 or any", text));
  e.field = "--sharding";
  return e.WithHint(DidYouMeanHint(std::string(text), kChoices));
}

void ApplyCandidate(JobSpec& spec, const Candidate& c) {
  // Every field written here is put back by RestoreCandidateFields.
  spec.layout = c.layout;
  spec.micro_batch = c.micro_batch;
  spec.recompute.granularity = c.recompute;
  UseShardingMode(spec.sharding, spec.optimizer.distributed, c.sharding);
  if (c.recompute == RecomputeGranularity::kFull) {
    spec.recompute.num_layers = 1;  // uniform, one layer per checkpoint: the least memory
    spec.recompute.method = RecomputeMethod::kUniform;
  }
  if (c.layout.pp > 1 || c.recompute != RecomputeGranularity::kNone) {
    spec.activation_offload = {};  // as StepLayoutFor: no offload where megatron refuses it
  }
}

std::string LayoutName(const Candidate& c) {
  const ParallelLayout& l = c.layout;
  // The sharding mode is named when it is not megatron's distributed optimizer (zero1).
  return fmt::format(
      "TP{} PP{}{} VPP{} CP{} EP{} ETP{} DP{} mb{} {}{}", l.tp, l.pp, StageSplitSuffix(l), l.vpp,
      l.cp, l.ep, l.etp, l.dp, c.micro_batch, RecomputeGranularityName(c.recompute),
      c.sharding == ShardingMode::kZero1 ? "" : fmt::format(" {}", ShardingModeName(c.sharding)));
}

StepLayout StepLayoutFor(const StepSetup& setup, const Candidate& c) {
  StepLayout s = setup.layout;
  s.layout = c.layout;
  s.micro_batch = c.micro_batch;
  s.micro_batches = setup.job.spec.global_batch / (c.micro_batch * c.layout.dp);
  s.recompute = c.recompute;
  s.recompute_layer_fraction = 1;
  UseShardingMode(s.sharding, s.distributed_optimizer, c.sharding);
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

namespace {

SearchSpace SpaceOf(const StepSetup& setup, const PlanOptions& options) {
  const JobSpec& spec = setup.job.spec;
  SearchSpace space = options.space;
  if (space.world == 0) space.world = spec.cluster.world();
  if (space.global_batch == 0) space.global_batch = spec.global_batch;
  if (space.max_tokens == 0) space.max_tokens = static_cast<int64_t>(spec.sequence.max_tokens);
  if (space.sharding.empty()) space.sharding = {spec.sharding.mode};
  return space;
}

/// What the ledger's statics and floor depend on: the parallel layout (its split included) and
/// the sharding mode, not the micro batch or the recompute choice.
using MemoryKey = std::array<int64_t, 12>;
MemoryKey MemoryKeyOf(const Candidate& c) {
  const ParallelLayout& l = c.layout;
  return {l.tp,
          l.pp,
          l.vpp,
          l.cp,
          l.ep,
          l.etp,
          l.dp,
          l.first_stage_layers,
          l.last_stage_layers,
          l.account_for_embedding ? 1 : 0,
          l.account_for_loss ? 1 : 0,
          static_cast<int64_t>(c.sharding)};
}

/// Puts back into `spec` every field ApplyCandidate may change, from `base`: followed by
/// ApplyCandidate, the same job as copying `base` whole, without copying its strings and a custom
/// GPU's catalog entry (with its sources) for each of the thousands of layouts checked.
void RestoreCandidateFields(JobSpec& spec, const JobSpec& base) {
  spec.layout = base.layout;
  spec.micro_batch = base.micro_batch;
  spec.recompute = base.recompute;
  spec.sharding = base.sharding;
  spec.optimizer.distributed = base.optimizer.distributed;
  spec.activation_offload = base.activation_offload;
}

/// The ledger check of the fast path: the ledger's numbers alone (no text), on one job reused
/// for every candidate (its spec reset from the job's), with the parameter counts and each
/// layout's statics computed once. A layout whose activation-free floor is over the card does
/// not fit with any micro batch or recompute choice, so its other candidates skip the ledger.
/// The result is CheckMemory's, number for number (planner tests compare the two paths).
class FloorCheckedMemory {
 public:
  FloorCheckedMemory(const StepSetup& setup, const MemoryConstants& memory)
      : setup_(setup),
        memory_(memory),
        capacity_(setup.job.gpu.memory),
        job_(setup.job),
        params_(CountParams(setup.job.model)) {}

  MemoryFields Check(const Candidate& c) {
    LayoutMemory& layout = layouts_[MemoryKeyOf(c)];
    if (layout.known && layout.floor > capacity_) return {};  // over the card: OOM
    RestoreCandidateFields(job_.spec, setup_.job.spec);
    ApplyCandidate(job_.spec, c);
    if (!RederiveJob(job_).ok()) return {};  // not expected, as in CheckMemory
    if (layout.statics.empty()) {
      layout.statics = ComputeStageStatics(job_, params_, Detail::kNumbersOnly);
    }
    const MemoryFields m = MemoryFieldsOf(
        ComputeLedger(job_, memory_, layout.statics, layout.floor, Detail::kNumbersOnly));
    layout.known = true;
    ++ledgers_;
    return m;
  }
  void operator()(RankedLayout& r) { SetMemory(r, Check(r.candidate)); }
  int64_t LedgerCount() const { return ledgers_; }
  /// Drops the statics of `c`'s layout and keeps its floor: once a layout's candidates are
  /// checked, the next layout reuses the freed memory instead of touching fresh pages (thousands
  /// of layouts' statics cost more in page faults than in arithmetic). A later candidate of the
  /// layout recomputes them.
  void ReleaseStatics(const Candidate& c) {
    auto it = layouts_.find(MemoryKeyOf(c));
    if (it != layouts_.end()) std::vector<StageStatics>().swap(it->second.statics);
  }

  /// Takes over what `other` learnt (layouts checked on another thread, none of them known here)
  /// and its ledger count.
  void Absorb(FloorCheckedMemory& other) {
    layouts_.merge(other.layouts_);
    ledgers_ += other.ledgers_;
  }

 private:
  const StepSetup& setup_;
  const MemoryConstants& memory_;
  Bytes capacity_;
  Job job_;  // scratch: the candidate's job
  ParamBreakdown params_;
  std::map<MemoryKey, LayoutMemory> layouts_;
  int64_t ledgers_ = 0;
};

/// The memory of the `n` layouts `candidate_at(i)` gives (the walk's first layouts, in walk
/// order), checked on `threads` threads. Each parallel layout's candidates go to one thread, in
/// walk order, so every floor the serial walk would reuse is reused the same way: the results and
/// the ledger count do not depend on the threads. What the threads learnt goes into `check`
/// afterwards.
template <class CandidateAt>
std::vector<MemoryFields> CheckMemoryInParallel(const StepSetup& setup,
                                                const MemoryConstants& memory, size_t n,
                                                CandidateAt candidate_at, unsigned threads,
                                                FloorCheckedMemory& check) {
  std::vector<MemoryFields> out(n);
  // Positions grouped by parallel layout, each group in walk order. The keys are narrowed to
  // 32 bits (every field is a layout dimension, a layer count or a flag) so the sorted array is
  // half the size: its pages are fresh on every call, and a page fault costs more than a sort.
  using NarrowKey = std::array<int32_t, std::tuple_size_v<MemoryKey>>;
  std::vector<std::pair<NarrowKey, uint32_t>> order(n);
  for (size_t i = 0; i < n; ++i) {
    const MemoryKey key = MemoryKeyOf(candidate_at(i));
    for (size_t f = 0; f < key.size(); ++f) order[i].first[f] = static_cast<int32_t>(key[f]);
    order[i].second = static_cast<uint32_t>(i);
  }
  std::sort(order.begin(), order.end());
  std::vector<size_t> group_starts;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || order[i].first != order[i - 1].first) group_starts.push_back(i);
  }
  group_starts.push_back(order.size());
  const size_t groups = group_starts.size() - 1;
  std::mutex done_mutex;
  std::vector<FloorCheckedMemory> done;
  ParallelChunks(groups, threads, 1, [&](size_t begin, size_t end) {
    FloorCheckedMemory mine(setup, memory);
    for (size_t g = begin; g < end; ++g) {
      for (size_t k = group_starts[g]; k < group_starts[g + 1]; ++k) {
        out[order[k].second] = mine.Check(candidate_at(order[k].second));
      }
      mine.ReleaseStatics(candidate_at(order[group_starts[g]].second));
    }
    const std::lock_guard<std::mutex> lock(done_mutex);
    done.push_back(std::move(mine));
  });
  for (FloorCheckedMemory& c : done) check.Absorb(c);
  return out;
}

/// Takes the layouts from `next` (fastest first, ties in enumeration order) and checks them with
/// the memory ledger until the top K that fit are known and, when the job's own layout fits,
/// every faster layout has been checked (so its rank is exact). `placeable` layouts in all.
/// `walk_to(s)` is called before the walk when it will go on at least to a step of s seconds
/// (the job's own layout fits).
template <class NextFn, class CheckFn, class WalkToFn>
Result<PlanResult> RankByMemory(const StepSetup& setup, const CollectiveModel& comm,
                                const MemoryConstants& memory, const PlanOptions& options,
                                PlanResult plan, int64_t placeable, NextFn next, CheckFn& check,
                                WalkToFn walk_to) {
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
  if (plan.current.fits) walk_to(current_s);

  int64_t faster_fitting = 0, walked = 0;
  while (std::optional<Timed> t = next()) {
    const bool top_full = static_cast<int64_t>(plan.top.size()) >= options.top_k;
    const bool past_current = !plan.current.fits || t->step_s >= current_s;
    if (top_full && past_current) break;
    ++walked;
    RankedLayout r;
    r.candidate = t->candidate;
    check(r);
    ++plan.memory_checked;
    if (!r.fits) {
      ++plan.removed_by_memory;
      continue;
    }
    if (t->step_s < current_s) ++faster_fitting;
    if (!top_full) {
      STRATA_ASSIGN_OR_RETURN(r.step,
                              EvaluateStep(setup.tables, StepLayoutFor(setup, r.candidate), comm));
      plan.top.push_back(std::move(r));
    }
  }
  plan.not_memory_checked = placeable - walked;
  if (plan.current.fits) plan.current_rank = faster_fitting + 1;
  return plan;
}

}  // namespace

Result<PlanResult> PlanLayouts(const StepSetup& setup, const CollectiveModel& comm,
                               const MemoryConstants& memory, const PlanOptions& options) {
  STRATA_RETURN_IF_ERROR(CheckObjective(setup, options.objective));
  PlanResult plan;
  plan.objective = options.objective;
  const SearchSpace space = SpaceOf(setup, options);
  plan.sharding = space.sharding;
  LayoutsByTime layouts(setup, comm, space, options.threads);
  FloorCheckedMemory check(setup, memory);
  // When the walk goes to the job's own layout, every layout faster than it is evaluated and
  // memory-checked up front, on the threads; the walk then takes those results in order.
  const unsigned threads = options.threads == 0 ? DefaultThreads() : options.threads;
  std::vector<MemoryFields> prechecked;
  size_t walked = 0;
  auto checked = [&](RankedLayout& r) {
    if (walked < prechecked.size()) {
      SetMemory(r, prechecked[walked]);
    } else {
      check(r);
    }
    ++walked;
  };
  auto ranked = RankByMemory(
      setup, comm, memory, options, std::move(plan), layouts.placeable(),
      [&] { return layouts.Next(); }, checked,
      [&](double current_s) {
        layouts.PrefetchBelow(current_s);
        prechecked = CheckMemoryInParallel(
            setup, memory, layouts.ReadyCount(),
            [&](size_t i) { return layouts.ReadyCandidate(i); }, threads, check);
      });
  if (!ranked.ok()) return ranked;
  // Counted after the walk: a layout found unplaceable while walking (not expected) counts too.
  ranked->rules = layouts.rules();
  ranked->unplaceable = layouts.unplaceable();
  ranked->step_evaluations = layouts.full_evaluations();
  ranked->ledger_evaluations = check.LedgerCount();
  return ranked;
}

Result<PlanResult> PlanLayoutsReference(const StepSetup& setup, const CollectiveModel& comm,
                                        const MemoryConstants& memory, const PlanOptions& options) {
  STRATA_RETURN_IF_ERROR(CheckObjective(setup, options.objective));
  PlanResult plan;
  plan.objective = options.objective;
  const SearchSpace space = SpaceOf(setup, options);
  plan.sharding = space.sharding;
  std::vector<Timed> timed;
  int64_t index = 0;
  plan.rules = EnumerateLayouts(RulesOf(setup.job.model), space, [&](const Candidate& c) {
    auto step = EvaluateStep(setup.tables, StepLayoutFor(setup, c), comm);
    if (!step.ok()) {
      ++plan.unplaceable;
    } else {
      timed.push_back({step->step.s(), c, index});
    }
    ++index;
    return true;
  });
  plan.step_evaluations = plan.rules.valid;
  // Ties keep the enumeration order, as the fast path's heap does.
  std::stable_sort(timed.begin(), timed.end(),
                   [](const Timed& a, const Timed& b) { return a.step_s < b.step_s; });
  size_t i = 0;
  auto check = [&](RankedLayout& r) { CheckMemory(setup, memory, r); };
  const auto placeable = static_cast<int64_t>(timed.size());
  auto ranked = RankByMemory(
      setup, comm, memory, options, std::move(plan), placeable,
      [&]() -> std::optional<Timed> {
        if (i == timed.size()) return std::nullopt;
        return timed[i++];
      },
      check, [](double) {});
  if (ranked.ok()) ranked->ledger_evaluations = ranked->memory_checked;
  return ranked;
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

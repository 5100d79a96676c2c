#include "strata/plan/planner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "strata/core/did_you_mean.h"
#include "strata/core/hash.h"
#include "strata/core/parallel.h"
#include "strata/memory/ledger.h"
#include "strata/memory/ledger_statics.h"
#include "strata/plan/time_order.h"

namespace strata::plan {
namespace {

/// The group whose link a communication component of the step model runs on.
std::optional<GroupKind> GroupOf(StepPart part) {
  switch (part) {
    case StepPart::kTp:
    case StepPart::kTpGrad:
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

/// What one ledger says about a micro batch under one recompute choice, for the others of the
/// same layout: the ledger's peak never falls as the micro batch grows (every activation and
/// transient term is tokens-per-micro-batch times a positive constant; the micro batches in flight
/// times the micro batch, min(PP - stage, global batch / (DP x micro batch)) x micro batch, does
/// not fall either), so a micro batch that fits vouches for every smaller one and one that does
/// not fit condemns every larger one. PlannerProperties.LedgerPeakNeverFallsAsTheMicroBatchGrows
/// checks this on every layout of two searches.
struct FitBounds {
  int64_t fits_up_to = 0;                                  // largest micro batch known to fit
  int64_t oom_from = std::numeric_limits<int64_t>::max();  // smallest known not to fit
};

/// And across recompute choices, at one micro batch: megatron-core's selective recompute saves a
/// subset of what no recompute saves, and full recompute (one layer per checkpoint) keeps each
/// layer's input instead of its activations plus one layer's recomputed set, which is never more
/// (per stage of L layers, in flight I >= 1: L C I + M - C <= S I, as every layer saves at least
/// its input C and the largest saves M, S in all). So no recompute fitting vouches for both others
/// and either of them not fitting condemns no recompute. Not with activation offload (which only
/// no recompute keeps) or torchtitan's selective modes. The same property test checks this.
bool RecomputeOrderHolds(const JobSpec& spec) {
  return !spec.activation_offload.on() && !spec.recompute.titan.on();
}

/// What the fast path keeps per parallel layout: the ledger's statics (the same for every micro
/// batch and recompute choice), the activation-free floor once a ledger of it was computed, and
/// per recompute choice what the ledgers computed say about the other micro batches.
struct LayoutMemory {
  LazyStageStatics statics;
  Bytes floor;  // a lower bound of the activation-free floor (ComputeLedgerUntilOver)
  std::array<FitBounds, 3> by_recompute;  // indexed by RecomputeGranularity
};

/// The memory fields of a RankedLayout, apart: the parallel check returns thousands of these, and
/// a whole RankedLayout (its step result included) is a kilobyte of fresh pages each.
struct MemoryFields {
  Bytes peak;
  Bytes capacity;
  bool fits = false;
  MemoryVerdict verdict = MemoryVerdict::kOom;
  /// False when `fits` was inferred (FitBounds, or the layout's floor over the card) and the
  /// ledger was not computed: peak and verdict are then not the candidate's own.
  bool exact = false;
};

/// With `fits_only` (--fits-only) a layout fits only when its whole error band does. The
/// band's top is the peak times a constant of the job's memory family, which a parallel layout
/// and its sharding mode fix, so every inference FitBounds and RecomputeOrderHolds make from the
/// peak holds for this stricter test too.
MemoryFields MemoryFieldsOf(const MemoryLedger& ledger, bool fits_only) {
  const bool fits = ledger.fits && (!fits_only || ledger.verdict == MemoryVerdict::kFits);
  return {ledger.Peak(), ledger.capacity, fits, ledger.verdict, true};
}

void SetMemory(RankedLayout& r, const MemoryFields& m) {
  r.peak = m.peak;
  r.capacity = m.capacity;
  r.fits = m.fits;
  r.verdict = m.verdict;
  r.memory_checked = true;
}

/// The memory fields of the ledger of the job with `c`'s layout.
MemoryFields CheckMemory(const StepSetup& setup, const MemoryConstants& memory, const Candidate& c,
                         bool fits_only) {
  Job job = setup.job;
  ApplyCandidate(job.spec, c);
  // The enumeration's rules are the validation's: a failure is not expected; it does not fit.
  return RederiveJob(job).ok() ? MemoryFieldsOf(ComputeLedger(job, memory), fits_only)
                               : MemoryFields{};
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

std::string_view TieBreakRule() {
  // RankByMemory sorts equal times by verdict and peak; past those, EnumerateLayouts' loop
  // order, which the fast path's heap and the reference's stable sort both keep.
  return "equal step times are ordered by memory: fits before at_risk, then the lower peak; "
         "then the search order (smaller TP, then PP, CP, VPP, EP, ETP and micro batch first, "
         "recompute none before selective before full, sharding modes in the order searched)";
}

std::string LayoutName(const Candidate& c) {
  const ParallelLayout& l = c.layout;
  // The sharding mode is named when it is not megatron's distributed optimizer (zero1).
  // Sequence parallelism is named when on: it changes the activations' memory, and the
  // planner turns it on for every TP > 1, which a job re-run from the name must repeat.
  return fmt::format(
      "TP{}{} PP{}{} VPP{} CP{} EP{} ETP{} DP{} mb{} {}{}", l.tp,
      l.sequence_parallel && l.tp > 1 ? " SP" : "", l.pp, StageSplitSuffix(l), l.vpp, l.cp, l.ep,
      l.etp, l.dp, c.micro_batch, RecomputeGranularityName(c.recompute),
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
  s.megatron_core = setup.job.RunsMegatronCore(s.sharding.mode);
  s.runtime = setup.job.RuntimeOf(s.sharding.mode);
  DeriveDeepSpeedGradReduce(s.sharding, s.deepspeed(), s.overlap);
  s.sharding.ApplyReshardDefault(setup.job.spec.framework.name == "torchtitan", c.layout.pp);
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

/// The space searched: the options' bounds, the job's sizes, and what the job's framework runs
/// (framework_scope.h) under each sharding mode. A mode the framework does not run is dropped
/// unless it is the job's own; a --fix on a dimension no searched mode runs is an error.
Result<SearchSpace> SpaceOf(const StepSetup& setup, const PlanOptions& options,
                            FrameworkScope& scope) {
  const JobSpec& spec = setup.job.spec;
  SearchSpace space = options.space;
  if (space.world == 0) space.world = spec.cluster.world();
  if (space.global_batch == 0) space.global_batch = spec.global_batch;
  if (space.max_tokens == 0) space.max_tokens = static_cast<int64_t>(spec.sequence.max_tokens);
  space.cp_allowed = spec.attention.kernel == AttentionKernel::kFlash;
  space.cp_comm_type = spec.layout.cp_comm_type;
  space.cp_linear_allowed =
      setup.job.gdn.context_parallel || setup.job.model.CountLayers(MixerKind::kGatedDeltaNet) == 0;
  const bool own_mode = space.sharding.empty();
  if (own_mode) space.sharding = {spec.sharding.mode};
  scope = ResolveScope(setup.frameworks, spec, setup.job.model.model_type,
                       setup.job.model.CountLayers(FfnKind::kMoe) > 0, space.sharding);
  if (own_mode && !scope.modes.front().runs_mode) {
    ModeScope& m = scope.modes.front();
    m.known = false;
    m.runs_mode = true;
    m.why += fmt::format(", not the job's sharding {}: every dimension searched",
                         ShardingModeName(m.mode));
  }
  std::vector<ShardingMode> modes;
  std::vector<ModeScope> kept;
  for (const ModeScope& m : scope.modes) {
    if (!m.runs_mode) continue;
    modes.push_back(m.mode);
    kept.push_back(m);
  }
  if (modes.empty()) {
    Error e = InvalidInput(fmt::format("{} runs none of the sharding modes asked for: {}",
                                       scope.framework, scope.modes.front().why));
    e.field = "--sharding";
    return e;
  }
  space.sharding = modes;
  space.mode_dimensions.clear();
  for (const ModeScope& m : kept) space.mode_dimensions.push_back(m.dimensions);
  // --fix on a dimension no searched mode runs would leave nothing to rank: say why instead.
  const ParallelLayout& f = space.fixed;
  struct Fixed {
    int64_t value;
    const char* name;
    ParallelLayout probe;  // that value alone
  };
  const Fixed fixed[] = {{f.tp, "tp", {f.tp, 1, 1, 1, 1, 1, 1, false}},
                         {f.pp, "pp", {1, f.pp, 1, 1, 1, 1, 1, false}},
                         {f.vpp, "vpp", {1, 1, f.vpp, 1, 1, 1, 1, false}},
                         {f.cp, "cp", {1, 1, 1, f.cp, 1, 1, 1, false}},
                         {f.ep, "ep", {1, 1, 1, 1, f.ep, 1, 1, false}},
                         {f.etp, "etp", {1, 1, 1, 1, 1, f.etp, 1, false}}};
  for (const Fixed& x : fixed) {
    if (x.value <= 1) continue;
    if (std::none_of(kept.begin(), kept.end(),
                     [&](const ModeScope& m) { return m.dimensions.Admits(x.probe); })) {
      std::vector<std::string> names;
      names.reserve(kept.size());
      for (const ModeScope& m : kept) names.emplace_back(ShardingModeName(m.mode));
      std::string upper = x.name;
      for (char& ch : upper) ch = static_cast<char>(ch - 'a' + 'A');
      Error e = InvalidInput(fmt::format("'{}={}': {} runs no {} under sharding {}: {}", x.name,
                                         x.value, scope.framework, upper, fmt::join(names, ", "),
                                         kept.front().why));
      e.field = "--fix";
      return e;
    }
  }
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

/// A hash of a MemoryKey: the memory check looks a layout up for every candidate.
struct MemoryKeyHash {
  size_t operator()(const MemoryKey& key) const { return HashFields(key); }
};

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
/// not fit with any micro batch or recompute choice, so its other candidates skip the ledger; a
/// micro batch whose fit FitBounds already decides skips it too. Whether a candidate fits is
/// CheckMemory's answer, always (planner tests compare the two paths); its peak and verdict are
/// the ledger's when `exact` (Exact computes them for the layouts shown).
class FloorCheckedMemory {
 public:
  FloorCheckedMemory(const StepSetup& setup, const MemoryConstants& memory, bool fits_only)
      : setup_(setup),
        fits_only_(fits_only),
        memory_(memory),
        capacity_(UsableCapacity(setup.job, memory, nullptr)),
        job_(setup.job),
        params_(CountParams(setup.job.model)),
        recompute_order_(RecomputeOrderHolds(setup.job.spec)) {}

  MemoryFields Check(const Candidate& c) {
    LayoutMemory& layout = layouts_[MemoryKeyOf(c)];
    if (layout.floor > capacity_) return {};  // over the card: OOM (0 until a ledger ran)
    FitBounds& bounds = layout.by_recompute.at(static_cast<size_t>(c.recompute));
    const MemoryFields inferred_fit{Bytes(), capacity_, true, MemoryVerdict::kFits, false};
    if (c.micro_batch <= bounds.fits_up_to) return inferred_fit;
    if (c.micro_batch >= bounds.oom_from) return {};
    if (recompute_order_) {
      const auto& of = layout.by_recompute;
      constexpr auto kNone = static_cast<size_t>(RecomputeGranularity::kNone);
      if (c.recompute != RecomputeGranularity::kNone) {
        if (c.micro_batch <= of[kNone].fits_up_to) return inferred_fit;
      } else if (c.micro_batch >=
                     of[static_cast<size_t>(RecomputeGranularity::kSelective)].oom_from ||
                 c.micro_batch >= of[static_cast<size_t>(RecomputeGranularity::kFull)].oom_from) {
        return {};
      }
    }
    const MemoryFields m = Ledger(c, layout);
    if (m.fits) {
      bounds.fits_up_to = std::max(bounds.fits_up_to, c.micro_batch);
    } else {
      bounds.oom_from = std::min(bounds.oom_from, c.micro_batch);
    }
    return m;
  }
  /// The ledger's own peak and verdict for `c`, whatever is known about its neighbours.
  MemoryFields Exact(const Candidate& c) { return Ledger(c, layouts_[MemoryKeyOf(c)]); }
  int64_t LedgerCount() const { return ledgers_; }
  bool FitsOnly() const { return fits_only_; }
  /// Drops the statics of `c`'s layout and keeps its floor and bounds: once a layout's
  /// candidates are checked, the next layout reuses the freed memory instead of touching fresh
  /// pages (thousands of layouts' statics cost more in page faults than in arithmetic). A later
  /// candidate of the layout recomputes them.
  void ReleaseStatics(const Candidate& c) {
    auto it = layouts_.find(MemoryKeyOf(c));
    if (it != layouts_.end()) it->second.statics.Clear();
  }

  /// Takes over what `other` learnt (layouts checked on another thread, none of them known here)
  /// and its ledger count.
  void Absorb(FloorCheckedMemory& other) {
    layouts_.merge(other.layouts_);
    ledgers_ += other.ledgers_;
  }

 private:
  MemoryFields Ledger(const Candidate& c, LayoutMemory& layout) {
    RestoreCandidateFields(job_.spec, setup_.job.spec);
    ApplyCandidate(job_.spec, c);
    if (!RederiveJob(job_).ok()) return {};  // not expected, as in CheckMemory
    bool complete = false;
    MemoryFields m = MemoryFieldsOf(
        ComputeLedgerUntilOver(job_, memory_, params_, layout.statics, layout.floor, complete),
        fits_only_);
    m.exact = complete;  // else it does not fit, and its peak is one stage's
    ++ledgers_;
    return m;
  }

  const StepSetup& setup_;
  bool fits_only_;
  const MemoryConstants& memory_;
  Bytes capacity_;
  Job job_;  // scratch: the candidate's job
  ParamBreakdown params_;
  bool recompute_order_;  // RecomputeOrderHolds
  std::unordered_map<MemoryKey, LayoutMemory, MemoryKeyHash> layouts_;
  int64_t ledgers_ = 0;
};

/// Checks the candidates at `positions` (one layout, one recompute choice, micro batches
/// ascending) so that FitBounds decides as many as it can: the smallest micro batch first (when
/// it does not fit, neither do the others: most of the layouts a walk checks do not fit), then the
/// largest (when it fits, so do all), then by halves between the last that fits and the first
/// that does not. The others are inferred.
template <class CandidateAt>
void CheckByMicroBatch(const std::vector<uint32_t>& positions, CandidateAt& candidate_at,
                       FloorCheckedMemory& check, std::vector<MemoryFields>& out) {
  auto fits_at = [&](size_t k) {
    out[positions[k]] = check.Check(candidate_at(positions[k]));
    return out[positions[k]].fits;
  };
  const size_t n = positions.size();
  if (fits_at(0) && n > 1 && !fits_at(n - 1)) {
    size_t lo = 0, hi = n - 1;  // lo fits, hi does not
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      (fits_at(mid) ? lo : hi) = mid;
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (!out[positions[k]].exact) out[positions[k]] = check.Check(candidate_at(positions[k]));
  }
}

/// The memory of the `n` layouts `candidate_at(i)` gives, checked on `threads` threads. Each
/// parallel layout's candidates go to one thread, in one pass, so every floor and bound the
/// serial walk would reuse is reused, and nothing one layout learns is used by another: the
/// answers and the ledger count do not depend on the threads or on which takes which layout.
/// What the threads learnt goes into `check` afterwards.
template <class CandidateAt>
std::vector<MemoryFields> CheckMemoryInParallel(const StepSetup& setup,
                                                const MemoryConstants& memory, size_t n,
                                                CandidateAt candidate_at, unsigned threads,
                                                FloorCheckedMemory& check) {
  std::vector<MemoryFields> out(n);
  // Layouts numbered in walk order of their first candidate; the positions sorted by (layout,
  // recompute) as one integer, then micro batch: far faster to sort than whole keys.
  std::unordered_map<MemoryKey, uint32_t, MemoryKeyHash> layout_ids;
  struct Position {
    uint64_t choice;  // layout id x 4 + recompute
    int64_t micro_batch;
    uint32_t index;
    auto operator<=>(const Position&) const = default;
  };
  std::vector<Position> order(n);
  for (size_t i = 0; i < n; ++i) {
    const Candidate c = candidate_at(i);
    const uint64_t id = layout_ids.try_emplace(MemoryKeyOf(c), layout_ids.size()).first->second;
    // Recompute choices in enum order: no recompute first, whose fit vouches for the others.
    order[i] = {id * 4 + static_cast<uint64_t>(c.recompute), c.micro_batch,
                static_cast<uint32_t>(i)};
  }
  std::sort(order.begin(), order.end());
  std::vector<size_t> layout_starts;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || order[i].choice / 4 != order[i - 1].choice / 4) layout_starts.push_back(i);
  }
  layout_starts.push_back(order.size());
  const size_t layouts = layout_starts.size() - 1;
  std::mutex done_mutex;
  std::vector<FloorCheckedMemory> done;
  // Layouts cost unevenly (a ledger has one stage per PP): each thread takes a few at a time.
  ParallelTake(layouts, threads, 4, [&](auto& take) {
    FloorCheckedMemory mine(setup, memory, check.FitsOnly());
    std::vector<uint32_t> positions;
    size_t begin = 0, end = 0;
    while (take(begin, end)) {
      for (size_t g = begin; g < end; ++g) {
        for (size_t k = layout_starts[g]; k < layout_starts[g + 1];) {
          positions.clear();
          const uint64_t choice = order[k].choice;
          for (; k < layout_starts[g + 1] && order[k].choice == choice; ++k) {
            positions.push_back(order[k].index);
          }
          CheckByMicroBatch(positions, candidate_at, mine, out);
        }
        mine.ReleaseStatics(candidate_at(order[layout_starts[g]].index));
      }
    }
    const std::lock_guard<std::mutex> lock(done_mutex);
    done.push_back(std::move(mine));
  });
  for (FloorCheckedMemory& c : done) check.Absorb(c);
  return out;
}

/// What the walk learns about a layout's memory: its fields, and whether it was already counted
/// among the memory-checked (it belongs to the set `walk_to` checked up front).
struct WalkCheck {
  MemoryFields memory;
  bool counted = false;
};

/// The layouts `walk_to` checked up front: how many, and how many of them are over the card.
struct UpFront {
  int64_t checked = 0;
  int64_t removed = 0;
};

/// Takes the layouts from `next` (fastest first, ties in enumeration order) and checks them with
/// the memory ledger until the top K that fit are known and, when the job's own layout fits,
/// every faster layout has been checked (so its rank is exact). `placeable` layouts in all.
/// When the job's own layout fits, `walk_to(s)` is called first with its step time s; it checks
/// the memory of every layout whose compute bound (LayoutBound) is below s (a superset of the
/// faster ones) and returns the counts. `check(t)` says whether a walked layout fits;
/// `exact(c)` gives its ledger's own peak and verdict for a layout shown when `check` inferred
/// them. Every layout is counted among the memory-checked once.
template <class NextFn, class CheckFn, class ExactFn, class WalkToFn>
Result<PlanResult> RankByMemory(const StepSetup& setup, const CollectiveModel& comm,
                                const MemoryConstants& memory, const PlanOptions& options,
                                PlanResult plan, int64_t placeable, NextFn next, CheckFn check,
                                ExactFn exact, WalkToFn walk_to) {
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
  // The job's own layout is ranked among the layouts that fit by the same test as theirs.
  const bool current_fits = own.fits && (!options.fits_only || own.verdict == MemoryVerdict::kFits);
  if (current_fits) {
    const UpFront up_front = walk_to(current_s);
    plan.memory_checked = up_front.checked;
    plan.removed_by_memory = up_front.removed;
  }

  int64_t faster_fitting = 0;
  // A layout whose step time equals the K-th listed one's still competes for the list: equal
  // times are ordered by memory (TieBreakRule), so the walk goes on through the tie.
  std::vector<double> top_s;  // each listed layout's step time, as the walk ordered them
  while (std::optional<Timed> t = next()) {
    const bool top_full = static_cast<int64_t>(plan.top.size()) >= options.top_k;
    const bool past_current = !current_fits || t->step_s >= current_s;
    const bool tied_with_last = top_full && !top_s.empty() && t->step_s == top_s.back();
    if (top_full && past_current && !tied_with_last) break;
    RankedLayout r;
    r.candidate = t->candidate;
    const WalkCheck w = check(*t);
    SetMemory(r, w.memory);
    if (!w.counted) {
      ++plan.memory_checked;
      if (!r.fits) ++plan.removed_by_memory;
    }
    if (!r.fits) continue;
    if (t->step_s < current_s) ++faster_fitting;
    if (!top_full || tied_with_last) {
      if (!w.memory.exact) SetMemory(r, exact(r.candidate));
      STRATA_ASSIGN_OR_RETURN(r.step,
                              EvaluateStep(setup.tables, StepLayoutFor(setup, r.candidate), comm));
      plan.top.push_back(std::move(r));
      top_s.push_back(t->step_s);
    }
  }
  // Equal step times: the verdict (fits before at_risk), then the lower peak; the walk's order
  // (the search order) after that.
  std::vector<size_t> order(plan.top.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (top_s[a] != top_s[b]) return top_s[a] < top_s[b];
    const RankedLayout& x = plan.top[a];
    const RankedLayout& y = plan.top[b];
    if (x.verdict != y.verdict) return x.verdict < y.verdict;
    return x.peak < y.peak;
  });
  std::vector<RankedLayout> sorted;
  for (size_t i = 0; i < order.size() && static_cast<int64_t>(i) < options.top_k; ++i) {
    sorted.push_back(std::move(plan.top[order[i]]));
  }
  plan.top = std::move(sorted);
  plan.not_memory_checked = placeable - plan.memory_checked;
  if (current_fits) plan.current_rank = faster_fitting + 1;
  if (options.layout_errors != nullptr && !plan.top.empty()) {
    std::vector<ComparedLayout> compared;
    const std::string winner = LayoutName(plan.top.front().candidate);
    compared.push_back({"winner", winner, plan.top.front().candidate.layout});
    if (plan.top.size() > 1) {
      compared.push_back(
          {"runner-up", LayoutName(plan.top[1].candidate), plan.top[1].candidate.layout});
    }
    if (LayoutName(plan.current.candidate) != winner) {
      compared.push_back(
          {"yours", LayoutName(plan.current.candidate), plan.current.candidate.layout});
    }
    plan.layout_caveats =
        LayoutCaveatsOf(compared, setup.job.cluster.gpus_per_node, *options.layout_errors);
  }
  return plan;
}

}  // namespace

Result<PlanResult> PlanLayouts(const StepSetup& setup, const CollectiveModel& comm,
                               const MemoryConstants& memory, const PlanOptions& options) {
  STRATA_RETURN_IF_ERROR(CheckObjective(setup, options.objective));
  PlanResult plan;
  plan.objective = options.objective;
  plan.fits_only = options.fits_only;
  STRATA_ASSIGN_OR_RETURN(const SearchSpace space, SpaceOf(setup, options, plan.scope));
  plan.sharding = space.sharding;
  LayoutsByTime layouts(setup, comm, space, options.threads);
  FloorCheckedMemory check(setup, memory, options.fits_only);
  const unsigned threads = options.threads == 0 ? DefaultThreads() : options.threads;
  const Bytes capacity = UsableCapacity(setup.job, memory, nullptr);
  auto checked = [&](const Timed& t) -> WalkCheck {
    // A layout of the up-front selection that Next gives fits: the others were dropped.
    if (t.selected) return {{Bytes(), capacity, true, MemoryVerdict::kFits, false}, true};
    return {check.Check(t.candidate), false};
  };
  // When the walk goes to the job's own layout, every layout that might be faster is
  // memory-checked up front, on the threads, and only those that fit are evaluated in full.
  auto walk_to = [&](double current_s) {
    layouts.SelectBelow(current_s);
    const std::vector<MemoryFields> fields = CheckMemoryInParallel(
        setup, memory, layouts.SelectedCount(),
        [&](size_t i) { return layouts.SelectedCandidate(i); }, threads, check);
    UpFront up_front;
    std::vector<uint8_t> fits(fields.size());
    for (size_t i = 0; i < fields.size(); ++i) {
      fits[i] = fields[i].fits ? 1 : 0;
      ++up_front.checked;
      if (!fields[i].fits) ++up_front.removed;
    }
    layouts.EvaluateSelected(fits);
    return up_front;
  };
  auto ranked = RankByMemory(
      setup, comm, memory, options, std::move(plan), layouts.placeable(),
      [&] { return layouts.Next(); }, checked, [&](const Candidate& c) { return check.Exact(c); },
      walk_to);
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
  plan.fits_only = options.fits_only;
  STRATA_ASSIGN_OR_RETURN(const SearchSpace space, SpaceOf(setup, options, plan.scope));
  plan.sharding = space.sharding;
  std::vector<Timed> timed;
  int64_t index = 0;
  plan.rules = EnumerateLayouts(
      RulesOf(setup.job.model, setup.job.query_groups()), space, [&](const Candidate& c) {
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
  // The up-front set: every layout whose bound is below the job's own step, each with its ledger.
  std::map<int64_t, MemoryFields> up_front_memory;  // by enumeration index
  auto walk_to = [&](double current_s) {
    UpFront up_front;
    for (const Timed& t : timed) {
      if (LayoutBound(setup, t.candidate) >= current_s) continue;
      const MemoryFields m = CheckMemory(setup, memory, t.candidate, options.fits_only);
      up_front_memory[t.index] = m;
      ++up_front.checked;
      if (!m.fits) ++up_front.removed;
    }
    return up_front;
  };
  auto checked = [&](const Timed& t) -> WalkCheck {
    auto it = up_front_memory.find(t.index);
    if (it != up_front_memory.end()) return {it->second, true};
    return {CheckMemory(setup, memory, t.candidate, options.fits_only), false};
  };
  auto exact = [&](const Candidate& c) { return CheckMemory(setup, memory, c, options.fits_only); };
  size_t i = 0;
  const auto placeable = static_cast<int64_t>(timed.size());
  auto ranked = RankByMemory(
      setup, comm, memory, options, std::move(plan), placeable,
      [&]() -> std::optional<Timed> {
        if (i == timed.size()) return std::nullopt;
        return timed[i++];
      },
      checked, exact, walk_to);
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

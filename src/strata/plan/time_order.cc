#include "strata/plan/time_order.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>

#include "strata/core/check.h"
#include "strata/core/parallel.h"
#include "strata/plan/planner.h"
#include "strata/sim/step_model.h"
#include "strata/sim/step_placement.h"

namespace strata::plan {
namespace {

// The bound is the step's compute rows summed in another order: it can exceed the full step's
// sum by rounding (~1e-16 relative). Lowering it by far more than that keeps it a bound without
// changing which layouts it lets through in any way that matters.
constexpr double kBoundMargin = 1.0 - 1e-9;

using PlacementKey = std::array<int64_t, 6>;

PlacementKey KeyOf(const ParallelLayout& l) { return {l.tp, l.cp, l.ep, l.etp, l.dp, l.pp}; }

}  // namespace

double LayoutBound(const StepSetup& setup, const Candidate& c) {
  return StepComputeBound(setup.tables, StepLayoutFor(setup, c)).s() * kBoundMargin;
}

LayoutsByTime::LayoutsByTime(const StepSetup& setup, const CollectiveModel& comm,
                             const SearchSpace& space, unsigned threads, size_t staged_from)
    : setup_(setup),
      comm_(comm),
      threads_(threads == 0 ? DefaultThreads() : threads),
      staged_from_(staged_from),
      caches_(threads_) {
  std::map<PlacementKey, uint32_t> slots;
  PlacementKey last_key{};
  uint32_t last_slot = 0;
  bool have_last = false;
  const int64_t gpus_per_node = comm.cluster().gpus_per_node;
  std::vector<uint32_t> firsts;                // per placement: the index of its first layout
  std::vector<ParallelLayout> placed_layouts;  // per placement: a layout to place its groups
  const ModelRules rules = RulesOf(setup.job.model, setup.job.query_groups());
  // Counted first (a few ms for millions) so that the arrays are allocated once.
  const auto count = static_cast<size_t>(
      EnumerateLayouts(rules, space, [](const Candidate&) { return true; }).valid);
  candidates_.reserve(count);
  placement_of_.reserve(count);
  rules_ = EnumerateLayouts(rules, space, [&](const Candidate& c) {
    const PlacementKey key = KeyOf(c.layout);
    if (!have_last || key != last_key) {
      auto [it, inserted] = slots.try_emplace(key, static_cast<uint32_t>(placements_.size()));
      if (inserted) {
        firsts.push_back(static_cast<uint32_t>(candidates_.size()));
        placed_layouts.push_back(c.layout);
        placements_.emplace_back();
      }
      last_key = key;
      last_slot = it->second;
      have_last = true;
    }
    candidates_.push_back(Pack(c));
    placement_of_.push_back(last_slot);
    return true;
  });

  // Each placement's groups (rank enumeration when they do not align with the nodes: the
  // costliest part of a small search's setup), then its first layout in full, which tells
  // whether the cluster can price its groups: on the threads.
  constexpr double kUnplaceable = -1;
  std::vector<double> first_steps(firsts.size(), kUnplaceable);
  ParallelNumberedChunks(firsts.size(), threads_, 16, [&](size_t chunk, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      Placement& p = placements_[i];
      if (auto aligned = AlignedGroupShapes(placed_layouts[i], gpus_per_node)) {
        p.groups = std::move(*aligned);
        p.placeable = true;
      } else if (auto placed = PlaceGroups(placed_layouts[i], gpus_per_node); placed.ok()) {
        p.groups = std::move(placed).value();
        p.placeable = true;
      }
      if (p.placeable) first_steps[i] = FullStep(firsts[i], caches_[chunk]).value_or(kUnplaceable);
    }
  });
  for (const Placement& p : placements_) {
    full_evaluations_ += p.placeable ? 1 : 0;
  }
  // One array of entries, in the order of the candidates; the bounds fill it in place (a copy
  // would be as many fresh pages again: 32 MB for two million layouts).
  entries_.assign(candidates_.size(), Entry{0, 0, false});
  for (size_t i = 0; i < firsts.size(); ++i) {
    if (first_steps[i] == kUnplaceable) {
      placements_[i].placeable = false;
    } else {
      entries_[firsts[i]] = {first_steps[i], firsts[i], true};
    }
  }
  // The others' bounds; a layout of a placement found unplaceable is marked, then left out.
  ParallelChunks(candidates_.size(), threads_, 4096, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (!placements_[placement_of_[i]].placeable) {
        entries_[i].key = kUnplaceable;
      } else if (!entries_[i].full) {
        entries_[i] = {LayoutBound(setup, CandidateAt(static_cast<uint32_t>(i))),
                       static_cast<uint32_t>(i), false};
      }
    }
  });
  unplaceable_ += static_cast<int64_t>(
      std::erase_if(entries_, [](const Entry& e) { return e.key == kUnplaceable; }));
  SplitIntoBuckets();
  Admit();
}

void LayoutsByTime::SplitIntoBuckets() {
  // Thresholds at 1/64, 1/32, ..., 1/2 of the keys, estimated from an even sample of them.
  const size_t n = entries_.size();
  std::vector<double> thresholds;
  if (n >= staged_from_ && n > 0) {
    const size_t samples = std::min<size_t>(4096, n);
    std::vector<double> sample;
    sample.reserve(samples);
    for (size_t i = 0; i < samples; ++i) sample.push_back(entries_[i * (n / samples)].key);
    std::sort(sample.begin(), sample.end());
    for (size_t part = 64; part >= 2; part /= 2) {
      const double t = sample[samples / part];
      if (thresholds.empty() || t > thresholds.back()) thresholds.push_back(t);
    }
  }
  // In place, from the largest threshold down: [<= t1 | (t1, t2] | ... | > t_last].
  bucket_ends_.assign(thresholds.size() + 1, n);
  bucket_limits_.assign(thresholds.size() + 1, std::numeric_limits<double>::infinity());
  size_t end = n;
  for (size_t b = thresholds.size(); b-- > 0;) {
    const double t = thresholds[b];
    end = static_cast<size_t>(std::partition(entries_.begin(),
                                             entries_.begin() + static_cast<std::ptrdiff_t>(end),
                                             [t](const Entry& e) { return e.key <= t; }) -
                              entries_.begin());
    bucket_ends_[b] = end;
    bucket_limits_[b] = t;
  }
  next_bucket_ = 0;
}

void LayoutsByTime::Admit() {
  const size_t begin = next_bucket_ == 0 ? 0 : bucket_ends_[next_bucket_ - 1];
  const size_t end = bucket_ends_[next_bucket_];
  frontier_ = bucket_limits_[next_bucket_];
  ++next_bucket_;
  heap_.insert(heap_.end(), entries_.begin() + static_cast<std::ptrdiff_t>(begin),
               entries_.begin() + static_cast<std::ptrdiff_t>(end));
  std::make_heap(heap_.begin(), heap_.end(), Later);
  if (next_bucket_ == bucket_ends_.size()) BigArray<Entry>().swap(entries_);  // all admitted
}

bool LayoutsByTime::EnsureTop() {
  // Every entry not admitted has a key above the frontier: the heap's top is the smallest of
  // all only when its key is not.
  while (next_bucket_ < bucket_ends_.size() && (heap_.empty() || heap_.front().key > frontier_)) {
    Admit();
  }
  return !heap_.empty();
}

// Every field of Candidate and of its ParallelLayout: a new field must be packed too (the
// planner's tests compare the fast search's layouts with the reference search's).
// The pipeline layout string is left out: the planner enumerates its own splits and never sets
// one.
static_assert(sizeof(ParallelLayout) == 7 * 8 + 8 + 2 * 8 + 8 + 16, "pack the new layout field");
static_assert(sizeof(Candidate) == sizeof(ParallelLayout) + 8 + 8, "pack the new field");

LayoutsByTime::Packed LayoutsByTime::Pack(const Candidate& c) {
  const ParallelLayout& l = c.layout;
  auto i32 = [](int64_t v) { return static_cast<int32_t>(v); };
  return {i32(l.tp),
          i32(l.pp),
          i32(l.vpp),
          i32(l.cp),
          i32(l.ep),
          i32(l.etp),
          i32(l.dp),
          i32(l.first_stage_layers),
          i32(l.last_stage_layers),
          i32(c.micro_batch),
          static_cast<uint8_t>(l.sequence_parallel),
          static_cast<uint8_t>(l.account_for_embedding),
          static_cast<uint8_t>(l.account_for_loss),
          static_cast<uint8_t>(c.recompute),
          static_cast<uint8_t>(c.sharding),
          static_cast<uint8_t>(l.pp_schedule),
          static_cast<uint8_t>(l.stage_split),
          static_cast<uint8_t>(l.cp_comm_type)};
}

Candidate LayoutsByTime::Unpack(const Packed& p) {
  Candidate c;
  ParallelLayout& l = c.layout;
  l.tp = p.tp;
  l.pp = p.pp;
  l.vpp = p.vpp;
  l.cp = p.cp;
  l.ep = p.ep;
  l.etp = p.etp;
  l.dp = p.dp;
  l.first_stage_layers = p.first_stage_layers;
  l.last_stage_layers = p.last_stage_layers;
  l.sequence_parallel = p.sequence_parallel != 0;
  l.account_for_embedding = p.account_for_embedding != 0;
  l.account_for_loss = p.account_for_loss != 0;
  l.pp_schedule = static_cast<PipelineSchedule>(p.pp_schedule);
  l.stage_split = static_cast<StageSplitRule>(p.stage_split);
  l.cp_comm_type = static_cast<CpCommType>(p.cp_comm_type);
  c.micro_batch = p.micro_batch;
  c.recompute = static_cast<RecomputeGranularity>(p.recompute);
  c.sharding = static_cast<ShardingMode>(p.sharding);
  return c;
}

std::optional<double> LayoutsByTime::FullStep(uint32_t index, PricingCache& cache) const {
  auto step =
      EvaluateStepOn(setup_.tables, StepLayoutFor(setup_, CandidateAt(index)), comm_,
                     placements_[placement_of_[index]].groups, Detail::kNumbersOnly, &cache);
  if (!step.ok()) return std::nullopt;
  return step->step.s();
}

void LayoutsByTime::EvaluateBatch() {
  // The `batch_` smallest bounds, passing over full entries between them (set aside and put
  // back: their order is unchanged).
  pending_.clear();
  set_aside_.clear();
  while (pending_.size() < batch_ && EnsureTop()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    (heap_.back().full ? set_aside_ : pending_).push_back(heap_.back());
    heap_.pop_back();
  }
  for (const Entry& e : set_aside_) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }
  // In enumeration order, so that the layouts of one placement (and its groups) are evaluated
  // together, not scattered over the batch by their bounds.
  std::sort(pending_.begin(), pending_.end(),
            [](const Entry& a, const Entry& b) { return a.index < b.index; });
  constexpr double kUnplaceable = -1;
  ParallelNumberedChunks(
      pending_.size(), threads_, 64, [&](size_t chunk, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          pending_[i].key = FullStep(pending_[i].index, caches_[chunk]).value_or(kUnplaceable);
          pending_[i].full = true;
        }
      });
  full_evaluations_ += static_cast<int64_t>(pending_.size());
  for (const Entry& e : pending_) {
    if (e.key == kUnplaceable) {
      ++unplaceable_;  // not expected: a placement prices alike for all of its layouts
      continue;
    }
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }
  batch_ = std::min(2 * batch_, kMaxBatch);
}

void LayoutsByTime::SelectBelow(double limit_s) {
  if (!ready_.empty() || ready_next_ > 0) return;  // once, before the walk
  select_limit_s_ = limit_s;
  while (next_bucket_ < bucket_ends_.size()) Admit();  // every entry, full ones' bounds included
  // A full entry's key is its time; its bound may still be below the limit when the time is not.
  const auto below = std::partition(heap_.begin(), heap_.end(), [&](const Entry& e) {
    return e.key < limit_s || (e.full && LayoutBound(setup_, CandidateAt(e.index)) < limit_s);
  });
  ready_.assign(heap_.begin(), below);
  heap_.erase(heap_.begin(), below);
  std::make_heap(heap_.begin(), heap_.end(), Later);
  awaiting_fits_ = true;
}

void LayoutsByTime::EvaluateSelected(const std::vector<uint8_t>& fits) {
  awaiting_fits_ = false;
  std::vector<Entry> kept;
  kept.reserve(ready_.size());
  for (size_t i = 0; i < ready_.size(); ++i) {
    if (i < fits.size() && fits[i] != 0) {
      kept.push_back(ready_[i]);
      kept.back().selected = true;
    } else {
      ++dropped_;
    }
  }
  constexpr double kUnplaceable = -1;
  int64_t evaluated = 0;
  for (const Entry& e : kept) evaluated += e.full ? 0 : 1;
  ParallelNumberedChunks(kept.size(), threads_, 64, [&](size_t chunk, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (kept[i].full) continue;
      kept[i].key = FullStep(kept[i].index, caches_[chunk]).value_or(kUnplaceable);
      kept[i].full = true;
    }
  });
  full_evaluations_ += evaluated;
  // Every entry left in the heap has a key (bound or time) of at least the limit, so the layouts
  // faster than it come first, in the order of their times; the others go back.
  ready_.clear();
  for (const Entry& e : kept) {
    if (e.key == kUnplaceable) {
      ++unplaceable_;  // not expected, as in EvaluateBatch
    } else if (e.key < select_limit_s_) {
      ready_.push_back(e);
    } else {
      heap_.push_back(e);
      std::push_heap(heap_.begin(), heap_.end(), Later);
    }
  }
  std::sort(ready_.begin(), ready_.end(),
            [](const Entry& a, const Entry& b) { return Later(b, a); });
  ready_next_ = 0;
}

std::optional<Timed> LayoutsByTime::Next() {
  STRATA_CHECK(!awaiting_fits_);  // SelectBelow's layouts are not ordered before EvaluateSelected
  if (ready_next_ < ready_.size()) {
    const Entry& e = ready_[ready_next_++];
    return Timed{e.key, CandidateAt(e.index), e.index, e.selected};
  }
  while (EnsureTop()) {
    if (heap_.front().full) {
      std::pop_heap(heap_.begin(), heap_.end(), Later);
      const Entry e = heap_.back();
      heap_.pop_back();
      return Timed{e.key, CandidateAt(e.index), e.index, e.selected};
    }
    // The smallest key left is a bound: evaluate it (and the next smallest) in full.
    EvaluateBatch();
  }
  return std::nullopt;
}

}  // namespace strata::plan

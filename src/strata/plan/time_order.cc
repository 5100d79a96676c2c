#include "strata/plan/time_order.h"

#include <algorithm>
#include <array>
#include <map>

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

LayoutsByTime::LayoutsByTime(const StepSetup& setup, const CollectiveModel& comm,
                             const SearchSpace& space, unsigned threads)
    : setup_(setup), comm_(comm), threads_(threads == 0 ? DefaultThreads() : threads) {
  std::map<PlacementKey, uint32_t> slots;
  PlacementKey last_key{};
  uint32_t last_slot = 0;
  bool have_last = false;
  const int64_t gpus_per_node = comm.cluster().gpus_per_node;
  std::vector<uint32_t> firsts;  // per placement that has one: the index of its first layout
  const ModelRules rules = RulesOf(setup.job.model);
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
        Placement p;
        if (auto aligned = AlignedGroupShapes(c.layout, gpus_per_node)) {
          p.groups = std::move(*aligned);
          p.placeable = true;
        } else if (auto placed = PlaceGroups(c.layout, gpus_per_node); placed.ok()) {
          p.groups = std::move(placed).value();
          p.placeable = true;
        }
        if (p.placeable) firsts.push_back(static_cast<uint32_t>(candidates_.size()));
        placements_.push_back(std::move(p));
      }
      last_key = key;
      last_slot = it->second;
      have_last = true;
    }
    if (!placements_[last_slot].placeable) {
      ++unplaceable_;
      return true;
    }
    candidates_.push_back(Pack(c));
    placement_of_.push_back(last_slot);
    return true;
  });

  // Each placement's first layout in full: whether the cluster can price its groups.
  constexpr double kUnplaceable = -1;
  std::vector<double> first_steps(firsts.size());
  ParallelChunks(firsts.size(), threads_, 64, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      first_steps[i] = FullStep(firsts[i]).value_or(kUnplaceable);
  });
  full_evaluations_ += static_cast<int64_t>(firsts.size());
  std::vector<Entry> entries(candidates_.size(), Entry{0, 0, false});
  std::vector<uint8_t> first(candidates_.size(), 0);
  for (size_t i = 0; i < firsts.size(); ++i) {
    if (first_steps[i] == kUnplaceable) {
      placements_[placement_of_[firsts[i]]].placeable = false;
    } else {
      entries[firsts[i]] = {first_steps[i], firsts[i], true};
      first[firsts[i]] = 1;
    }
  }
  // The others' bounds; a layout of a placement found unplaceable is left out.
  std::vector<uint8_t> keep(candidates_.size(), 0);
  ParallelChunks(candidates_.size(), threads_, 4096, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (!placements_[placement_of_[i]].placeable) continue;
      keep[i] = 1;
      if (first[i] != 0) continue;
      const double bound =
          StepComputeBound(setup.tables,
                           StepLayoutFor(setup, CandidateAt(static_cast<uint32_t>(i))))
              .s();
      entries[i] = {bound * kBoundMargin, static_cast<uint32_t>(i), false};
    }
  });
  heap_.reserve(candidates_.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    if (keep[i] != 0) {
      heap_.push_back(entries[i]);
    } else {
      ++unplaceable_;
    }
  }
  std::make_heap(heap_.begin(), heap_.end(), Later);
}

// Every field of Candidate and of its ParallelLayout: a new field must be packed too (the
// planner's tests compare the fast search's layouts with the reference search's).
static_assert(sizeof(ParallelLayout) == 7 * 8 + 8 + 2 * 8 + 8, "pack the new layout field");
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
          static_cast<uint8_t>(c.sharding)};
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
  c.micro_batch = p.micro_batch;
  c.recompute = static_cast<RecomputeGranularity>(p.recompute);
  c.sharding = static_cast<ShardingMode>(p.sharding);
  return c;
}

std::optional<double> LayoutsByTime::FullStep(uint32_t index) const {
  auto step = EvaluateStepOn(setup_.tables, StepLayoutFor(setup_, CandidateAt(index)), comm_,
                             placements_[placement_of_[index]].groups, Detail::kNumbersOnly);
  if (!step.ok()) return std::nullopt;
  return step->step.s();
}

void LayoutsByTime::EvaluateBatch() {
  // The `batch_` smallest bounds, passing over full entries between them (set aside and put
  // back: their order is unchanged).
  pending_.clear();
  set_aside_.clear();
  while (!heap_.empty() && pending_.size() < batch_) {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    (heap_.back().full ? set_aside_ : pending_).push_back(heap_.back());
    heap_.pop_back();
  }
  for (const Entry& e : set_aside_) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }
  constexpr double kUnplaceable = -1;
  ParallelChunks(pending_.size(), threads_, 64, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      pending_[i].key = FullStep(pending_[i].index).value_or(kUnplaceable);
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

void LayoutsByTime::PrefetchBelow(double limit_s) {
  if (ready_next_ < ready_.size()) return;  // once, before the walk
  const auto below =
      std::partition(heap_.begin(), heap_.end(), [&](const Entry& e) { return e.key < limit_s; });
  ready_.assign(heap_.begin(), below);
  heap_.erase(heap_.begin(), below);
  constexpr double kUnplaceable = -1;
  int64_t evaluated = 0;
  for (const Entry& e : ready_) evaluated += e.full ? 0 : 1;
  ParallelChunks(ready_.size(), threads_, 64, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (ready_[i].full) continue;
      ready_[i].key = FullStep(ready_[i].index).value_or(kUnplaceable);
      ready_[i].full = true;
    }
  });
  full_evaluations_ += evaluated;
  // Every entry left in the heap has a key (bound or time) of at least limit_s, so the layouts
  // faster than limit_s come first, in the order of their times; the others go back.
  std::vector<Entry> faster;
  faster.reserve(ready_.size());
  for (const Entry& e : ready_) {
    if (e.key == kUnplaceable) {
      ++unplaceable_;  // not expected, as in EvaluateBatch
    } else if (e.key < limit_s) {
      faster.push_back(e);
    } else {
      heap_.push_back(e);
    }
  }
  std::make_heap(heap_.begin(), heap_.end(), Later);
  std::sort(faster.begin(), faster.end(),
            [](const Entry& a, const Entry& b) { return Later(b, a); });
  ready_ = std::move(faster);
  ready_next_ = 0;
}

std::optional<Timed> LayoutsByTime::Next() {
  if (ready_next_ < ready_.size()) {
    const Entry& e = ready_[ready_next_++];
    return Timed{e.key, CandidateAt(e.index), e.index};
  }
  while (!heap_.empty()) {
    if (heap_.front().full) {
      std::pop_heap(heap_.begin(), heap_.end(), Later);
      const Entry e = heap_.back();
      heap_.pop_back();
      return Timed{e.key, CandidateAt(e.index), e.index};
    }
    // The smallest key left is a bound: evaluate it (and the next smallest) in full.
    EvaluateBatch();
  }
  return std::nullopt;
}

}  // namespace strata::plan

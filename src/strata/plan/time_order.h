// The planner's fast path: every valid layout in order of predicted step time, produced lazily.
//
// Each layout first gets a cheap lower bound (StepComputeBound: its compute alone, from the
// per-model tables, no placement and no allocation). The bounds go into a heap; a layout is
// evaluated with the full step model only when its bound reaches the top of the heap, i.e. when
// no layout still unevaluated could be faster. Taking layouts from the heap therefore yields
// exactly the order of sorting every layout by its full step time (ties by enumeration order),
// while the planner, which stops once its top K fit and the job's own layout is reached, never
// evaluates the layouts whose compute alone is slower than where it stopped.
//
// Group placements depend only on TP, CP, EP, ETP, DP and PP: each is placed once
// (AlignedGroupShapes, else PlaceGroups) and shared by every micro batch, recompute and VPP
// choice of that layout (EvaluateStepOn). The first layout of each placement is evaluated in full
// at once, which also tells whether that placement can be priced on the cluster: the same for
// all of its layouts, since what fails (a group's shape on the cluster) does not depend on them.
//
// The evaluations run on `threads` threads: the first layouts of the placements and the bounds
// after the enumeration, and, while walking, a batch of the smallest bounds at a time (the batch
// doubles as the walk goes on, up to kMaxBatch). Evaluating a bound early never changes what
// Next returns (a full time is never below its bound), so the order, and every count but
// full_evaluations, is the same with any number of threads and any batch; full_evaluations
// counts the batches' speculative evaluations too and does not depend on the threads.
#ifndef STRATA_PLAN_TIME_ORDER_H_
#define STRATA_PLAN_TIME_ORDER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "strata/comm/collective_cost.h"
#include "strata/comm/pricing_cache.h"
#include "strata/core/huge_page_allocator.h"
#include "strata/job/placement.h"
#include "strata/plan/layout_space.h"
#include "strata/sim/step_job.h"

namespace strata::plan {

/// A layout with its full predicted step time.
struct Timed {
  double step_s = 0;
  Candidate candidate;
  int64_t index = 0;  // enumeration order: breaks ties between equal step times
  /// Selected by SelectBelow, memory-checked there and found to fit (EvaluateSelected).
  bool selected = false;
};

/// The lower bound LayoutsByTime orders unevaluated layouts by: the compute alone
/// (StepComputeBound), lowered by a relative 1e-9 so that rounding never lifts it above the full
/// step it bounds. The planner's reference search uses it to select the same layouts.
double LayoutBound(const StepSetup& setup, const Candidate& c);

class LayoutsByTime {
 public:
  /// Layouts from which the heap is filled bucket by bucket (SplitIntoBuckets).
  static constexpr size_t kStagedFrom = 65536;

  /// Enumerates `space` (counting the rules' removals into `rules`) and bounds every layout, on
  /// `threads` threads (0: DefaultThreads()). `staged_from` is for tests, which compare the order
  /// with and without buckets on small searches.
  LayoutsByTime(const StepSetup& setup, const CollectiveModel& comm, const SearchSpace& space,
                unsigned threads = 0, size_t staged_from = kStagedFrom);

  /// The next layout in order of full step time; nullopt when every placeable layout was given.
  std::optional<Timed> Next();

  /// Before the first Next, for a walk that goes at least to a step of `limit_s` (the planner's
  /// walk to the job's own layout): selects every layout whose LayoutBound is below `limit_s`
  /// (all that might be faster). The caller checks their memory and passes the answers to
  /// EvaluateSelected: only the layouts that fit are evaluated in full, since one that does not
  /// fit needs no step time.
  void SelectBelow(double limit_s);
  /// The selected layouts: how many, and the i-th (unpacked on demand: a copy of them all is a
  /// megabyte of fresh pages).
  size_t SelectedCount() const { return ready_.size(); }
  Candidate SelectedCandidate(size_t i) const { return CandidateAt(ready_[i].index); }
  /// `fits[i]`: whether the i-th selected layout fits. Those that do not are dropped from the
  /// walk (Next never gives them); the others are evaluated in full on the threads, and Next
  /// gives those faster than the limit first, from an array, then goes on from the heap, to which
  /// the slower ones return. Every layout that came from the selection has Timed::selected set.
  void EvaluateSelected(const std::vector<uint8_t>& fits);

  const PruneCounts& rules() const { return rules_; }
  int64_t unplaceable() const { return unplaceable_; }
  int64_t placeable() const { return rules_.valid - unplaceable_; }
  int64_t full_evaluations() const { return full_evaluations_; }
  /// Layouts dropped by EvaluateSelected (over the card): the placeable layouts Next gives are
  /// placeable() - dropped().
  int64_t dropped() const { return dropped_; }

 private:
  struct Placement {
    std::vector<GroupPlacement> groups;
    bool placeable = false;
  };
  struct Entry {
    double key;  // the full step time when `full`, else the lower bound
    uint32_t index;
    bool full;
    bool selected = false;  // came from SelectBelow (and fits)
  };
  static bool Later(const Entry& a, const Entry& b) {
    return a.key > b.key || (a.key == b.key && a.index > b.index);
  }
  static constexpr size_t kMaxBatch = 1024;
  /// The full step time of candidate `index`; nullopt when its groups cannot be priced.
  /// `cache`: the calling thread's (caches_[chunk]).
  std::optional<double> FullStep(uint32_t index, PricingCache& cache) const;
  /// Evaluates the heap's smallest bounds in full (a batch) and puts them back with their times.
  void EvaluateBatch();
  /// A large search's entries are split by key into buckets ([<= t1 | (t1, t2] | ...], t at
  /// 1/64, 1/32, ..., 1/2 of the keys) and admitted to the heap one bucket at a time, as the walk
  /// reaches them: a walk that stops early keeps a heap of a fraction of the layouts, whose
  /// operations then miss the cache far less (a heap of two million entries is 32 MB).
  void SplitIntoBuckets();
  /// Moves the next bucket into the heap and raises the frontier to its limit.
  void Admit();
  /// Admits buckets until the heap's top is the smallest entry of all; false when none is left.
  bool EnsureTop();

  const StepSetup& setup_;
  const CollectiveModel& comm_;
  unsigned threads_ = 1;
  size_t staged_from_ = kStagedFrom;
  /// One per thread (ParallelNumberedChunks' chunk number), kept across batches: the same few
  /// collectives are priced for most layouts (comm/pricing_cache.h).
  std::vector<PricingCache> caches_;
  size_t batch_ = 1;
  PruneCounts rules_;
  int64_t unplaceable_ = 0;
  int64_t full_evaluations_ = 0;
  int64_t dropped_ = 0;
  std::vector<Placement> placements_;
  /// A candidate in 48 bytes instead of Candidate's 104: millions are kept (DeepSeek-V3 on
  /// 16,384 GPUs: 2 million), and their memory was a tenth of the search's time.
  struct Packed {
    int32_t tp, pp, vpp, cp, ep, etp, dp, first_stage_layers, last_stage_layers, micro_batch;
    uint8_t sequence_parallel, account_for_embedding, account_for_loss, recompute, sharding,
        pp_schedule, stage_split, cp_comm_type;
  };
  static Packed Pack(const Candidate& c);
  static Candidate Unpack(const Packed& p);
  Candidate CandidateAt(uint32_t index) const { return Unpack(candidates_[index]); }

  // The arrays with one slot per layout, on huge pages (core/huge_page_allocator.h).
  template <class T>
  using BigArray = std::vector<T, HugePageAllocator<T>>;
  BigArray<Packed> candidates_;
  BigArray<uint32_t> placement_of_;  // per candidate
  BigArray<Entry> entries_;          // the entries not yet admitted, in buckets of increasing keys
  std::vector<size_t> bucket_ends_;
  std::vector<double> bucket_limits_;  // the largest key of each bucket (the last: infinity)
  size_t next_bucket_ = 0;
  double frontier_ = 0;  // every entry not admitted has a larger key
  BigArray<Entry> heap_;
  std::vector<Entry> ready_;  // SelectBelow's layouts; after EvaluateSelected, the faster ones
                              // sorted, given from ready_next_ on
  double select_limit_s_ = 0;
  bool awaiting_fits_ = false;  // between SelectBelow and EvaluateSelected
  size_t ready_next_ = 0;
  std::vector<Entry> pending_;    // the batch being evaluated
  std::vector<Entry> set_aside_;  // full entries popped while collecting it
};

}  // namespace strata::plan

#endif  // STRATA_PLAN_TIME_ORDER_H_

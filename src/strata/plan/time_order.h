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
#include "strata/job/placement.h"
#include "strata/plan/layout_space.h"
#include "strata/sim/step_job.h"

namespace strata::plan {

/// A layout with its full predicted step time.
struct Timed {
  double step_s = 0;
  Candidate candidate;
  int64_t index = 0;  // enumeration order: breaks ties between equal step times
};

class LayoutsByTime {
 public:
  /// Enumerates `space` (counting the rules' removals into `rules`) and bounds every layout, on
  /// `threads` threads (0: DefaultThreads()).
  LayoutsByTime(const StepSetup& setup, const CollectiveModel& comm, const SearchSpace& space,
                unsigned threads = 0);

  /// The next layout in order of full step time; nullopt when every placeable layout was given.
  std::optional<Timed> Next();

  /// Before the first Next: evaluates in full, on the threads, every layout whose bound is below
  /// `limit_s`, all of which a walk to a layout of that time must evaluate (the planner's walk
  /// to the job's own layout), and sorts those faster than `limit_s`; Next gives them first,
  /// from that array, then goes on from the heap.
  void PrefetchBelow(double limit_s);
  /// The layouts PrefetchBelow found faster than its limit, in the order Next gives them: how
  /// many, and the i-th (unpacked on demand: a copy of them all is a megabyte of fresh pages).
  size_t ReadyCount() const { return ready_.size() - ready_next_; }
  Candidate ReadyCandidate(size_t i) const { return CandidateAt(ready_[ready_next_ + i].index); }

  const PruneCounts& rules() const { return rules_; }
  int64_t unplaceable() const { return unplaceable_; }
  int64_t placeable() const { return rules_.valid - unplaceable_; }
  int64_t full_evaluations() const { return full_evaluations_; }

 private:
  struct Placement {
    std::vector<GroupPlacement> groups;
    bool placeable = false;
  };
  struct Entry {
    double key;  // the full step time when `full`, else the lower bound
    uint32_t index;
    bool full;
  };
  static bool Later(const Entry& a, const Entry& b) {
    return a.key > b.key || (a.key == b.key && a.index > b.index);
  }
  static constexpr size_t kMaxBatch = 1024;
  /// The full step time of candidate `index`; nullopt when its groups cannot be priced.
  std::optional<double> FullStep(uint32_t index) const;
  /// Evaluates the heap's smallest bounds in full (a batch) and puts them back with their times.
  void EvaluateBatch();

  const StepSetup& setup_;
  const CollectiveModel& comm_;
  unsigned threads_ = 1;
  size_t batch_ = 1;
  PruneCounts rules_;
  int64_t unplaceable_ = 0;
  int64_t full_evaluations_ = 0;
  std::vector<Placement> placements_;
  /// A candidate in 48 bytes instead of Candidate's 104: millions are kept (DeepSeek-V3 on
  /// 16,384 GPUs: 2 million), and their memory was a tenth of the search's time.
  struct Packed {
    int32_t tp, pp, vpp, cp, ep, etp, dp, first_stage_layers, last_stage_layers, micro_batch;
    uint8_t sequence_parallel, account_for_embedding, account_for_loss, recompute, sharding;
  };
  static Packed Pack(const Candidate& c);
  static Candidate Unpack(const Packed& p);
  Candidate CandidateAt(uint32_t index) const { return Unpack(candidates_[index]); }

  std::vector<Packed> candidates_;
  std::vector<uint32_t> placement_of_;  // per candidate
  std::vector<Entry> heap_;
  std::vector<Entry> ready_;  // PrefetchBelow's layouts, sorted; given from ready_next_ on
  size_t ready_next_ = 0;
  std::vector<Entry> pending_;    // the batch being evaluated
  std::vector<Entry> set_aside_;  // full entries popped while collecting it
};

}  // namespace strata::plan

#endif  // STRATA_PLAN_TIME_ORDER_H_

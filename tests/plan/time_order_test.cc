// LayoutsByTime admits a large search's layouts to its heap bucket by bucket (SplitIntoBuckets),
// from 65,536 layouts on. The order Next gives must not depend on that: every bucket not yet
// admitted holds only keys above the frontier, and the heap's top is used only when it is not
// above it. The searches the planner tests compare with the reference search are smaller than
// that, so here the buckets are forced on small searches (staged_from 1: seven buckets) and the
// whole order is compared with one heap, layout for layout and time for time. (On these searches
// the batches drain each bucket before its frontier matters: removing the frontier test from
// EnsureTop goes unseen here; a heap built wrongly on admission does not.)
#include "strata/plan/time_order.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan_test_support.h"

namespace strata::time_order_test {
namespace {

struct Step {
  int64_t index;
  double step_s;
  bool selected;
};

/// Every layout Next gives, in order; with `select_below` > 0, SelectBelow first and about half
/// of the selected layouts declared to fit (by their dimensions: the selection's order is the
/// heap's, which the buckets change).
std::vector<Step> Walk(const testing::Planned& p, size_t staged_from, double select_below) {
  const plan::SearchSpace space = [&] {
    plan::SearchSpace s;
    s.world = p.setup.job.spec.cluster.world();
    s.global_batch = p.setup.job.spec.global_batch;
    s.max_tokens = static_cast<int64_t>(p.setup.job.spec.sequence.max_tokens);
    s.sharding = {p.setup.job.spec.sharding.mode};
    return s;
  }();
  plan::LayoutsByTime layouts(p.setup, *p.comm, space, 2, staged_from);
  if (select_below > 0) {
    layouts.SelectBelow(select_below);
    std::vector<uint8_t> fits(layouts.SelectedCount());
    for (size_t i = 0; i < fits.size(); ++i) {
      const plan::Candidate c = layouts.SelectedCandidate(i);
      fits[i] = (c.layout.tp + c.layout.pp + c.layout.cp + c.micro_batch) % 2 == 0 ? 1 : 0;
    }
    layouts.EvaluateSelected(fits);
  }
  std::vector<Step> out;
  while (std::optional<plan::Timed> t = layouts.Next()) {
    out.push_back({t->index, t->step_s, t->selected});
  }
  return out;
}

void ExpectSameOrder(const std::vector<std::string>& sets, double select_below, int64_t nodes = 0) {
  SCOPED_TRACE(::testing::PrintToString(sets));
  const testing::Planned p = testing::PlanJob(kReferenceJobName, sets, {}, nodes);
  ASSERT_TRUE(p.ok);
  const auto one_heap = Walk(p, std::numeric_limits<size_t>::max(), select_below);
  const auto buckets = Walk(p, 1, select_below);
  ASSERT_GT(one_heap.size(), 1000U);  // a search large enough to fill several buckets
  ASSERT_EQ(buckets.size(), one_heap.size());
  for (size_t i = 0; i < one_heap.size(); ++i) {
    ASSERT_EQ(buckets[i].index, one_heap[i].index) << "position " << i;
    ASSERT_EQ(buckets[i].step_s, one_heap[i].step_s) << "position " << i;
    ASSERT_EQ(buckets[i].selected, one_heap[i].selected) << "position " << i;
  }
  // The order is by step time: the heap gives no layout before a faster one.
  for (size_t i = 1; i < one_heap.size(); ++i) {
    ASSERT_LE(one_heap[i - 1].step_s, one_heap[i].step_s) << "position " << i;
  }
}

TEST(TimeOrder, BucketsGiveTheOrderOfOneHeap) {
  // The reference job (13,806 layouts) and Llama-3.1-70B on 64 H100 (6,348), walked to the end.
  ExpectSameOrder({}, 0);
  ExpectSameOrder({"model=llama-3.1-70b", "cluster=h100-8x8-ib400", "parallel.ep=1",
                   "parallel.tp=8", "parallel.dp=8", "batch.global_batch=512",
                   "sequence.max_tokens=8192", "sequence.mean_tokens=8192"},
                  0);
}

TEST(TimeOrder, BucketsGiveTheOrderOfOneHeapAfterASelection) {
  // SelectBelow admits every bucket first; the selected layouts come back with `selected` set
  // and those declared over the card never come back. 60 s: about half of the reference job's
  // bounds.
  ExpectSameOrder({}, 60.0);
}

}  // namespace
}  // namespace strata::time_order_test

// Collective costs already priced, for a caller that prices the same few collectives over and
// over: the planner's search. Its layouts differ by micro batch, recompute and pipeline split far
// more than by what they send over which group: DeepSeek-V3 on 16,384 GPUs prices 3.3 million
// collectives, 1,579 of them distinct; Llama-3.1-70B on 1,024 GPUs 30,000, about 700 distinct.
// The cost is a pure function of the model, the operation, the size and the group's shape, so a
// hit returns exactly what CollectiveModel::Cost would. Numbers only (Detail::kNumbersOnly: no
// level names), kAuto only, and not thread-safe: one cache per thread.
#ifndef STRATA_COMM_PRICING_CACHE_H_
#define STRATA_COMM_PRICING_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "strata/comm/collective_cost.h"

namespace strata {

class PricingCache {
 public:
  /// model.Cost(op, size, shape, CommAlgorithm::kAuto, Detail::kNumbersOnly), computed once per
  /// distinct question; the pointer is valid until the next call. Errors are returned, not kept.
  Result<const CollectiveCost*> Cost(const CollectiveModel& model, CollectiveOp op, Bytes size,
                                     const GroupShape& shape);
  size_t size() const { return costs_.size(); }

 private:
  struct Key {
    const CollectiveModel* model;
    CollectiveOp op;
    double size;
    int64_t ranks, nodes, ranks_per_node;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  // Bounded: a search that asks more distinct questions than this starts over.
  static constexpr size_t kMaxEntries = size_t{1} << 16;
  std::unordered_map<Key, CollectiveCost, KeyHash> costs_;
};

}  // namespace strata

#endif  // STRATA_COMM_PRICING_CACHE_H_

#include "strata/comm/pricing_cache.h"

#include <bit>

#include "strata/core/hash.h"

namespace strata {

size_t PricingCache::KeyHash::operator()(const Key& k) const {
  return Fnv1a()
      .Mix(reinterpret_cast<uintptr_t>(k.model))
      .Mix(static_cast<uint64_t>(k.op))
      .Mix(std::bit_cast<uint64_t>(k.size))
      .Mix(static_cast<uint64_t>(k.ranks))
      .Mix(static_cast<uint64_t>(k.nodes))
      .Mix(static_cast<uint64_t>(k.ranks_per_node))
      .Value();
}

Result<const CollectiveCost*> PricingCache::Cost(const CollectiveModel& model, CollectiveOp op,
                                                 Bytes size, const GroupShape& shape) {
  const Key key{&model, op, size.count(), shape.ranks, shape.nodes, shape.ranks_per_node};
  if (auto it = costs_.find(key); it != costs_.end()) return &it->second;
  auto cost = model.Cost(op, size, shape, CommAlgorithm::kAuto, Detail::kNumbersOnly);
  if (!cost.ok()) return std::move(cost).error();
  if (costs_.size() >= kMaxEntries) costs_.clear();
  return &costs_.emplace(key, std::move(cost).value()).first->second;
}

}  // namespace strata

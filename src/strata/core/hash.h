// FNV-1a over 64-bit fields: the hash of the planner's small integer keys (a layout's
// dimensions, a collective's operation, size and group shape), where std::hash of each field
// (the identity for integers) combined by hand would repeat at every key.
#ifndef STRATA_CORE_HASH_H_
#define STRATA_CORE_HASH_H_

#include <cstddef>
#include <cstdint>

namespace strata {

class Fnv1a {
 public:
  Fnv1a& Mix(uint64_t v) {
    h_ = (h_ ^ v) * 1099511628211ULL;
    return *this;
  }
  size_t Value() const { return static_cast<size_t>(h_); }

 private:
  uint64_t h_ = 1469598103934665603ULL;
};

/// The hash of every element of an array of integers (std::array<int64_t, N> and the like).
template <class Array>
size_t HashFields(const Array& fields) {
  Fnv1a h;
  for (auto v : fields) h.Mix(static_cast<uint64_t>(v));
  return h.Value();
}

}  // namespace strata

#endif  // STRATA_CORE_HASH_H_

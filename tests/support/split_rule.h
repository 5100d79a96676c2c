// The fit / held-out split rule of the validation corpora that are split by a hash of the row id
// (the memory corpus, the model-card rows of the step model): FNV-1a 64 over the id's UTF-8
// bytes; within a group, the ids sorted by it, then fit, held_out, fit, ... starting with fit.
// The rule reads no error, so it can be recomputed by the tests that report the split.
#ifndef STRATA_TESTS_SUPPORT_SPLIT_RULE_H_
#define STRATA_TESTS_SUPPORT_SPLIT_RULE_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace strata::testing {

inline uint64_t Fnv1a64(const std::string& s) {
  uint64_t h = 14695981039346656037ULL;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

/// The split each id of one group takes under the rule: "fit" or "held_out".
inline std::map<std::string, std::string> AlternateSplit(const std::vector<std::string>& ids) {
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const std::string& id : ids) order.emplace_back(Fnv1a64(id), id);
  std::sort(order.begin(), order.end());
  std::map<std::string, std::string> split;
  for (size_t i = 0; i < order.size(); ++i) {
    split[order[i].second] = i % 2 == 0 ? "fit" : "held_out";
  }
  return split;
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_SUPPORT_SPLIT_RULE_H_

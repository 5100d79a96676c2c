#include "strata/core/yaml_duplicates.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

namespace strata {

Status CheckNoDuplicateKeys(const YAML::Node& root, const std::string& file) {
  // Iterative, and each collection visited once: an alias shares its anchor's node (and its
  // position in the text), so `*x` repeated does not multiply the walk.
  std::vector<YAML::Node> pending = {root};
  std::set<std::pair<int, bool>> visited;  // (position in the text, is a mapping)
  while (!pending.empty()) {
    const YAML::Node node = pending.back();
    pending.pop_back();
    if (!node || !(node.IsMap() || node.IsSequence())) continue;
    if (!visited.insert({node.Mark().pos, node.IsMap()}).second) continue;
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) pending.push_back(item);
      continue;
    }
    std::map<std::string, int> first_line;
    for (const auto& kv : node) {
      pending.push_back(kv.second);
      if (!kv.first.IsScalar()) continue;
      const int line = kv.first.Mark().line + 1;
      const auto [it, inserted] = first_line.emplace(kv.first.Scalar(), line);
      if (inserted) continue;
      Error e = InvalidInput(fmt::format(
          "key '{}' is written twice in one mapping, on line {} and line {}; YAML readers keep "
          "only one of the values",
          kv.first.Scalar(), it->second, line));
      e.file = file;
      e.line = line;
      return e.WithHint(fmt::format("remove one of the two '{}' lines", kv.first.Scalar()));
    }
  }
  return OkStatus();
}

}  // namespace strata

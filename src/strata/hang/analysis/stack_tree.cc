#include "strata/hang/analysis/stack_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace strata::hang {

std::string FormatRankRanges(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string RanksText(const std::vector<int64_t>& ranks) {
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", FormatRankRanges(ranks));
}

std::string IdsText(const std::vector<int64_t>& pid_only, const std::vector<int64_t>& ids) {
  const bool pids = !ids.empty() && std::all_of(ids.begin(), ids.end(), [&](int64_t id) {
    return std::binary_search(pid_only.begin(), pid_only.end(), id);
  });
  if (!pids) return RanksText(ids);
  // pid 0 is a py-spy dump without its "Process <pid>:" header: no pid is known.
  if (ids.size() == 1 && ids[0] == 0) return "one process (its dump gives no pid)";
  return fmt::format("{} {}", ids.size() == 1 ? "pid" : "pids", FormatRankRanges(ids));
}

RankRuns RankGaps(const std::set<int64_t>& have, int64_t world) {
  RankRuns gaps;
  int64_t next = 0;  // the first rank not yet accounted for
  for (auto it = have.lower_bound(0); it != have.end() && *it < world; ++it) {
    if (*it > next) gaps.emplace_back(next, *it - 1);
    next = *it + 1;
  }
  if (next < world) gaps.emplace_back(next, world - 1);
  return gaps;
}

int64_t RunsSize(const RankRuns& runs) {
  int64_t n = 0;
  for (const auto& [first, last] : runs) n += last - first + 1;
  return n;
}

std::string FormatRuns(const RankRuns& runs) {
  std::string out;
  for (const auto& [first, last] : runs) {
    if (!out.empty()) out += ',';
    out += first == last ? fmt::format("{}", first) : fmt::format("{}-{}", first, last);
  }
  return out;
}

int StackTree::Intern(const PyFrame& frame) {
  key_.assign(frame.function);
  key_.push_back('\0');
  key_.append(frame.file);
  auto [it, inserted] = frame_ids_.try_emplace(key_, static_cast<int>(frame_ids_.size()));
  return it->second;
}

void StackTree::Add(int64_t member, const std::vector<PyFrame>& frames) {
  int node = 0;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    const int id = Intern(*it);
    auto child = nodes_[static_cast<size_t>(node)].children.find(id);
    if (child == nodes_[static_cast<size_t>(node)].children.end()) {
      Node fresh;
      fresh.parent = node;
      fresh.depth = nodes_[static_cast<size_t>(node)].depth + 1;
      nodes_.push_back(std::move(fresh));
      const int created = static_cast<int>(nodes_.size() - 1);
      nodes_[static_cast<size_t>(node)].children.emplace(id, created);
      node = created;
    } else {
      node = child->second;
    }
  }
  Node& leaf = nodes_[static_cast<size_t>(node)];
  if (leaf.members.empty()) {
    leaf.stack_index = stacks_.size();
    stacks_.push_back(frames);
  }
  leaf.members.push_back(member);
}

std::vector<StackClass> StackTree::Classes() const {
  std::vector<int> leaves;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i].members.empty()) leaves.push_back(static_cast<int>(i));
  }
  std::vector<StackClass> classes;
  std::vector<int> class_leaf;
  for (int leaf : leaves) {
    const Node& n = nodes_[static_cast<size_t>(leaf)];
    StackClass c;
    c.members = n.members;
    std::sort(c.members.begin(), c.members.end());
    c.frames = stacks_[n.stack_index];
    classes.push_back(std::move(c));
  }
  std::vector<size_t> order(classes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (classes[a].members.size() != classes[b].members.size()) {
      return classes[a].members.size() > classes[b].members.size();
    }
    return classes[a].members.front() < classes[b].members.front();
  });
  std::vector<StackClass> sorted;
  sorted.reserve(classes.size());
  for (size_t i : order) {
    sorted.push_back(std::move(classes[i]));
    class_leaf.push_back(leaves[i]);
  }
  if (sorted.empty()) return sorted;
  // Ancestors of the largest class's leaf; every other leaf climbs until it meets one.
  std::unordered_set<int> majority_path;
  for (int n = class_leaf[0]; n >= 0; n = nodes_[static_cast<size_t>(n)].parent)
    majority_path.insert(n);
  for (size_t i = 0; i < sorted.size(); ++i) {
    int n = class_leaf[i];
    while (n >= 0 && !majority_path.count(n)) n = nodes_[static_cast<size_t>(n)].parent;
    sorted[i].shared_depth = n >= 0 ? nodes_[static_cast<size_t>(n)].depth : 0;
  }
  return sorted;
}

}  // namespace strata::hang

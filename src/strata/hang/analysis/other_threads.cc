#include "strata/hang/analysis/other_threads.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "strata/hang/analysis/stack_tree.h"

namespace strata::hang {
namespace {

// A thread's stack without line numbers (two ranks at the same function on different lines of a
// loop are at the same place for this comparison).
std::string Key(const PyThread& t) {
  std::string key;
  for (const PyFrame& f : t.frames) key += fmt::format("{}@{};", f.function, f.file);
  return key;
}

std::string Describe(const PyThread& t) {
  const std::string name =
      t.name.empty() ? fmt::format("thread {:#x}", t.thread_id) : "thread " + t.name;
  if (t.frames.empty()) return name;
  const PyFrame& top = t.frames.front();
  return fmt::format("{} in {} ({})", name, top.function, top.file);
}

}  // namespace

std::optional<Pattern> FindOddOtherThread(const std::vector<RankView>& views,
                                          const StackGroup& group) {
  // rank -> the stacks of its other threads that are doing something
  std::map<int64_t, std::set<std::string>> other;
  std::map<int64_t, std::map<std::string, const PyThread*>> thread_of;
  for (const RankView& v : views) {
    if (!v.evidence->process.rank || !v.main || !v.evidence->pyspy || v.evidence->pyspy->truncated)
      continue;
    if (!std::binary_search(group.ranks.begin(), group.ranks.end(), v.id)) continue;
    auto& keys = other[v.id];
    for (const PyThread& t : v.evidence->pyspy->threads) {
      if (&t == v.main || t.idle || t.frames.empty()) continue;
      keys.insert(Key(t));
      thread_of[v.id].emplace(Key(t), &t);
    }
  }
  if (other.size() < 2) return std::nullopt;
  std::map<std::set<std::string>, std::vector<int64_t>> ranks_with;  // thread set -> ranks
  for (const auto& [rank, keys] : other) ranks_with[keys].push_back(rank);
  if (ranks_with.size() < 2) return std::nullopt;
  const auto major = std::max_element(
      ranks_with.begin(), ranks_with.end(),
      [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  const size_t m = major->second.size();
  std::vector<int64_t> odd;
  for (const auto& [keys, ranks] : ranks_with) {
    if (&keys == &major->first) continue;
    odd.insert(odd.end(), ranks.begin(), ranks.end());
  }
  std::sort(odd.begin(), odd.end());
  const bool minority = m <= 4 ? odd.size() < m : odd.size() * 4 <= m;
  if (!minority) return std::nullopt;
  Pattern p;
  p.id = "odd_other_thread";
  p.ranks = odd;
  p.title = fmt::format(
      "every rank's main thread is at the same place, but {} {} different other threads "
      "from the other {} ranks",
      RanksText(odd), odd.size() == 1 ? "has" : "have", m);
  for (int64_t r : odd) {
    for (const auto& [key, thread] : thread_of[r]) {
      if (!major->first.count(key))
        p.evidence.push_back(
            fmt::format("py-spy: rank {}: {} (not on the others)", r, Describe(*thread)));
    }
    for (const std::string& key : major->first) {
      if (!other[r].count(key) && !thread_of[major->second.front()].empty()) {
        p.evidence.push_back(fmt::format("py-spy: rank {} lacks {} that ranks {} show", r,
                                         Describe(*thread_of[major->second.front()][key]),
                                         FormatRankRanges(major->second)));
      }
    }
  }
  return p;
}

}  // namespace strata::hang

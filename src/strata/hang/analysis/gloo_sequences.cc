#include "strata/hang/analysis/gloo_sequences.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "strata/hang/analysis/stack_tree.h"

namespace strata::hang {
namespace {

struct Call {  // one entry of one rank
  std::string op;
  std::vector<std::vector<int64_t>> sizes;
  int64_t timeout_ms = 0;
  std::string Variant() const {
    std::vector<std::string> parts;
    for (const auto& s : sizes) parts.push_back(fmt::format("[{}]", fmt::join(s, ", ")));
    return fmt::format("{} [{}]", op, fmt::join(parts, ", "));
  }
};

struct Group {
  std::string desc;
  std::vector<int64_t> members;
  std::map<int64_t, std::map<int64_t, Call>> calls;  // rank -> collective_seq_id -> call
};

// The first position where the ranks that reached it recorded different calls; fills the stall.
bool FindMismatch(const Group& g, PgStall& stall) {
  std::set<int64_t> positions;
  for (const auto& [rank, calls] : g.calls) {
    for (const auto& [seq, call] : calls) positions.insert(seq);
  }
  for (int64_t seq : positions) {
    std::map<std::string, std::vector<int64_t>> variants;
    std::map<std::string, const Call*> example;
    std::vector<int64_t> reached;
    for (const auto& [rank, calls] : g.calls) {
      auto it = calls.find(seq);
      if (it == calls.end()) continue;
      const std::string v = it->second.Variant();
      variants[v].push_back(rank);
      example[v] = &it->second;
      reached.push_back(rank);
    }
    if (variants.size() < 2) continue;
    auto largest = variants.begin();
    for (auto it = variants.begin(); it != variants.end(); ++it) {
      if (it->second.size() > largest->second.size()) largest = it;
    }
    // The odd ranks are named only when all the others agree: two variants, one smaller.
    if (variants.size() == 2) {
      const auto& other = largest == variants.begin() ? std::next(variants.begin())->second
                                                      : variants.begin()->second;
      if (other.size() < largest->second.size()) stall.mismatch_minority = other;
    }
    std::vector<std::string> parts;
    for (const auto& [what, ranks] : variants)
      parts.push_back(fmt::format("{} on {}", what, RanksText(ranks)));
    stall.mismatch = fmt::format("{}", fmt::join(parts, "; "));
    stall.stalled_seq = seq;
    stall.op = example[largest->first]->op;
    stall.input_sizes = example[largest->first]->sizes;
    stall.timeout_ms = example[largest->first]->timeout_ms > 0
                           ? std::optional<int64_t>(example[largest->first]->timeout_ms)
                           : std::nullopt;
    stall.waiting = reached;
    return true;
  }
  return false;
}

// No mismatch: the last position any rank reached; ranks whose sequence ends earlier are behind.
void FindFurthest(const Group& g, PgStall& stall) {
  int64_t top = -1;
  for (const auto& [rank, calls] : g.calls) {
    if (!calls.empty()) top = std::max(top, calls.rbegin()->first);
  }
  stall.stalled_seq = top;
  for (const auto& [rank, calls] : g.calls) {
    auto it = calls.find(top);
    if (it == calls.end()) {
      stall.behind.push_back(rank);
      continue;
    }
    stall.waiting.push_back(rank);
    if (stall.op.empty()) {
      stall.op = it->second.op;
      stall.input_sizes = it->second.sizes;
      if (it->second.timeout_ms > 0) stall.timeout_ms = it->second.timeout_ms;
    }
  }
}

}  // namespace

bool IsGlooDump(const FrDump& dump) {
  if (!dump.comm_lib_version.empty() || dump.entries.empty()) return false;
  return std::all_of(dump.entries.begin(), dump.entries.end(),
                     [](const FrEntry& e) { return e.profiling_name.rfind("gloo:", 0) == 0; });
}

std::vector<PgStall> StallsFromGlooSequences(
    const std::vector<std::pair<std::string, FrDump>>& dumps) {
  std::map<std::string, Group> groups;  // key: the entries' pg name
  for (const auto& [file, dump] : dumps) {
    if (!dump.rank || !IsGlooDump(dump)) continue;
    std::set<std::string> used;
    for (const FrEntry& e : dump.entries) {
      if (e.is_p2p) continue;
      used.insert(e.pg_name);
      Group& g = groups[e.pg_name];
      if (g.desc.empty()) g.desc = e.pg_desc;
      g.calls[*dump.rank][e.collective_seq_id] = {e.op.empty() ? e.profiling_name : e.op,
                                                  e.input_sizes, e.timeout_ms};
    }
    for (const auto& [key, config] : dump.pg_config) {
      std::string name = key;
      if (key.empty() && dump.pg_config.size() == 1 && used.size() == 1) name = *used.begin();
      auto it = groups.find(name);
      if (it != groups.end() && it->second.members.empty()) it->second.members = config.ranks;
    }
  }
  std::vector<PgStall> stalls;
  for (const auto& [name, g] : groups) {
    if (g.calls.empty()) continue;
    PgStall stall;
    stall.pg = name;
    stall.desc = g.desc;
    stall.source = kGlooSource;
    stall.members = g.members;
    for (int64_t m : g.members) {
      if (!g.calls.count(m)) stall.missing.push_back(m);
    }
    if (!FindMismatch(g, stall)) FindFurthest(g, stall);
    stalls.push_back(std::move(stall));
  }
  return stalls;
}

}  // namespace strata::hang

#include "strata/hang/analysis/pg_stall.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "strata/hang/analysis/gloo_sequences.h"
#include "strata/hang/analysis/stack_tree.h"

namespace strata::hang {
namespace {

// What one rank says about one process group.
struct RankQueue {
  int64_t last_enqueued = -1;
  int64_t last_completed = -1;
  std::map<int64_t, std::string> op_at;                           // seq -> op
  std::map<int64_t, std::vector<std::vector<int64_t>>> sizes_at;  // seq -> input sizes
  std::map<int64_t, int64_t> timeout_at;                          // seq -> timeout_ms
};

struct GroupQueues {
  std::string desc;
  std::vector<int64_t> members;
  std::map<int64_t, RankQueue> by_rank;
};

std::string SizesText(const std::vector<std::vector<int64_t>>& sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    out += (i ? ", " : "") + fmt::format("[{}]", fmt::join(sizes[i], ", "));
  }
  return out + "]";
}

std::optional<PgStall> Evaluate(const std::string& pg, const GroupQueues& g,
                                const std::string& source) {
  if (g.by_rank.empty()) return std::nullopt;
  int64_t s = INT64_MAX, max_enqueued = -1;
  for (const auto& [rank, q] : g.by_rank) {
    s = std::min(s, q.last_completed + 1);
    max_enqueued = std::max(max_enqueued, q.last_enqueued);
  }
  std::vector<int64_t> missing;
  for (int64_t m : g.members) {
    if (!g.by_rank.count(m)) missing.push_back(m);
  }
  // Nobody enqueued past what everyone completed: drained, not stalled. (Members without a dump
  // are reported once, as dead or missing ranks, not once per group.)
  if (s > max_enqueued) return std::nullopt;
  PgStall stall;
  stall.pg = pg;
  stall.desc = g.desc;
  stall.source = source;
  stall.stalled_seq = s;
  stall.members = g.members;
  stall.missing = std::move(missing);
  // Variants of (op, sizes) at s among the waiting ranks: more than one is a mismatch.
  std::map<std::string, std::vector<int64_t>> variants;
  for (const auto& [rank, q] : g.by_rank) {
    if (q.last_completed >= s) {
      stall.ahead.push_back(rank);  // it passed s: it does not wait there
    } else if (q.last_enqueued >= s) {
      stall.waiting.push_back(rank);
      auto op = q.op_at.find(s);
      // An op the evidence did not name is unknown, not a different collective.
      if (op == q.op_at.end() || op->second.empty()) continue;
      auto sizes = q.sizes_at.find(s);
      const std::string sizes_text = sizes == q.sizes_at.end() ? "" : SizesText(sizes->second);
      variants[op->second + (sizes_text.empty() ? "" : " " + sizes_text)].push_back(rank);
      if (stall.op.empty()) {
        stall.op = op->second;
        if (sizes != q.sizes_at.end()) stall.input_sizes = sizes->second;
      }
      if (auto t = q.timeout_at.find(s); t != q.timeout_at.end()) stall.timeout_ms = t->second;
    } else {
      stall.behind.push_back(rank);
    }
  }
  if (variants.size() > 1) {
    size_t largest = 0;
    for (const auto& [what, ranks] : variants) largest = std::max(largest, ranks.size());
    std::vector<std::string> parts;
    for (const auto& [what, ranks] : variants) {
      if (ranks.size() < largest) {
        stall.mismatch_minority.insert(stall.mismatch_minority.end(), ranks.begin(), ranks.end());
      }
      parts.push_back(fmt::format("{} on {} {}", what, ranks.size() == 1 ? "rank" : "ranks",
                                  FormatRankRanges(ranks)));
    }
    stall.mismatch = fmt::format("{}", fmt::join(parts, "; "));
  }
  return stall;
}

}  // namespace

std::vector<PgStall> StallsFromFlightRecorder(
    const std::vector<std::pair<std::string, FrDump>>& dumps) {
  std::map<std::string, GroupQueues> groups;  // key: pg name
  for (const auto& [file, dump] : dumps) {
    if (!dump.rank) continue;        // cannot be placed; the loader reports such files
    if (IsGlooDump(dump)) continue;  // placeholder states: gloo_sequences.h compares sequences
    const int64_t rank = *dump.rank;
    std::map<int64_t, std::string> name_of_id;
    for (const FrEntry& e : dump.entries) name_of_id[e.pg_id] = e.pg_name;
    for (const auto& [name, config] : dump.pg_config) {
      GroupQueues& g = groups[name];
      if (g.desc.empty()) g.desc = config.desc;
      if (g.members.empty()) g.members = config.ranks;
    }
    for (const auto& [id_text, status] : dump.pg_status) {
      std::string name = id_text;
      if (auto id = std::strtoll(id_text.c_str(), nullptr, 10); name_of_id.count(id)) {
        name = name_of_id[id];
      } else if (!dump.pg_config.count(id_text)) {
        continue;  // a group this rank never used and cannot be named
      }
      RankQueue& q = groups[name].by_rank[rank];
      q.last_enqueued = status.last_enqueued;
      q.last_completed = status.last_completed;
    }
    for (const FrEntry& e : dump.entries) {
      if (e.is_p2p) continue;
      RankQueue& q = groups[e.pg_name].by_rank[rank];
      if (groups[e.pg_name].desc.empty()) groups[e.pg_name].desc = e.pg_desc;
      q.op_at[e.collective_seq_id] = e.op.empty() ? e.profiling_name : e.op;
      q.sizes_at[e.collective_seq_id] = e.input_sizes;
      q.timeout_at[e.collective_seq_id] = e.timeout_ms;
    }
  }
  std::vector<PgStall> stalls;
  for (const auto& [name, g] : groups) {
    if (auto s = Evaluate(name, g, "flight recorder")) stalls.push_back(std::move(*s));
  }
  return stalls;
}

std::vector<PgStall> StallsFromWatchdog(const std::vector<WatchdogEvent>& events) {
  // The timeout line names no group ("[Rank N] Watchdog caught ..."); the lines after it do
  // ("[PG ID 1 PG GUID 12(DATA_PARALLEL_GROUP) Rank N]"). A rank that names one group owns it.
  // Without torchrun's "[rankN]:" prefix a line still names its rank inside the message
  // ("[Rank 3]", "[PG 0 Rank 3]"): in the group's own numbering, which is the global one for the
  // default group, and a line without a group prefix belongs to the default group.
  const auto rank_of = [](const WatchdogEvent& e) {
    return e.global_rank ? e.global_rank : e.pg_rank;
  };
  // "PG ID" counts the groups one process created, in its own order; "PG GUID" names the group
  // the same on every member. Two ranks at "PG ID 11" with GUIDs 119 and 112 are in different
  // groups (NVIDIA/nccl#1610), so a group is keyed by its GUID where the line prints one.
  std::map<std::string, std::set<std::string>> guids_of_id;
  for (const WatchdogEvent& e : events) {
    if (!e.pg_id.empty() && !e.pg_name.empty()) guids_of_id[e.pg_id].insert(e.pg_name);
  }
  const auto key_of = [](const WatchdogEvent& e) { return WatchdogGroupKey(e); };
  std::map<std::string, std::string> label_of;  // key -> the id printed for it
  for (const WatchdogEvent& e : events) {
    if (e.pg_id.empty()) continue;
    label_of[key_of(e)] =
        guids_of_id[e.pg_id].size() > 1 ? fmt::format("{} (GUID {})", e.pg_id, e.pg_name) : e.pg_id;
  }
  std::map<int64_t, std::set<std::string>> groups_of_rank;
  for (const WatchdogEvent& e : events) {
    if (rank_of(e) && !e.pg_id.empty()) groups_of_rank[*rank_of(e)].insert(key_of(e));
  }
  // Timeout lines that name no group, and one rank with several of them at different sequence
  // numbers (pytorch-118369: rank 0 at 96120, 96117 and 96125): each is another group's queue,
  // which the lines do not name. That rank's lines cannot be placed in any queue, and the other
  // group-less lines are not assumed to be the default group's.
  std::map<int64_t, std::set<int64_t>> unnamed_seqs;
  for (const WatchdogEvent& e : events) {
    if (e.kind == WatchdogEventKind::kTimeout && e.seq && e.pg_id.empty() && rank_of(e) &&
        groups_of_rank[*rank_of(e)].empty()) {
      unnamed_seqs[*rank_of(e)].insert(*e.seq);
    }
  }
  const bool several_unnamed = std::any_of(unnamed_seqs.begin(), unnamed_seqs.end(),
                                           [](const auto& kv) { return kv.second.size() > 1; });
  std::map<std::string, GroupQueues> groups;  // key: pg id
  for (const WatchdogEvent& e : events) {
    const std::optional<int64_t> rank = rank_of(e);
    // Only lines that say where a queue stands: a heartbeat or "taking the process down" line
    // names a rank but no counter, and must not make that rank look behind.
    const bool has_queue =
        (e.kind == WatchdogEventKind::kTimeout && e.seq) || e.last_enqueued || e.last_completed;
    if (!rank || !has_queue) continue;
    std::string pg = key_of(e);
    if (pg.empty()) {
      const auto& named = groups_of_rank[*rank];
      if (named.empty() && unnamed_seqs[*rank].size() > 1) continue;
      pg = named.size() == 1 ? *named.begin() : named.empty() && !several_unnamed ? "0" : "?";
    }
    GroupQueues& g = groups[pg];
    if (g.desc.empty()) g.desc = e.pg_desc;
    RankQueue& q = g.by_rank[*rank];
    if (e.last_enqueued) q.last_enqueued = std::max(q.last_enqueued, *e.last_enqueued);
    if (e.last_completed) q.last_completed = std::max(q.last_completed, *e.last_completed);
    if (e.kind == WatchdogEventKind::kTimeout && e.seq) {
      q.last_enqueued = std::max(q.last_enqueued, *e.seq);
      if (q.last_completed < 0) q.last_completed = *e.seq - 1;
      q.op_at[*e.seq] = e.op_type;
      if (e.numel_in) q.sizes_at[*e.seq] = {{*e.numel_in}};
      if (e.timeout_ms) q.timeout_at[*e.seq] = *e.timeout_ms;
    }
  }
  std::vector<PgStall> stalls;
  for (const auto& [key, g] : groups) {
    const auto label = label_of.find(key);
    if (auto s = Evaluate(label == label_of.end() ? key : label->second, g, "watchdog log"))
      stalls.push_back(std::move(*s));
  }
  return stalls;
}

std::string GroupLabel(const PgStall& s) {
  return s.desc.empty() ? s.pg : fmt::format("{} ({})", s.pg, s.desc);
}

}  // namespace strata::hang

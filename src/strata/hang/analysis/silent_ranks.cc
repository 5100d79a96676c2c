#include "strata/hang/analysis/silent_ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "strata/core/text_scan.h"
#include "strata/hang/analysis/stack_tree.h"

namespace strata::hang {
namespace {

// The global rank a line speaks for: torchrun's prefix, else "[Rank N]" of the default group
// (a rank inside another group is group-local, not a global rank).
std::optional<int64_t> GlobalRankOf(std::optional<int64_t> global, std::optional<int64_t> pg_rank,
                                    const std::string& pg_id) {
  if (global) return global;
  if (pg_rank && (pg_id.empty() || pg_id == "0")) return pg_rank;
  return std::nullopt;
}

// Every rank with any evidence of its own: a line it printed, a dump, a stack, a record.
std::set<int64_t> Heard(const EvidenceSet& ev, const Verdict& v) {
  std::set<int64_t> heard(v.ranks_seen.begin(), v.ranks_seen.end());
  heard.insert(v.dead.begin(), v.dead.end());
  for (const WatchdogEvent& e : ev.watchdog) {
    if (auto r = GlobalRankOf(e.global_rank, e.pg_rank, e.pg_id)) heard.insert(*r);
    if (e.from_rank && (e.pg_id.empty() || e.pg_id == "0")) heard.insert(*e.from_rank);
  }
  for (const FailureSignal& s : ev.failures) {
    if (auto r = GlobalRankOf(s.global_rank, s.pg_rank, s.pg_id)) heard.insert(*r);
  }
  for (const LogSignal& s : ev.log_signals) {
    if (s.global_rank) heard.insert(*s.global_rank);
  }
  for (const LoadedLog& l : ev.logs) {
    if (l.rank) heard.insert(*l.rank);
  }
  for (const auto& [file, dump] : ev.fr_dumps) {
    if (dump.rank) heard.insert(*dump.rank);
  }
  return heard;
}

// NCCL's "comm 0x... rank 3 nranks 8 cudaDev 3 ... Init COMPLETE": the largest communicator is
// the whole job's.
std::optional<int64_t> NcclInitRanks(const EvidenceSet& ev) {
  std::optional<int64_t> n;
  for (const WatchdogEvent& e : ev.watchdog) {
    if (auto r = IntAfter(e.text, " nranks "); r && *r > 0 && *r <= kMaxWorldSize)
      n = std::max(n.value_or(0), *r);
  }
  return n;
}

}  // namespace

SilentRanks InferSilentRanks(const EvidenceSet& ev, const Verdict& v) {
  SilentRanks out;
  std::set<int64_t> waiting;
  for (const WatchdogEvent& e : ev.watchdog) {
    if (e.kind != WatchdogEventKind::kTimeout) continue;
    if (auto r = GlobalRankOf(e.global_rank, e.pg_rank, e.pg_id)) waiting.insert(*r);
  }
  out.waiting.assign(waiting.begin(), waiting.end());
  // One rank's timeout says nothing about the others: its paste may be all the reporter chose.
  if (waiting.size() < 2) return out;
  const std::set<int64_t> heard = Heard(ev, v);
  const int64_t highest = *heard.rbegin();
  if (v.expected_world) {
    out.world = v.expected_world;
    out.world_source = "WORLD_SIZE, the default group or NCCL RAS";
  } else if (auto n = NcclInitRanks(ev)) {
    out.world = n;
    out.world_source = fmt::format("NCCL init lines (nranks {})", *n);
  }
  bool inferred = false;
  if (!out.world || *out.world <= highest) {
    // A rank beyond any job is a misread number (binary debris, a PID): no world to infer.
    if (highest >= kMaxWorldSize) {
      out.note = fmt::format(
          "rank {} is beyond any job ({} ranks at most): a misread number; no world size is "
          "inferred from the ranks that appear, and no rank is named silent",
          highest, kMaxWorldSize);
      return out;
    }
    out.world = highest + 1;
    out.world_source = fmt::format("the ranks that appear (up to rank {})", highest);
    out.world_at_least = true;
    inferred = true;
  }
  const RankRuns gaps = RankGaps(heard, *out.world);
  const int64_t unheard = RunsSize(gaps);
  if (unheard == 0) return out;
  // With a stated world size, named only when they are a minority of the job (the rule of the
  // stack groups: in four ranks or fewer, fewer than the waiters; else at most a quarter): half a
  // job without lines is a partial paste, not half a job stuck elsewhere.
  // Without a stated world size, the ranks that appear bound it from below only, and a pasted
  // excerpt of interleaved output may skip any rank: one gap among at least three waiters is
  // named (ranks 1-3 time out, rank 0 never appears); two gaps are more likely a cut paste.
  const auto n = static_cast<int64_t>(waiting.size());
  const bool minority =
      inferred ? unheard == 1 && n >= 3 : (n <= 4 ? unheard < n : unheard * 4 <= n);
  if (minority) {  // fewer than the waiters: as many ranks as the evidence names, no more
    for (const auto& [first, last] : gaps) {
      for (int64_t r = first; r <= last; ++r) out.silent.push_back(r);
    }
  } else {
    out.unheard_count = unheard;
    out.unheard_ranges = FormatRuns(gaps);
  }
  return out;
}

}  // namespace strata::hang

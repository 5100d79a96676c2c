#include "strata/hang/analysis/silent_ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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
    // The rank whose communicator was aborted raised the error itself: its rank in the
    // communicator, read as the watchdog's "[Rank N]" is where no group is named.
    if (s.kind == LogSignalKind::kCommAborted) {
      if (auto r = GlobalRankOf(s.global_rank, s.value, "")) heard.insert(*r);
    }
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

const FailureSignal* RecordAfterTimeouts(const EvidenceSet& ev) {
  std::map<std::string, int> last_timeout;  // file -> line of its last timeout
  for (const WatchdogEvent& e : ev.watchdog) {
    if (e.kind != WatchdogEventKind::kTimeout) continue;
    int& line = last_timeout[e.file];
    line = std::max(line, e.line);
  }
  for (const FailureSignal& s : ev.failures) {
    if (s.kind != FailureKind::kWorkerFailed && s.kind != FailureKind::kChildFailed) continue;
    const auto it = last_timeout.find(s.file);
    if (it != last_timeout.end() && s.line > it->second) return &s;
  }
  return nullptr;
}

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
  // excerpt of interleaved output may skip any rank: one gap among at least three waiters is a
  // suspect (ranks 1-3 time out, rank 0 never appears); two gaps are more likely a cut paste.
  const auto n = static_cast<int64_t>(waiting.size());
  const bool minority =
      inferred ? unheard == 1 && n >= 3 : (n <= 4 ? unheard < n : unheard * 4 <= n);
  if (minority) {  // fewer than the waiters: as many ranks as the evidence names, no more
    // Named only where the log went on past the timeouts (silent_ranks.h); else the log may be
    // an excerpt that ends before their own timeout lines.
    std::vector<int64_t>& named = RecordAfterTimeouts(ev) ? out.silent : out.unconfirmed;
    for (const auto& [first, last] : gaps) {
      for (int64_t r = first; r <= last; ++r) named.push_back(r);
    }
    if (!out.unconfirmed.empty()) {
      const WatchdogEvent* last = nullptr;
      for (const WatchdogEvent& e : ev.watchdog) {
        if (e.kind == WatchdogEventKind::kTimeout && (!last || e.line > last->line)) last = &e;
      }
      if (last) {  // named as the findings cite lines: the file's name, without its folder
        const size_t slash = last->file.rfind('/');
        out.last_timeout = fmt::format(
            "{}:{}", slash == std::string::npos ? last->file : last->file.substr(slash + 1),
            last->line);
      }
    }
  } else {
    out.unheard_count = unheard;
    out.unheard_ranges = FormatRuns(gaps);
  }
  return out;
}

std::vector<std::string> SilentRanksNotes(const SilentRanks& s) {
  std::vector<std::string> notes;
  if (!s.note.empty()) notes.push_back(s.note);
  if (!s.world) return notes;
  const std::string world =
      fmt::format("of a world of {}{} (from {})", s.world_at_least ? "at least " : "", *s.world,
                  s.world_source);
  const std::string waiting = RanksText(s.waiting);
  if (!s.silent.empty() || s.unheard_count > 0) {
    const std::string ranks =
        s.silent.empty()
            ? fmt::format("{} {}", s.unheard_count == 1 ? "rank" : "ranks", s.unheard_ranges)
            : RanksText(s.silent);
    notes.push_back(fmt::format(
        "{} {} left no line, dump or stack while {} timed out{}", ranks, world, waiting,
        s.silent.empty() ? ": too many to name as silent (the evidence may be a partial copy)"
                         : ": silent, a suspect (a rank that never reached the collective often "
                           "writes nothing)"));
  }
  if (!s.unconfirmed.empty()) {
    const std::string ranks = RanksText(s.unconfirmed);
    const bool one = s.unconfirmed.size() == 1;
    notes.push_back(fmt::format(
        "{} {} left no line, dump or stack while {} timed out, and {} not named silent: the "
        "evidence ends with no launcher record after the timeouts (the last timeout line is {}), "
        "and each "
        "rank's watchdog prints its own timeout line, so {} may simply lie past the end of this "
        "excerpt; the log on to the launcher's exit records, {} own log, or a py-spy or Flight "
        "Recorder dump of {} would settle it",
        ranks, world, waiting, one ? "is" : "are", s.last_timeout, one ? "its line" : "theirs",
        one ? ranks + "'s" : "their", ranks));
  }
  return notes;
}

}  // namespace strata::hang

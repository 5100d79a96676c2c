#include "strata/hang/analysis/horovod_finding.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "strata/core/strings.h"
#include "strata/hang/analysis/finding_reports.h"
#include "strata/hang/analysis/stack_tree.h"

namespace strata::hang {

// Each warning lists the ranks missing at that moment; a later one supersedes an earlier one in
// the same log (ranks that caught up drop out), so the last warning of each log counts.
bool HorovodStall(const EvidenceSet& ev, Finding& f) {
  std::map<std::string, const FailureSignal*> last;
  for (const FailureSignal* s : Of(ev, FailureKind::kHorovodStall)) last[s->file] = s;
  if (last.empty()) return false;
  for (const auto& [file, s] : last) {
    if (!s->split) continue;
    // The groups wait on tensors the others never submit: the ranks took different paths.
    f.kind = "collective_mismatch";
    f.ranks = s->ranks;
    f.summary =
        s->ranks.empty()
            ? "Horovod stall: the ranks are split over different tensors, each group waiting on "
              "tensors the others never submit"
            : fmt::format(
                  "Horovod stall: rank {} submitted tensors no other rank submits, and waits on "
                  "them while the others wait on theirs",
                  FormatRankRanges(s->ranks));
    f.evidence.push_back(Cite(*s));
    return true;
  }
  std::set<int64_t> ranks;
  bool shutdown = false;
  for (const auto& [file, s] : last) {
    ranks.insert(s->ranks.begin(), s->ranks.end());
    shutdown = shutdown || Contains(s->detail, "shuts down");
  }
  f.kind = "lagging_rank";
  f.ranks.assign(ranks.begin(), ranks.end());
  f.summary =
      ranks.empty()
          ? "Horovod stall: some ranks never submitted tensors the others wait on; the warning "
            "lists only the ready ones, and the missing ones are above the highest listed"
          : fmt::format(
                "Horovod stall: rank {} never submitted tensors the other ranks wait on "
                "(stall inspector){}",
                FormatRankRanges(f.ranks),
                shutdown ? "; past HOROVOD_STALL_SHUTDOWN_TIME_SECONDS, Horovod shut "
                           "the job down"
                         : "");
  for (const auto& [file, s] : last) f.evidence.push_back(Cite(*s));
  return true;
}

bool HorovodTimelineFinding(const EvidenceSet& ev, Finding& f) {
  for (const HorovodTimeline& t : ev.timelines) {
    std::set<int64_t> world = t.ranks;
    if (world.empty()) {  // no negotiation closed: only ranks below the highest ready one exist
      int64_t highest = -1;
      for (const TimelineNegotiation& n : t.open) {
        if (!n.ready.empty()) highest = std::max(highest, *n.ready.rbegin());
      }
      for (int64_t r = 0; r <= highest; ++r) world.insert(r);
    }
    std::set<int64_t> missing;
    const TimelineNegotiation* first = nullptr;
    for (const TimelineNegotiation& n : t.open) {
      if (n.ready.empty()) continue;  // begun, no rank ready yet: nothing names a laggard
      bool any = false;
      for (int64_t r : world) {
        if (!n.ready.contains(r)) {
          missing.insert(r);
          any = true;
        }
      }
      if (any && (!first || n.begin_us < first->begin_us)) first = &n;
    }
    if (!first) continue;
    f.kind = "lagging_rank";
    f.ranks.assign(missing.begin(), missing.end());
    f.op = first->op;
    const double waited_s = static_cast<double>(t.last_ts_us - first->begin_us) / 1e6;
    f.summary = fmt::format(
        "Horovod timeline: rank {} never became ready for {} {} that ranks {} negotiated; the "
        "timeline{} ends {:.1f} s after that negotiation began",
        FormatRankRanges(f.ranks), first->op, first->tensor,
        FormatRankRanges(std::vector<int64_t>(first->ready.begin(), first->ready.end())),
        t.truncated ? " (cut off)" : "", waited_s);
    f.evidence.push_back(Cite(t.file, first->line,
                              fmt::format("NEGOTIATE_{} {} begun at {} us, never closed", first->op,
                                          first->tensor, first->begin_us)));
    return true;
  }
  return false;
}

}  // namespace strata::hang

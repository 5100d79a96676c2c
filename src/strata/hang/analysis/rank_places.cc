#include "strata/hang/analysis/rank_places.h"

#include <algorithm>
#include <map>

namespace strata::hang {
namespace {

// Fills what `place` lacks from another source's view of the same rank.
void Merge(RankPlace& place, const RankPlace& other) {
  if (place.host.empty()) place.host = other.host;
  if (!place.local_rank) place.local_rank = other.local_rank;
  if (!place.pid) place.pid = other.pid;
}

}  // namespace

std::vector<RankPlace> PlaceRanks(const EvidenceSet& ev) {
  std::map<int64_t, RankPlace> by_rank;
  auto add = [&](const RankPlace& p) {
    if (p.host.empty() && !p.local_rank) return;  // places nothing
    auto [it, fresh] = by_rank.try_emplace(p.rank, p);
    if (!fresh) Merge(it->second, p);
  };
  for (const RankEvidence& r : ev.ranks) {  // manifests first: they are read from /proc
    if (!r.process.rank) continue;
    RankPlace p;
    p.rank = *r.process.rank;
    p.host = r.host;
    p.local_rank = r.process.local_rank;
    if (r.process.pid > 0) p.pid = r.process.pid;
    p.source = "manifest";
    add(p);
  }
  for (const FailureSignal& s : ev.failures) {
    if (s.kind != FailureKind::kChildFailed || !s.global_rank) continue;
    RankPlace p;
    p.rank = *s.global_rank;
    p.host = s.host;
    p.local_rank = s.local_rank;
    p.source = "torchrun summary";
    add(p);
  }
  for (const WatchdogEvent& e : ev.watchdog) {  // "[rank3]:node3:4242:4242 [3] NCCL INFO ..."
    if (!e.global_rank || e.host.empty()) continue;
    RankPlace p;
    p.rank = *e.global_rank;
    p.host = e.host;
    p.pid = e.pid;
    p.source = "NCCL log line";
    add(p);
  }
  std::vector<RankPlace> out;
  for (auto& [rank, place] : by_rank) out.push_back(std::move(place));
  return out;
}

std::vector<RankPlace> PlacesOf(const std::vector<RankPlace>& places,
                                const std::vector<int64_t>& ranks) {
  std::vector<RankPlace> out;
  for (const RankPlace& p : places) {
    if (std::find(ranks.begin(), ranks.end(), p.rank) != ranks.end()) out.push_back(p);
  }
  return out;
}

}  // namespace strata::hang

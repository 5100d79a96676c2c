// Where each rank ran (host, local rank, pid), joined from every source that places a rank: the
// bundle manifests, torchrun's failure summary and NCCL lines carrying a launcher rank prefix.
// The verdict JSON gives these as separate fields next to the human "host (LOCAL_RANK n)" text.
#ifndef STRATA_HANG_ANALYSIS_RANK_PLACES_H_
#define STRATA_HANG_ANALYSIS_RANK_PLACES_H_

#include <cstdint>
#include <vector>

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang {

/// One entry per global rank the evidence places on a host, sorted by rank. A manifest wins
/// over a log line; fields one source lacks are filled from the next.
std::vector<RankPlace> PlaceRanks(const EvidenceSet& evidence);

/// The entries of `places` for `ranks` (ranks without a place are left out).
std::vector<RankPlace> PlacesOf(const std::vector<RankPlace>& places,
                                const std::vector<int64_t>& ranks);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_RANK_PLACES_H_

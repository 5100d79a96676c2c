// Horovod's own evidence of a stall: the stall inspector's warning (horovod_stall.h) and the
// timeline's negotiations (horovod_timeline.h). Both come from rank 0, the coordinator, and both
// name the ranks that never submitted a tensor the others wait on. finding.h orders them among
// the other first failures.
#ifndef STRATA_HANG_ANALYSIS_HOROVOD_FINDING_H_
#define STRATA_HANG_ANALYSIS_HOROVOD_FINDING_H_

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang {

/// The stall inspector's last warning in each log: the ranks it lists as missing.
bool HorovodStall(const EvidenceSet& ev, Finding& f);

/// A timeline that ends with a negotiation some ranks never joined: those ranks (every rank is
/// known from the negotiations that closed; without one, only ranks below the highest ready one).
bool HorovodTimelineFinding(const EvidenceSet& ev, Finding& f);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_HOROVOD_FINDING_H_

// The first failure, named in one vocabulary: what kind of problem the evidence shows
// (collective_timeout, collective_mismatch, lagging_rank, silent_rank, dead_rank, crash,
// cuda_error, oom, network, bootstrap, watchdog_stuck, hang_at_exit; healthy; or unknown when
// nothing was understood), the ranks the evidence names as its cause, the collective and the
// network peer or setting it names. docs/hang-accuracy.md measures it on public evidence.
#ifndef STRATA_HANG_ANALYSIS_FINDING_H_
#define STRATA_HANG_ANALYSIS_FINDING_H_

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang {

/// Fills v.finding from the evidence and the rest of the verdict (stalls, patterns, culprit).
void FindFirstFailure(const EvidenceSet& evidence, Verdict& v);

/// True for every kind but "healthy" and "unknown": the exit code is 1.
bool IsProblem(const Finding& f);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_FINDING_H_

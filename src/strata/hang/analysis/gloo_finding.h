// The first failure of a job that ran on Gloo, from its log signals (parsers/gloo_log.h) and the
// comparison of its flight-recorder sequences (gloo_sequences.h). Gloo has no watchdog: a failed
// collective raises in the process, so a rank that left no dump while its peers did is the first
// suspect; which kind of failure it is follows from what the survivors logged:
//   a different op or size at the same position    collective_mismatch (the odd rank, if all the
//                                                  others agree), or Gloo's own size enforce
//   "Connection closed by peer" / "... reset by peer"  dead_rank: the members with no evidence
//   "Timed out waiting Nms for recv|send ..."        collective_timeout: ranks behind, else the
//                                                  members with no evidence
#ifndef STRATA_HANG_ANALYSIS_GLOO_FINDING_H_
#define STRATA_HANG_ANALYSIS_GLOO_FINDING_H_

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang {

/// Fills `f` and returns true when the evidence holds Gloo signals or a Gloo stall that says
/// what failed; false otherwise (the other rules of finding.cc apply).
bool GlooFinding(const EvidenceSet& ev, const Verdict& v, Finding& f);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_GLOO_FINDING_H_

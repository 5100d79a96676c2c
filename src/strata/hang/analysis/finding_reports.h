// First failures that one report line names outright, and the two helpers every finding uses
// to cite and select failure lines: torchrun's worker exits and ProcessGroupWrapper's
// (TORCH_DISTRIBUTED_DEBUG=DETAIL) mismatch report (Horovod's are in horovod_finding.h).
// finding.h orders them among the others.
#ifndef STRATA_HANG_ANALYSIS_FINDING_REPORTS_H_
#define STRATA_HANG_ANALYSIS_FINDING_REPORTS_H_

#include <string>
#include <vector>

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang {

/// "log.txt:12: the line": the file without its directory.
std::string Cite(const std::string& file, int line, const std::string& text);
std::string Cite(const FailureSignal& s);
std::string Cite(const WatchdogEvent& e);

/// The failure lines (watchdog events) of one kind, in evidence order.
std::vector<const FailureSignal*> Of(const EvidenceSet& ev, FailureKind kind);
std::vector<const WatchdogEvent*> Of(const EvidenceSet& ev, WatchdogEventKind kind);

/// torchrun's summary names a root cause killed from outside (SIGKILL): it precedes the timeouts.
bool KilledRootCause(const EvidenceSet& ev);

/// torchrun's "failed (exitcode: N) local_rank: L" line; `killed_only`: only exit code -9.
bool WorkerFailed(const EvidenceSet& ev, Finding& f, bool killed_only);

/// "Detected mismatch between collectives on ranks": a mismatch, naming neither rank.
bool DetailMismatch(const EvidenceSet& ev, Finding& f);

/// torch_ucc's comm check: the ranks that never posted the collective the others wait in are
/// behind.
bool UccNotPosted(const EvidenceSet& ev, Finding& f);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_FINDING_REPORTS_H_

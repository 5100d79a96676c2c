// Per process group: which collective is stalled, who enqueued it (waiting), who never did
// (behind), and who left no evidence (missing), from flight-recorder dumps and from the
// watchdog's "last enqueued / last completed work" log lines. The rule (research note, section 6):
// the stalled sequence number s = min over ranks of last_completed + 1; ranks with
// last_enqueued >= s wait in s, ranks with last_enqueued < s are behind.
#ifndef STRATA_HANG_ANALYSIS_PG_STALL_H_
#define STRATA_HANG_ANALYSIS_PG_STALL_H_

#include <string>
#include <utility>
#include <vector>

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

/// One PgStall per process group whose queue is not drained on every rank, from FR dumps.
std::vector<PgStall> StallsFromFlightRecorder(
    const std::vector<std::pair<std::string, FrDump>>& dumps);

/// The same from watchdog log events (global ranks from the "[rankN]:" prefix).
std::vector<PgStall> StallsFromWatchdog(const std::vector<WatchdogEvent>& events);

/// "3 (DATA_PARALLEL_GROUP)", or "3" when the evidence gives the group no description.
std::string GroupLabel(const PgStall& s);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_PG_STALL_H_

// Values the evidence printed that stand for "unknown": torch's -1 and 2^64-1 in watchdog lines
// (NumelIn, last completed work), the Flight Recorder's "N/A" and -1 dimensions, "<unknown>"
// frames. The parsers keep them out of the numbers; this lists them for the verdict, so a reader
// is told they were placeholders rather than left to take them for values.
#ifndef STRATA_HANG_ANALYSIS_PLACEHOLDERS_H_
#define STRATA_HANG_ANALYSIS_PLACEHOLDERS_H_

#include <vector>

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang {

/// Every placeholder, in evidence order; a value repeated on many lines of one file is listed
/// once per (file, field, value).
std::vector<Placeholder> FindPlaceholders(const EvidenceSet& evidence);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_PLACEHOLDERS_H_

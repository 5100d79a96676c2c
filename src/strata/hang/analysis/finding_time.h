// When a candidate first failure happened, on the evidence's own clock: the order of the
// evidence in time, which finding.cc reads before its precedence (a failure printed before
// another cannot be its consequence).
#ifndef STRATA_HANG_ANALYSIS_FINDING_TIME_H_
#define STRATA_HANG_ANALYSIS_FINDING_TIME_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang {

/// The year a glog header's time is read in (glog prints none): the year of torchrun's record
/// time or of the first full date a failure line prints, else 2000. Only the order of times
/// matters, and every time of one evidence set is read in the same year.
int64_t EvidenceYear(const EvidenceSet& ev);

/// When a line was written, in seconds on the log's clock (core/timestamp.h): a full date near
/// its start ("2023-10-26 12:12:06", "[2024-08-20 11:37:36,266]") or a glog header, which prints
/// the month and the day but no year ("[rank1]:[E1101 17:03:05.823968890 ProcessGroupNCCL.cpp:
/// 607]", "E0323 21:57:08.583000 23 torch/..."), read in `year`. nullopt when it prints neither.
std::optional<double> LineTime(std::string_view text, int64_t year);

/// When the line a finding cites first was written: the failure line's, out-of-memory line's or
/// watchdog event's own time (torchrun's record time for a record), nullopt when that line prints
/// none or the finding cites no such line (a stack, any other pattern).
std::optional<double> FindingTime(const EvidenceSet& ev, const Finding& f, int64_t year);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_FINDING_TIME_H_

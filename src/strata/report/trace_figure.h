// The report's figure of measured profiler traces (`strata report --trace`): where each rank's GPU
// time went, in four parts that do not overlap and add up to the measured span: computing (with
// the communication it overlaps), NCCL not overlapped, other communication not overlapped, and
// idle (host-bound). Per step when the traces mark steps (the mean over the steps), else the
// whole trace.
#ifndef STRATA_REPORT_TRACE_FIGURE_H_
#define STRATA_REPORT_TRACE_FIGURE_H_

#include <cstddef>

#include "strata/profile/profile.h"
#include "strata/report/html_report.h"

namespace strata {

/// Ranks drawn one bar each; a larger world is drawn as its fastest, median and slowest rank
/// (by span), so a 10,000-rank profile stays a three-bar figure.
inline constexpr size_t kMaxTraceBars = 16;

ReportFigure TraceFigure(const profile::ProfileReport& report);

}  // namespace strata

#endif  // STRATA_REPORT_TRACE_FIGURE_H_

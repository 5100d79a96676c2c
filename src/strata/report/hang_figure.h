// The report's picture of a hang: who waits for whom. Ranks are drawn as groups, never one box
// per rank (a 10,000-rank hang draws as many boxes as it has kinds of state): each process
// group's stall (the ranks waiting in its collective, and the ranks behind it), the stack groups,
// the dead and missing ranks, and the culprit they all point to.
#ifndef STRATA_REPORT_HANG_FIGURE_H_
#define STRATA_REPORT_HANG_FIGURE_H_

#include "strata/hang/analysis/verdict.h"
#include "strata/report/html_report.h"

namespace strata {

ReportFigure HangFigure(const hang::Verdict& verdict);

}  // namespace strata

#endif  // STRATA_REPORT_HANG_FIGURE_H_

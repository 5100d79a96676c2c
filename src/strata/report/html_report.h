// `strata report`: one self-contained HTML page of a job's evaluation. Each figure is inline SVG
// drawn here (no script, no external resource, readable printed), with its numbers in a table
// beside it: every drawn number carries data-key/data-value, and so does the table cell that
// prints it, so a test (and a reader) can check the picture against the table.
#ifndef STRATA_REPORT_HTML_REPORT_H_
#define STRATA_REPORT_HTML_REPORT_H_

#include <string>
#include <vector>

#include "strata/eval/evaluation.h"
#include "strata/plan/planner.h"

namespace strata {

/// One figure: its id ("memory", "step", "map", "plan"), a heading, the SVG and the table.
struct ReportFigure {
  std::string id;
  std::string heading;
  std::string caption;  // what the picture shows and how to read it
  std::string svg;
  std::string table_html;
};

/// The memory ledger as a bar per phase (what was there after initialisation, and what the
/// phase adds), against the card and the model's error band.
ReportFigure MemoryFigure(const MemoryLedger& ledger);
/// One micro batch on the most loaded rank as a timeline (forward, exposed communication,
/// backward, recompute), and the step's exposed parts.
ReportFigure StepFigure(const StepResult& step);
/// The bandwidth map's levels, each with the traffic its groups put on it per step.
ReportFigure MapFigure(const BandwidthMap& map, const LayoutSection& traffic);
/// The planner's layouts: step time against peak memory, the winner and the job's own marked.
ReportFigure PlanFigure(const plan::PlanResult& plan);

/// The whole page: a header naming the job and how it was asked for, then the figures.
std::string RenderHtmlReport(const Evaluation& evaluation,
                             const std::vector<ReportFigure>& figures);

}  // namespace strata

#endif  // STRATA_REPORT_HTML_REPORT_H_

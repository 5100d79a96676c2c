#include "strata/report/hang_figure.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "strata/report/html_table.h"
#include "strata/report/map_report.h"
#include "strata/report/svg.h"

namespace strata {
namespace {

// A box of the graph: a set of ranks in one state.
struct Node {
  std::string key;    // data-key: "hang/waiting/PG 3 all_reduce #12"
  std::string label;  // what they do
  std::vector<int64_t> ranks;
  std::string colour;
};

// "0-7,9 (9 ranks)", cut to a readable length for big worlds.
std::string Ranks(const std::vector<int64_t>& ranks) {
  std::string list = RankList(ranks);
  if (list.size() > 40) list = list.substr(0, 37) + "...";
  return fmt::format("{} ({} rank{})", list, ranks.size(), ranks.size() == 1 ? "" : "s");
}

std::string Count(const std::vector<int64_t>& ranks) { return fmt::format("{}", ranks.size()); }

}  // namespace

ReportFigure HangFigure(const hang::Verdict& v) {
  // Left: who waits. Right: who they wait for (the culprit, the ranks behind, the dead).
  std::vector<Node> waiting, waited_for;
  for (const hang::PgStall& s : v.pg_stalls) {
    const std::string pg = s.pg.empty() ? "a process group" : "PG " + s.pg;
    const std::string what =
        fmt::format("{}{}: waiting in {} #{}", pg, s.desc.empty() ? "" : " (" + s.desc + ")",
                    s.op.empty() ? "a collective" : s.op, s.stalled_seq);
    if (!s.waiting.empty()) waiting.push_back({"hang/" + what, what, s.waiting, "#56B4E9"});
    if (!s.behind.empty()) {
      const std::string b = fmt::format("{}: never reached #{}", pg, s.stalled_seq);
      waited_for.push_back({"hang/" + b, b, s.behind, "#E69F00"});
    }
  }
  if (waiting.empty()) {
    for (const hang::StackGroup& g : v.groups) {
      if (!hang::IsBlockedOnPeers(g.activity.kind)) continue;
      const std::string what = fmt::format("stack: {}{}", hang::ActivityName(g.activity.kind),
                                           g.activity.op.empty() ? "" : " in " + g.activity.op);
      waiting.push_back({"hang/" + what, what, g.ranks, "#56B4E9"});
    }
  }
  if (!v.dead.empty()) waited_for.push_back({"hang/dead", "dead (no process)", v.dead, "#999999"});
  if (!v.missing.empty()) {
    waited_for.push_back({"hang/missing", "missing from the evidence", v.missing, "#999999"});
  }
  if (v.culprit && !v.culprit->ranks.empty()) {
    const std::string c =
        fmt::format("culprit{}", v.culprit->phase.empty() ? "" : ": " + v.culprit->phase);
    waited_for.insert(waited_for.begin(), {"hang/culprit", c, v.culprit->ranks, "#D55E00"});
  }
  constexpr double kWidth = 720, kBoxW = 300, kBoxH = 44, kGap = 14, kTop = 30;
  const size_t rows = std::max<size_t>({waiting.size(), waited_for.size(), 1});
  Svg svg(kWidth, kTop + static_cast<double>(rows) * (kBoxH + kGap) + 10,
          "Hang: who waits for whom");
  svg.Text(10, 16, "waiting", "start", 11);
  svg.Text(kWidth - kBoxW - 10, 16, "waited for", "start", 11);
  HtmlTable table({"state", "ranks", "rank count"});
  auto draw = [&](const Node& n, double x, double y) {
    svg.Rect(x, y, kBoxW, kBoxH, n.colour, n.label + ": " + Ranks(n.ranks));
    svg.Text(x + 6, y + 17, n.label, "start", 10);
    svg.Text(x + 6, y + 34, Ranks(n.ranks), "start", 10, {n.key, Count(n.ranks)});
    table.AddRow({{n.label, ""}, {RankList(n.ranks), ""}, {Count(n.ranks), n.key}});
  };
  for (size_t i = 0; i < waiting.size(); ++i) {
    draw(waiting[i], 10, kTop + static_cast<double>(i) * (kBoxH + kGap));
  }
  for (size_t i = 0; i < waited_for.size(); ++i) {
    draw(waited_for[i], kWidth - kBoxW - 10, kTop + static_cast<double>(i) * (kBoxH + kGap));
  }
  // Every waiting group points at the first of the right column (the culprit when there is one).
  if (!waited_for.empty()) {
    const double tx = kWidth - kBoxW - 10, ty = kTop + kBoxH / 2;
    for (size_t i = 0; i < waiting.size(); ++i) {
      const double y = kTop + static_cast<double>(i) * (kBoxH + kGap) + kBoxH / 2;
      svg.Line(10 + kBoxW, y, tx, ty, "#333333");
      svg.Circle(tx - 3, ty, 3, "#333333");
    }
  }
  if (waiting.empty() && waited_for.empty()) {
    svg.Text(10, kTop + 20, v.headline.empty() ? "no hang found" : v.headline, "start", 11);
  }
  return {"hang", "Hang: who waits for whom",
          fmt::format("{} Boxes are sets of ranks in one state (never one box per rank); arrows "
                      "go from the waiting ranks to the ranks they wait for.",
                      v.headline.empty() ? std::string() : v.headline + "."),
          svg.Render(), table.Render()};
}

}  // namespace strata

// The HTML report: every figure draws something, every number it draws is in the table beside
// it with the same value (and every table number is drawn), the page is self-contained (no
// script, no external resource), and text from job files is escaped.
#include "strata/report/html_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "strata/eval/evaluation.h"
#include "strata/eval/workspace.h"
#include "strata/job/placement.h"
#include "strata/report/svg.h"

namespace strata::html_report_test {
namespace {

// data-key -> data-value of every element of `html` that carries one.
std::map<std::string, std::string> Data(const std::string& html) {
  std::map<std::string, std::string> out;
  static const std::regex kDatum(R"re(data-key="([^"]*)" data-value="([^"]*)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kDatum);
       it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = (*it)[2];
  }
  return out;
}

struct Reference {
  Workspace workspace;
  Evaluation evaluation;
  plan::PlanResult plan;
};

const Reference& ReferenceEvaluation() {
  static const Reference r = [] {
    Reference out;
    auto job = ResolveJob(JobRequest{});
    EXPECT_TRUE(job.ok());
    auto workspace = Workspace::Load();
    EXPECT_TRUE(workspace.ok());
    out.workspace = *workspace;
    auto e = EvaluateJob(out.workspace, *job);
    EXPECT_TRUE(e.ok()) << e.error().message;
    out.evaluation = std::move(*e);
    plan::PlanOptions options;
    options.top_k = 5;
    options.threads = 1;
    auto p = plan::PlanLayouts(*out.evaluation.setup, *out.evaluation.comm, out.workspace.memory,
                               options);
    EXPECT_TRUE(p.ok());
    out.plan = std::move(*p);
    return out;
  }();
  return r;
}

std::vector<ReportFigure> Figures(const Reference& r) {
  return {MemoryFigure(r.evaluation.ledger), StepFigure(*r.evaluation.step),
          MapFigure(r.evaluation.comm->map(), *r.evaluation.traffic), PlanFigure(r.plan)};
}

TEST(HtmlReport, EveryDrawnNumberIsInTheTableBesideItAndBack) {
  for (const ReportFigure& f : Figures(ReferenceEvaluation())) {
    SCOPED_TRACE(f.id);
    const auto drawn = Data(f.svg);
    const auto tabled = Data(f.table_html);
    EXPECT_GE(drawn.size(), 4u) << f.svg;
    EXPECT_EQ(drawn, tabled);
  }
}

TEST(HtmlReport, ThePageIsSelfContained) {
  const Reference& r = ReferenceEvaluation();
  const std::string page = RenderHtmlReport(r.evaluation, Figures(r));
  for (const char* id : {"memory", "step", "map", "plan"}) {
    EXPECT_NE(page.find(std::string("<figure data-figure=\"") + id + "\">"), std::string::npos)
        << id;
  }
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find(" src="), std::string::npos);
  EXPECT_EQ(page.find("href="), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
}

// The reference job's numbers as the other views print them: the step figure's total is
// `strata step`'s, the memory figure's peak from step 2 on is `strata memory`'s.
TEST(HtmlReport, FiguresCarryTheEvaluationsNumbers) {
  const Reference& r = ReferenceEvaluation();
  const auto memory = Data(MemoryFigure(r.evaluation.ledger).svg);
  EXPECT_EQ(
      memory.at("memory/steady_peak"),
      fmt::format("{:.2f}", r.evaluation.ledger.PhaseOf(Phase::kSteadyPeak).bytes.value() / 1e9));
  // The H20: nvidia-smi memory.total 97,871 MiB - the driver's 613.3 MiB = 101.98 GB
  // (data/memory_overheads.yaml, device_capacity), not the datasheet's 96 GB.
  EXPECT_EQ(memory.at("memory/capacity"), "101.98");
  double exposed = 0;
  for (const auto& [key, value] : Data(StepFigure(*r.evaluation.step).svg)) {
    if (key.starts_with("step/")) exposed += std::stod(value);
  }
  // The exposed parts add up to the step (each printed to the millisecond: 17 parts at most).
  EXPECT_NEAR(exposed, r.evaluation.step->step.s(), 0.009);
}

// A hand-made ledger: a 100 GB card, phases of 40, 80, 90, 50 and 95 GB. The axis tops at
// 1.05 x 100 GB over 230 units (y 20 to 250), so the after-initialisation bar is
// 40e9 x 230 / 105e9 = 87.6 units tall and the steady peak's added part (95 - 40) x 230 / 105 =
// 120.5 units.
TEST(HtmlReport, MemoryBarsAreToScale) {
  MemoryLedger l;
  l.capacity = Bytes::GB(100);
  l.band_low = Bytes::GB(90);
  l.band_high = Bytes::GB(99);
  l.phases = {{Phase::kAfterInit, Bytes::GB(40), "", {}},
              {Phase::kForwardPeak, Bytes::GB(80), "", {}},
              {Phase::kBackwardPeak, Bytes::GB(90), "", {}},
              {Phase::kFirstOptimizerStep, Bytes::GB(50), "", {}},
              {Phase::kSteadyPeak, Bytes::GB(95), "", {}}};
  const std::string svg = MemoryFigure(l).svg;
  EXPECT_NE(svg.find(R"(height="87.6" fill="#0072B2")"), std::string::npos) << svg;
  EXPECT_NE(svg.find(R"(height="120.5" fill="#E69F00")"), std::string::npos) << svg;
  EXPECT_EQ(Data(svg).at("memory/forward_peak"), "80.00");
}

TEST(HtmlReport, TextFromJobFilesIsEscaped) {
  EXPECT_EQ(XmlEscape(R"(<a href="x">&'</a>)"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  Svg svg(10, 10, "t");
  svg.Text(0, 0, "</svg><script>", "start", 10, {"k<", "v\""});
  EXPECT_EQ(svg.Render().find("<script>"), std::string::npos);
  EXPECT_NE(svg.Render().find(R"(data-key="k&lt;" data-value="v&quot;")"), std::string::npos);
}

}  // namespace
}  // namespace strata::html_report_test

// The report's log and hang figures: a log drawn with a bounded number of points, its first,
// last, lowest and highest values as the log printed them; a hang drawn as groups of ranks,
// however many ranks there are.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <string>

#include "strata/report/hang_figure.h"
#include "strata/report/log_figure.h"
#include "strata/report/trace_figure.h"
#include "support/golden.h"

namespace strata::report_figures_test {
namespace {

std::map<std::string, std::string> Data(const std::string& html) {
  std::map<std::string, std::string> out;
  static const std::regex kDatum(R"re(data-key="([^"]*)" data-value="([^"]*)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kDatum);
       it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = (*it)[2];
  }
  return out;
}

// 2,000 steps with loss = step: the series fills 512 one-step points at step 512, halves to 256
// points of 2, fills again at step 1,024, halves to 256 points of 4, and the remaining 976 steps
// make 244 more points of 4: 500 points. The first point holds steps 1-4, mean loss 2.5.
TEST(LogSeries, KeepsABoundedNumberOfPoints) {
  LogSeries s;
  for (int64_t i = 1; i <= 2000; ++i) {
    StepRecord r;
    r.step = i;
    r.loss = static_cast<double>(i);
    s.Add(r);
  }
  ASSERT_EQ(s.points().size(), 500u);
  EXPECT_EQ(s.points().front().steps, 4);
  EXPECT_DOUBLE_EQ(s.points().front().loss_sum / 4, 2.5);
  EXPECT_EQ(s.points().back().last_step, 2000);
  EXPECT_EQ(s.steps(), 2000);
}

// The course's log (tests/golden/logs/reference-megatron-swift): 30 iterations; lm loss
// 1.391403 at iteration 1, 1.138388 at 30, lowest 1.121693, highest the first; elapsed time per
// iteration 131846.2 ms at 1 and 120453.4 ms at 30; TFLOP/s/GPU printed 22.4 and 24.5. Four
// significant digits, as drawn.
TEST(LogFigure, TheCoursesLogAsItPrintedIt) {
  auto f = ReadLogFigure(testing::TestPath("golden/logs/reference-megatron-swift/input.log"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  const auto drawn = Data(f->svg);
  EXPECT_EQ(drawn, Data(f->table_html));
  EXPECT_EQ(drawn.at("log/loss/first"), "1.391");
  EXPECT_EQ(drawn.at("log/loss/last"), "1.138");
  EXPECT_EQ(drawn.at("log/loss/lowest"), "1.122");
  EXPECT_EQ(drawn.at("log/loss/highest"), "1.391");
  EXPECT_EQ(drawn.at("log/step_time/first"), "131.8");
  EXPECT_EQ(drawn.at("log/step_time/last"), "120.5");
  EXPECT_EQ(drawn.at("log/throughput/first"), "22.4");
  EXPECT_EQ(drawn.at("log/throughput/last"), "24.5");
  EXPECT_NE(f->caption.find("30 steps"), std::string::npos) << f->caption;
}

TEST(LogFigure, AFileWithNoStepSaysSo) {
  auto f = ReadLogFigure(testing::TestPath("golden/logs/not-a-log/input.log"));
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("no training step recognised"), std::string::npos)
      << f.error().message;
}

// 10,000 ranks wait in one all_reduce for rank 9,999: two boxes, one arrow, whatever the world.
TEST(HangFigure, TenThousandRanksDrawAsGroups) {
  hang::Verdict v;
  v.hang = true;
  v.headline = "culprit rank 9999";
  hang::PgStall s;
  s.pg = "0";
  s.op = "all_reduce";
  s.stalled_seq = 12;
  for (int64_t r = 0; r < 9999; ++r) s.waiting.push_back(r);
  s.behind = {9999};
  v.pg_stalls.push_back(s);
  v.culprit = hang::Culprit{{9999}, "node1250", "backward", {}};
  const ReportFigure f = HangFigure(v);
  const auto drawn = Data(f.svg);
  EXPECT_EQ(drawn, Data(f.table_html));
  ASSERT_EQ(drawn.size(), 3u) << f.svg;
  EXPECT_EQ(drawn.at("hang/PG 0: waiting in all_reduce #12"), "9999");
  EXPECT_EQ(drawn.at("hang/culprit"), "1");
  EXPECT_EQ(drawn.at("hang/PG 0: never reached #12"), "1");
  // Three boxes (rect + two texts each), one arrow (line + head), two column titles: 12.
  EXPECT_LT(std::count(f.svg.begin(), f.svg.end(), '\n'), 20) << f.svg;
}

profile::RankProfile Rank(int64_t rank, int64_t span_ns, int64_t busy_ns, int64_t nccl_ns,
                          int64_t other_ns) {
  profile::RankProfile r;
  r.rank = rank;
  r.file = fmt::format("rank{}.json", rank);
  r.whole_trace.span_ns = span_ns;
  r.whole_trace.busy_ns = busy_ns;
  r.whole_trace.nccl_exposed_ns = nccl_ns;
  r.whole_trace.comm_other_exposed_ns = other_ns;
  r.whole_trace.gpu_events = 100;
  return r;
}

// Rank 0: span 10 s, busy 8 s of which 1 s NCCL and 0.5 s other communication not overlapped:
// computing 8 - 1 - 0.5 = 6.5 s, idle 10 - 8 = 2 s. Rank 1 marks two steps of 4 s and 6 s span
// (busy 3 and 5 s, no exposed communication): the mean step is 5 s, computing 4 s, idle 1 s.
TEST(TraceFigure, FourDisjointPartsThatAddUpToTheSpan) {
  profile::ProfileReport report;
  report.ranks.push_back(Rank(0, 10'000'000'000, 8'000'000'000, 1'000'000'000, 500'000'000));
  profile::RankProfile r1 = Rank(1, 12'000'000'000, 8'000'000'000, 0, 0);
  for (const auto& [span, busy] :
       {std::pair{4'000'000'000LL, 3'000'000'000LL}, std::pair{6'000'000'000LL, 5'000'000'000LL}}) {
    profile::StepProfile step;
    step.figures.span_ns = span;
    step.figures.busy_ns = busy;
    r1.steps.push_back(step);
  }
  report.ranks.push_back(r1);
  const ReportFigure f = TraceFigure(report);
  const auto drawn = Data(f.svg);
  EXPECT_EQ(drawn, Data(f.table_html));
  ASSERT_EQ(drawn.size(), 8u) << f.svg;
  EXPECT_EQ(drawn.at("trace/rank 0/compute"), "6.5000");
  EXPECT_EQ(drawn.at("trace/rank 0/nccl_exposed"), "1.0000");
  EXPECT_EQ(drawn.at("trace/rank 0/comm_other_exposed"), "0.5000");
  EXPECT_EQ(drawn.at("trace/rank 0/idle"), "2.0000");
  EXPECT_EQ(drawn.at("trace/rank 1/compute"), "4.0000");
  EXPECT_EQ(drawn.at("trace/rank 1/idle"), "1.0000");
}

// 10,000 ranks whose span grows with the rank: the fastest (0), the median (5,000) and the
// slowest (9,999) are drawn, 3 bars of 4 parts.
TEST(TraceFigure, TenThousandRanksDrawAsThreeBars) {
  profile::ProfileReport report;
  for (int64_t r = 0; r < 10'000; ++r) {
    report.ranks.push_back(Rank(r, 1'000'000'000 + r * 1'000, 900'000'000, 0, 0));
  }
  const ReportFigure f = TraceFigure(report);
  const auto drawn = Data(f.svg);
  EXPECT_EQ(drawn, Data(f.table_html));
  EXPECT_EQ(drawn.size(), 12u);
  EXPECT_TRUE(drawn.contains("trace/fastest: rank 0/idle"));
  EXPECT_TRUE(drawn.contains("trace/median: rank 5000/idle"));
  EXPECT_TRUE(drawn.contains("trace/slowest: rank 9999/idle"));
  EXPECT_NE(f.caption.find("10000 ranks"), std::string::npos) << f.caption;
}

}  // namespace
}  // namespace strata::report_figures_test

// What the plan prints of each layout: sequence parallelism, which the planner turns on for every
// TP > 1 layout, named in the table and carried in the JSON.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "plan/plan_test_support.h"
#include "strata/report/plan_report.h"
#include "support/golden.h"

namespace strata {
namespace {

// The planner turns sequence parallelism on for every TP > 1 layout (layout_space.cc), and SP
// changes the activations' memory: the audit's l70.yaml winner, printed "TP2 PP8 VPP5 CP4 ...",
// re-ran with SP off at 81.29 GB against the plan's 74.63 GB. Every printed layout with TP > 1
// now names SP, and the JSON row carries it.
TEST(LayoutNameSp, EveryLayoutNamesSequenceParallelism) {
  plan::Candidate c;
  c.layout = ParallelLayout{2, 8, 5, 4, 1, 1, 1, true};
  c.micro_batch = 1;
  c.recompute = RecomputeGranularity::kNone;
  EXPECT_EQ(plan::LayoutName(c), "TP2 SP PP8 VPP5 CP4 EP1 ETP1 DP1 mb1 none");
  c.layout.sequence_parallel = false;
  EXPECT_EQ(plan::LayoutName(c), "TP2 PP8 VPP5 CP4 EP1 ETP1 DP1 mb1 none");

  const testing::Planned p = testing::PlanJob(testing::TestPath("job/data/l70-gb4.yaml"), {});
  ASSERT_TRUE(p.ok);
  const std::string text = PlanToText(p.setup, p.result, false);
  const Json json = PlanToJson(p.setup, p.result);
  ASSERT_EQ(json["top"].size(), p.result.top.size());
  for (size_t i = 0; i < p.result.top.size(); ++i) {
    const plan::Candidate& r = p.result.top[i].candidate;
    if (r.layout.tp == 1) continue;
    EXPECT_TRUE(r.layout.sequence_parallel);
    EXPECT_NE(plan::LayoutName(r).find(fmt::format("TP{} SP ", r.layout.tp)), std::string::npos);
    EXPECT_NE(text.find(plan::LayoutName(r)), std::string::npos) << text;
    EXPECT_TRUE(json["top"][i]["sequence_parallel"] == true);
  }
}

}  // namespace
}  // namespace strata

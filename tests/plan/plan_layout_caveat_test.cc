// `plan` prints, beside a winner or compared layout whose expert-parallel family the step
// model's validation misses in a known direction, that family's median error on the fit rows
// and how many rows it rests on (data/step_layout_error.yaml, derived from the three step
// corpora by tests/sim/step_layout_error_test.cc). Before, the plan ranked such layouts with
// no word on how far the model had missed runs like them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "plan/plan_test_support.h"
#include "strata/report/plan_report.h"
#include "strata/sim/step_layout_error.h"

namespace strata {
namespace {

TEST(PlanLayoutCaveat, DeepSeekV3WithInNodeEp8GetsItsFamilysError) {
  auto errors = LoadStepLayoutErrors();
  ASSERT_TRUE(errors.ok()) << errors.error().Format();
  const StepLayoutError* ep8 = FindStepLayoutError(*errors, "ep8_in_node");
  ASSERT_NE(ep8, nullptr) << "data/step_layout_error.yaml has no ep8_in_node family";
  // DeepSeek-V3 on 64 nodes of 8 H100, EP 8 and TP 1 fixed: every ranked layout's EP group is
  // one node's 8 GPUs.
  plan::PlanOptions options;
  options.top_k = 2;
  options.space.fixed.tp = 1;
  options.space.fixed.ep = 8;
  options.layout_errors = &*errors;
  const testing::Planned p =
      testing::PlanJob(kReferenceJobName,
                       {"model=deepseek-v3", "cluster=h100-8x8-ib400", "parallel.ep=8",
                        "parallel.tp=1", "parallel.dp=64", "batch.global_batch=1024",
                        "sequence.max_tokens=4096", "sequence.mean_tokens=4096"},
                       options, 64);
  ASSERT_TRUE(p.ok);
  ASSERT_FALSE(p.result.top.empty());
  ASSERT_EQ(p.result.layout_caveats.size(), 1u);
  const plan::LayoutCaveat& c = p.result.layout_caveats.front();
  EXPECT_EQ(c.error.family, "ep8_in_node");
  EXPECT_EQ(c.layouts.front().role, "winner");
  const std::string text = PlanToText(p.setup, p.result, false);
  const std::string expected = fmt::format("caveat: EP8 inside one NVLink domain (winner {}",
                                           plan::LayoutName(p.result.top.front().candidate));
  EXPECT_NE(text.find(expected), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("on the {} fit rows of that layout family the step model's "
                                  "median error is {:+.1f}%",
                                  ep8->rows, 100 * ep8->median_error)),
            std::string::npos)
      << text;
  const Json json = PlanToJson(p.setup, p.result);
  ASSERT_TRUE(json.contains("layout_caveats"));
  EXPECT_EQ(json["layout_caveats"][0]["fit_rows"], ep8->rows);
}

TEST(PlanLayoutCaveat, DenseTp8PlanHasNone) {
  auto errors = LoadStepLayoutErrors();
  ASSERT_TRUE(errors.ok()) << errors.error().Format();
  plan::PlanOptions options;
  options.top_k = 2;
  options.space.fixed.tp = 8;
  options.layout_errors = &*errors;
  const testing::Planned p =
      testing::PlanJob(kReferenceJobName,
                       {"model=llama-3.1-70b", "cluster=h100-8x8-ib400", "parallel.ep=1",
                        "parallel.tp=8", "parallel.dp=8", "batch.global_batch=512",
                        "sequence.max_tokens=8192", "sequence.mean_tokens=8192"},
                       options);
  ASSERT_TRUE(p.ok);
  ASSERT_FALSE(p.result.top.empty());
  EXPECT_TRUE(p.result.layout_caveats.empty());
  const std::string text = PlanToText(p.setup, p.result, false);
  EXPECT_EQ(text.find("caveat:"), std::string::npos) << text;
  EXPECT_FALSE(PlanToJson(p.setup, p.result).contains("layout_caveats"));
}

}  // namespace
}  // namespace strata

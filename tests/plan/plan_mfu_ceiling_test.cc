// `plan` makes `step`'s MFU ceiling check (data/mfu_ceiling.yaml) on every layout it ranks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "plan/plan_test_support.h"
#include "strata/report/plan_report.h"
#include "support/golden.h"

namespace strata {
namespace {

// Llama-3.1-405B on 1,024 H100 with NVIDIA's FP8 settings (the fixture's header cites the row).
// The plan's winner there was TP4 PP32 (last 2 layers) CP4 DP2 at a predicted 91.12% MFU of the
// bf16 dense peak, above the best published H100 FP8 run (827 / 989.5 = 83.6%, Megatron-Bridge
// 26.04.01), and the plan printed no warning while `step` on the same layout did. Now each
// ranked row above the ceiling is marked, the warning quotes `step`'s check, and --json carries
// it per layout; a row below the ceiling (the published layout at 83.3%) is not marked.
TEST(PlanMfuCeiling, RowsAboveThePublishedCeilingAreMarked) {
  const testing::Planned p =
      testing::PlanJob(testing::Llama405bH100Fp8Job(), {},
                       testing::FixedLayoutOptions(/*tp=*/4, /*pp=*/32, /*cp=*/4));
  ASSERT_TRUE(p.ok);
  ASSERT_FALSE(p.result.top.empty());
  ASSERT_DOUBLE_EQ(p.setup.tables.mfu_ceiling_fp8, 0.836);
  EXPECT_GT(p.result.top.front().step.mfu, 0.836);
  const std::string text = PlanToText(p.setup, p.result, false);
  EXPECT_NE(text.find("warning: MFU marked * (rank"), std::string::npos) << text;
  EXPECT_NE(text.find("no published run reaches this"), std::string::npos) << text;
  EXPECT_NE(text.find("above the best published 83.6% on H100 SXM with FP8 GEMMs"),
            std::string::npos)
      << text;
  const Json json = PlanToJson(p.setup, p.result);
  for (size_t i = 0; i < p.result.top.size(); ++i) {
    EXPECT_EQ(json["top"][i].contains("mfu_warning"), p.result.top[i].step.mfu > 0.836) << i;
  }
  // The published layout (yours): 37.63 s, 83.29% < 83.6%: no mark.
  EXPECT_LT(p.result.current.step.mfu, 0.836);
  EXPECT_FALSE(json["current"].contains("mfu_warning"));
}

}  // namespace
}  // namespace strata

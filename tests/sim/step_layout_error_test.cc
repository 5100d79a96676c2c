// The step model's error per expert-parallel layout family: derived from the fit rows the three
// step documents report (tests/sim/validation/band_rows/, written by their tests, each row with
// its layout's family), checked against data/step_layout_error.yaml as the error band is
// (step_error_band_test.cc).
#include "strata/sim/step_layout_error.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/step_band_rows.h"

namespace strata::step_layout_error_test {
namespace {

std::vector<StepBandRow> AllRows() { return testing::ReadAllBandRows(); }

TEST(StepLayoutError, FamiliesOfLayouts) {
  // 8 GPUs a node, megatron-core's rank order tp-cp-ep-dp-pp: EP 8 at TP 1 is ranks 0-7, one
  // node; EP 32 spans 4 nodes; EP 8 with ETP 2 spans ranks 0-15 (EP neighbours 2 apart), two
  // nodes; no EP, no family.
  ParallelLayout l;
  l.ep = 8;
  l.dp = 64;
  EXPECT_EQ(StepLayoutFamilyOf(l, 8), "ep8_in_node");
  l.ep = 32;
  EXPECT_EQ(StepLayoutFamilyOf(l, 8), "ep32_cross_node");
  l.ep = 8;
  l.tp = l.etp = 2;
  l.dp = 32;
  EXPECT_EQ(StepLayoutFamilyOf(l, 8), "ep8_cross_node");
  l.ep = 1;
  l.etp = 1;
  EXPECT_EQ(StepLayoutFamilyOf(l, 8), "");
  EXPECT_EQ(StepLayoutFamilyText("ep8_in_node"), "EP8 inside one NVLink domain");
  EXPECT_EQ(StepLayoutFamilyText("ep32_cross_node"), "EP32 across NVLink domains");
}

TEST(StepLayoutError, DerivedByHand) {
  // Three fit rows of ep8_in_node at errors (1 - 2) / 2 = -50%, (3 - 4) / 4 = -25% and
  // (6 - 5) / 5 = +20%: median -25% over 3 rows. A held-out row and a row without EP do not
  // count; ep32_cross_node has two fit rows (+10%, +30%): fewer than 3, left out.
  const std::vector<StepBandRow> rows = {
      {"a", "fit", "moe_natural_routing", 1.0, 2.0, "m", "g", "ep8_in_node"},
      {"b", "fit", "moe_natural_routing", 3.0, 4.0, "m", "g", "ep8_in_node"},
      {"c", "fit", "moe_natural_routing", 6.0, 5.0, "m", "g", "ep8_in_node"},
      {"d", "held_out", "moe_natural_routing", 1.0, 9.0, "m", "g", "ep8_in_node"},
      {"e", "fit", "dense", 1.0, 9.0, "m", "g", ""},
      {"f", "fit", "moe_forced_balance", 1.1, 1.0, "m", "g", "ep32_cross_node"},
      {"g", "fit", "moe_forced_balance", 1.3, 1.0, "m", "g", "ep32_cross_node"}};
  const std::vector<StepLayoutError> errors = DeriveStepLayoutErrors(rows);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].family, "ep8_in_node");
  EXPECT_EQ(errors[0].rows, 3);
  EXPECT_DOUBLE_EQ(errors[0].median_error, -0.25);
  // A fourth row at +60% makes the median the mean of the middle two: (-25% + 20%) / 2.
  std::vector<StepBandRow> four = rows;
  four.push_back({"h", "fit", "moe_natural_routing", 8.0, 5.0, "m", "g", "ep8_in_node"});
  EXPECT_DOUBLE_EQ(DeriveStepLayoutErrors(four)[0].median_error, -0.025);
}

TEST(StepLayoutError, DataIsDerivedFromTheFitRows) {
  const std::vector<StepLayoutError> derived = DeriveStepLayoutErrors(AllRows());
  auto data = LoadStepLayoutErrors();
  ASSERT_TRUE(data.ok()) << data.error().Format();
  std::string expected = "families:\n";
  for (const StepLayoutError& e : derived) {
    expected += fmt::format("  - family: {}\n    median_error: {:.4f}\n    rows: {}\n", e.family,
                            e.median_error, e.rows);
  }
  ASSERT_EQ(data->size(), derived.size()) << "data/step_layout_error.yaml's families should read:\n"
                                          << expected;
  for (size_t i = 0; i < derived.size(); ++i) {
    EXPECT_EQ((*data)[i].family, derived[i].family) << i;
    EXPECT_NEAR((*data)[i].median_error, derived[i].median_error, 5e-5) << derived[i].family;
    EXPECT_EQ((*data)[i].rows, derived[i].rows) << derived[i].family;
  }
  EXPECT_FALSE(HasFailure()) << "data/step_layout_error.yaml's families should read:\n" << expected;
}

TEST(StepLayoutError, BadDataIsAClearError) {
  const std::string ok =
      "families:\n  - family: ep8_in_node\n    median_error: -0.4\n    rows: 3\n";
  ASSERT_TRUE(ParseStepLayoutErrors(ok, "l.yaml").ok());
  struct Case {
    std::string text, expected;
  };
  const Case cases[] = {
      {"families: 3\n", "expected a list"},
      {"families:\n  - family: tp8\n    median_error: 0\n    rows: 3\n", "unknown family 'tp8'"},
      {"families:\n  - family: ep1_in_node\n    median_error: 0\n    rows: 3\n", "unknown family"},
      {ok + "  - family: ep8_in_node\n    median_error: 0\n    rows: 3\n", "listed twice"},
      {"families:\n  - family: ep8_in_node\n    median_error: -1.5\n    rows: 3\n", "> -1"},
      {"families:\n  - family: ep8_in_node\n    median_error: 0\n    rows: 2\n", "at least 3"},
      {"families:\n  - family: ep8_in_node\n    rows: 3\n", "median_error"},
      {ok + "    source: x\n", "source"},
      {"other: 1\n", "families"},
  };
  for (const Case& c : cases) {
    auto r = ParseStepLayoutErrors(c.text, "l.yaml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().Format().find(c.expected), std::string::npos)
        << c.text << " -> " << r.error().Format();
    EXPECT_NE(r.error().Format().find("l.yaml"), std::string::npos) << r.error().Format();
  }
}

}  // namespace
}  // namespace strata::step_layout_error_test

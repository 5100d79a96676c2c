// The step model's error band: derived from the fit rows the three step documents report
// (tests/sim/validation/band_rows/, written by their tests), checked against
// data/step_error_band.yaml, its cover of the held-out rows reported in docs/step-error-band.md.
#include "strata/sim/step_error_band.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/step_band_rows.h"
#include "support/golden.h"

namespace strata::step_error_band_test {
namespace {

std::vector<StepBandRow> AllRows() { return testing::ReadAllBandRows(); }

TEST(StepErrorBand, DerivedByHand) {
  // Two fit rows of a family at measured / predicted 2.0 and 0.5, a held-out row at 10 and a
  // row of another family: the band is 0.5 (b) to 2.0 (a) over 2 rows.
  const std::vector<StepBandRow> rows = {
      {"a", "fit", "dense", 1.0, 2.0, "m", "g", ""},
      {"b", "fit", "dense", 4.0, 2.0, "m", "g", ""},
      {"c", "held_out", "dense", 1.0, 10.0, "m", "g", ""},
      {"d", "fit", "moe_natural_routing", 1.0, 7.0, "m", "g", ""}};
  const StepErrorBand band = DeriveStepErrorBand("dense", rows);
  EXPECT_EQ(band.rows, 2);
  EXPECT_DOUBLE_EQ(band.low, 0.5);
  EXPECT_EQ(band.low_row, "b");
  EXPECT_DOUBLE_EQ(band.high, 2.0);
  EXPECT_EQ(band.high_row, "a");
  EXPECT_EQ(DeriveStepErrorBand("moe_forced_balance", rows).rows, 0);
}

TEST(StepErrorBand, ModelRunsByHand) {
  // m on H100: ratios 2.0 (a, fit) and 0.5 (b, held out), both counted: a record, not a fit;
  // m on H20: 3.0 (c); a row without a model is left out; n on H100: 1.0 (e).
  const std::vector<StepBandRow> rows = {{"a", "fit", "dense", 1.0, 2.0, "m", "H100", ""},
                                         {"b", "held_out", "dense", 4.0, 2.0, "m", "H100", ""},
                                         {"c", "fit", "dense", 1.0, 3.0, "m", "H20", ""},
                                         {"d", "fit", "dense", 1.0, 9.0, "", "H20", ""},
                                         {"e", "fit", "dense", 2.0, 2.0, "n", "H100", ""}};
  const std::vector<ModelStepRuns> runs = DeriveModelStepRuns(rows);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].model, "m");
  EXPECT_EQ(runs[0].gpu, "H100");
  EXPECT_EQ(runs[0].rows, 2);
  EXPECT_DOUBLE_EQ(runs[0].low, 0.5);
  EXPECT_EQ(runs[0].low_row, "b");
  EXPECT_DOUBLE_EQ(runs[0].high, 2.0);
  EXPECT_EQ(runs[0].high_row, "a");
  EXPECT_EQ(runs[1].gpu, "H20");
  EXPECT_DOUBLE_EQ(runs[1].low, 3.0);
  EXPECT_EQ(runs[2].model, "n");
  // The job's GPU first, then the others in file order; another model's runs never.
  const std::vector<ModelStepRuns> found = FindModelStepRuns(runs, "m", "H20");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].gpu, "H20");
  EXPECT_EQ(found[1].gpu, "H100");
  EXPECT_TRUE(FindModelStepRuns(runs, "x", "H100").empty());
}

TEST(StepErrorBand, FamiliesOfRuns) {
  EXPECT_EQ(StepFamilyOf(false, false), "dense");
  EXPECT_EQ(StepFamilyOf(false, true), "dense");
  EXPECT_EQ(StepFamilyOf(true, true), "moe_forced_balance");
  EXPECT_EQ(StepFamilyOf(true, false), "moe_natural_routing");
}

TEST(StepErrorBand, DataIsDerivedFromTheFitRows) {
  const std::vector<StepBandRow> rows = AllRows();
  auto data = LoadStepErrorBands();
  ASSERT_TRUE(data.ok()) << data.error().Format();
  std::string expected;
  for (std::string_view family : kStepFamilies) {
    const StepErrorBand derived = DeriveStepErrorBand(family, rows);
    if (derived.rows == 0) continue;
    expected += fmt::format(
        "  - family: {}\n    low: {:.4f}\n    high: {:.4f}\n    rows: {}\n    low_row: {}\n"
        "    high_row: {}\n",
        derived.family, derived.low, derived.high, derived.rows, derived.low_row, derived.high_row);
    const StepErrorBand* stored = FindStepErrorBand(data->bands, family);
    ASSERT_NE(stored, nullptr) << family << "; data/step_error_band.yaml should hold:\n"
                               << expected;
    EXPECT_NEAR(stored->low, derived.low, 5e-5) << family;
    EXPECT_NEAR(stored->high, derived.high, 5e-5) << family;
    EXPECT_EQ(stored->rows, derived.rows) << family;
    EXPECT_EQ(stored->low_row, derived.low_row) << family;
    EXPECT_EQ(stored->high_row, derived.high_row) << family;
  }
  EXPECT_FALSE(HasFailure()) << "data/step_error_band.yaml's bands should read:\n" << expected;
}

TEST(StepErrorBand, DataRecordsEachModelsRuns) {
  const std::vector<ModelStepRuns> derived = DeriveModelStepRuns(AllRows());
  auto data = LoadStepErrorBands();
  ASSERT_TRUE(data.ok()) << data.error().Format();
  std::string expected = "model_runs:\n";
  for (const ModelStepRuns& m : derived) {
    expected += fmt::format(
        "  - model: {}\n    gpu: {}\n    low: {:.4f}\n    high: {:.4f}\n    rows: {}\n"
        "    low_row: {}\n    high_row: {}\n",
        m.model, m.gpu, m.low, m.high, m.rows, m.low_row, m.high_row);
  }
  ASSERT_EQ(data->model_runs.size(), derived.size())
      << "data/step_error_band.yaml's model_runs should read:\n"
      << expected;
  for (size_t i = 0; i < derived.size(); ++i) {
    const ModelStepRuns& s = data->model_runs[i];
    const ModelStepRuns& d = derived[i];
    EXPECT_EQ(s.model, d.model) << i;
    EXPECT_EQ(s.gpu, d.gpu) << i;
    EXPECT_NEAR(s.low, d.low, 5e-5) << d.model << " " << d.gpu;
    EXPECT_NEAR(s.high, d.high, 5e-5) << d.model << " " << d.gpu;
    EXPECT_EQ(s.rows, d.rows) << d.model << " " << d.gpu;
    EXPECT_EQ(s.low_row, d.low_row) << d.model << " " << d.gpu;
    EXPECT_EQ(s.high_row, d.high_row) << d.model << " " << d.gpu;
  }
  EXPECT_FALSE(HasFailure()) << "data/step_error_band.yaml's model_runs should read:\n" << expected;
}

TEST(StepErrorBand, DocumentReportsTheHeldOutCover) {
  const std::vector<StepBandRow> rows = AllRows();
  std::string d =
      "# Step-time model: its error band per kind of run\n\n"
      "Generated by `tests/sim/step_error_band_test.cc` (it fails when this file differs from what "
      "the rows give; `UPDATE_GOLDEN=1` rewrites it). `strata step` prints, beside its prediction, "
      "where measured steps of runs of the job's kind landed relative to what the model predicted "
      "for them: the lowest and highest measured / predicted step over the **fit** rows of the "
      "three step corpora (`docs/step-validation.md`, `docs/step-validation-frameworks.md`, "
      "`docs/step-validation-cards.md`), kept in `data/step_error_band.yaml`. The held-out rows "
      "never enter a band; the table counts how many of them fall inside their kind's band, the "
      "band's own test on runs it was not drawn from.\n\n"
      "Kinds: `dense`; `moe_forced_balance` (the benchmark recipes' forced expert balance, a "
      "job's `moe.routing_imbalance: 1`); `moe_natural_routing` (a trained router on real data, "
      "the default of a job that states no imbalance). A band is as wide as the rows make it: a "
      "wide band says the model misses runs of that kind by that much, not that the run will "
      "land anywhere inside it.\n\n"
      "| kind | fit rows | band (measured / predicted) | set by | held-out rows | held out inside "
      "the band | held out below | held out above |\n"
      "|---|---|---|---|---|---|---|---|\n";
  std::string quote =
      "`step` prints the band of the job's kind of run, measured / predicted over "
      "the fit rows (`docs/step-error-band.md`):";
  for (std::string_view family : kStepFamilies) {
    const StepErrorBand band = DeriveStepErrorBand(family, rows);
    if (band.rows == 0) continue;
    int held = 0, inside = 0, below = 0, above = 0;
    for (const StepBandRow& r : rows) {
      if (r.family != family || r.split != "held_out") continue;
      ++held;
      const double ratio = r.measured_s / r.predicted_s;
      if (ratio < band.low) {
        ++below;
      } else if (ratio > band.high) {
        ++above;
      } else {
        ++inside;
      }
    }
    d += fmt::format("| {} | {} | {:.2f} to {:.2f} | {}, {} | {} | {} | {} | {} |\n", family,
                     band.rows, band.low, band.high, band.low_row, band.high_row, held, inside,
                     below, above);
    quote += fmt::format("{} {} {:.2f}x to {:.2f}x ({} of {} held-out rows inside)",
                         family == kStepFamilies[0] ? "" : ";", family, band.low, band.high, inside,
                         held);
  }
  d += "\n## Each model's measured runs\n\n"
       "Beside the band of the job's kind, `strata step` prints where the measured runs of the "
       "job's own model landed, per GPU, its GPU first (`model_runs` in "
       "`data/step_error_band.yaml`). These count every row of the three corpora, fit and held "
       "out: they are a record of how the model fared on that model, not a band, and nothing is "
       "derived from them.\n\n"
       "| model | GPU | runs | measured / predicted | set by |\n|---|---|---|---|---|\n";
  for (const ModelStepRuns& m : DeriveModelStepRuns(rows)) {
    d += m.rows == 1
             ? fmt::format("| {} | {} | 1 | {:.2f} | {} |\n", m.model, m.gpu, m.low, m.low_row)
             : fmt::format("| {} | {} | {} | {:.2f} to {:.2f} | {}, {} |\n", m.model, m.gpu, m.rows,
                           m.low, m.high, m.low_row, m.high_row);
  }
  EXPECT_TRUE(testing::MatchesGolden("../docs/step-error-band.md", d));
  // The README's "How far to trust a number" quotes each band and its held-out cover.
  EXPECT_NE(testing::ReadTestFile("../README.md").find(quote), std::string::npos)
      << "README.md should say: " << quote;
}

TEST(StepErrorBand, BadDataIsAClearError) {
  const std::string runs =
      "model_runs:\n  - model: m\n    gpu: H100\n    low: 1\n    high: 2\n    rows: 2\n"
      "    low_row: a\n    high_row: b\n";
  const std::string ok =
      "bands:\n  - family: dense\n    low: 0.5\n    high: 2\n    rows: 3\n    low_row: a\n"
      "    high_row: b\n";
  ASSERT_TRUE(ParseStepErrorBands(ok + runs, "b.yaml").ok());
  struct Case {
    std::string text, expected;
  };
  const Case cases[] = {
      {"bands: []\n" + runs, "expected a list"},
      {"bands:\n  - family: sparse\n    low: 1\n    high: 1\n    rows: 1\n    low_row: a\n"
       "    high_row: a\n",
       "unknown family 'sparse'"},
      {"bands:\n  - family: dense\n    low: 2\n    high: 1\n    rows: 1\n    low_row: a\n"
       "    high_row: a\n",
       "expected 0 < low <= high"},
      {ok + "  - family: dense\n    low: 1\n    high: 1\n    rows: 1\n    low_row: a\n"
            "    high_row: a\n",
       "listed twice"},
      {"bands:\n  - family: dense\n    low: 1\n", "high"},
      {"bands:\n  - family: dense\n    low: 1\n    high: 1\n    rows: 1\n    low_row: a\n"
       "    high_row: a\n    source: x\n",
       "source"},
      {"bands:\n  - family: dense\n    low: [1\n", "b.yaml"},
      // The model records: missing, not a list, a pair twice, a bad range, a missing GPU.
      {ok, "model_runs"},
      {ok + "model_runs: 3\n", "expected a list of {model, gpu"},
      {ok + runs + runs.substr(std::string("model_runs:\n").size()), "listed twice"},
      {ok + "model_runs:\n  - model: m\n    gpu: H100\n    low: 3\n    high: 2\n    rows: 2\n"
            "    low_row: a\n    high_row: b\n",
       "expected 0 < low <= high"},
      {ok + "model_runs:\n  - model: m\n    low: 1\n", "gpu"},
  };
  for (const Case& c : cases) {
    auto r = ParseStepErrorBands(c.text, "b.yaml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().Format().find(c.expected), std::string::npos)
        << c.text << " -> " << r.error().Format();
  }
}

}  // namespace
}  // namespace strata::step_error_band_test

// The RL job priced again at the lengths its run's log measured (measured_lengths.h). The
// repricing must be what a user gets by writing the measured means into the job by hand
// (`--set lengths.response_mean=...`): the same evaluation by the job file's own path, which is
// the independent derivation the step-time assertions rest on.
#include "strata/rl/measured_lengths.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rl/reference_rl.h"
#include "support/golden.h"

namespace strata::measured_lengths_test {
namespace {

const Workspace& Ws() {
  static const Workspace w = *Workspace::Load();
  return w;
}

RlSpec Reference() {
  auto spec = LoadRlSpec(kReferenceRlJobName);
  EXPECT_TRUE(spec.ok());
  return spec.ok() ? *spec : RlSpec{};
}

// verl-project/verl#7412's step 34 printed response_length/mean 1267.02 and no prompt length
// (tests/golden/cli_rl/verl_7412). The reference job assumes a 4,096-token mean response under
// an 8,192 cap, and a 1,024-token prompt: the repriced job takes 1,267.02 and keeps the rest.
TEST(MeasuredLengths, TheJobPricedAgainIsTheJobWithTheMeasuredMeanWritten) {
  const RlSpec spec = Reference();
  const LengthsRepricing r =
      RepriceAtMeasuredLengths(Ws(), spec, {.prompt_mean = std::nullopt, .response_mean = 1267.02});
  ASSERT_TRUE(r.evaluation.has_value()) << r.note;
  EXPECT_DOUBLE_EQ(r.evaluation->spec.lengths.response_mean, 1267.02);
  EXPECT_DOUBLE_EQ(r.evaluation->spec.lengths.prompt_mean, 1024);
  EXPECT_DOUBLE_EQ(r.evaluation->spec.lengths.response_max, 8192);
  EXPECT_EQ(r.note,
            "response mean 1,267 tokens where the job assumes 4,096; prompt mean: the job's 1,024 "
            "tokens (the log prints none); the caps (2,048 prompt, 8,192 response tokens) and the "
            "capped_exponential shape are the job's");

  auto by_hand = LoadRlSpec(kReferenceRlJobName, {"lengths.response_mean=1267.02"});
  ASSERT_TRUE(by_hand.ok()) << by_hand.error().Format();
  auto expected = EvaluateRl(Ws(), *by_hand);
  ASSERT_TRUE(expected.ok()) << expected.error().Format();
  const RlTimes& got = r.evaluation->configured.times;
  const RlTimes& want = expected->configured.times;
  EXPECT_DOUBLE_EQ(got.generation.s(), want.generation.s());
  EXPECT_DOUBLE_EQ(got.update.s(), want.update.s());
  EXPECT_DOUBLE_EQ(got.step.s(), want.step.s());
  // Fewer tokens a sample: every pass over the batch and the generation take less time than at
  // the assumed 4,096 (a sanity bound, not the derivation).
  EXPECT_LT(got.step.s(), testing::ReferenceRl().configured.times.step.s());
}

// Both means within 1% of the job's (verl prints the batch's mean; a job written from the log
// carries it rounded): nothing to price again, and the note says so.
TEST(MeasuredLengths, MeansWithinOnePercentAreTheJobsOwn) {
  const LengthsRepricing r =
      RepriceAtMeasuredLengths(Ws(), Reference(), {.prompt_mean = 1030, .response_mean = 4100});
  EXPECT_FALSE(r.evaluation.has_value());
  EXPECT_EQ(r.note,
            "the mean lengths the log prints are the job's (within 1%): the prediction is already "
            "at them");
}

// A mean at the cap is every response clipped there (verl's clip_ratio 1): the capped
// exponential's rate 0 has it, so it is priced, not refused as another cap (review finding: it
// was refused before).
TEST(MeasuredLengths, AMeanAtTheCapIsEverySampleClipped) {
  const LengthsRepricing r = RepriceAtMeasuredLengths(
      Ws(), Reference(), {.prompt_mean = std::nullopt, .response_mean = 8192});
  ASSERT_TRUE(r.evaluation.has_value()) << r.note;
  EXPECT_DOUBLE_EQ(r.evaluation->spec.lengths.Responses().ClipFraction(), 1.0);
}

struct Refusal {
  const char* name;
  MeasuredLengths measured;
  const char* note;
};

// What cannot stand in the job is said, not priced: a mean above the job's cap (no sample
// exceeds its cap, so the run's cap was another), a mean of zero, and a log without lengths.
TEST(MeasuredLengths, LengthsThatCannotStandInTheJobAreSaidNotPriced) {
  const Refusal cases[] = {
      {"response mean above the cap",
       {.prompt_mean = std::nullopt, .response_mean = 8192.5},
       "not priced at the log's lengths: the log's response mean, 8,192.5 tokens, is above the "
       "job's response cap of 8,192 tokens: the run's cap is not the job's"},
      {"prompt mean above its cap",
       {.prompt_mean = 3000.5, .response_mean = 1000},
       "not priced at the log's lengths: the log's prompt mean, 3,000.5 tokens, is above the "
       "job's prompt cap of 2,048 tokens: the run's cap is not the job's"},
      {"zero response",
       {.prompt_mean = std::nullopt, .response_mean = 0},
       "not priced at the log's lengths: the log's response mean is 0.0 tokens: no length to "
       "price"},
      {"no lengths",
       {},
       "the log prints no prompt or response length: the job's assumed lengths stand"},
  };
  for (const Refusal& c : cases) {
    const LengthsRepricing r = RepriceAtMeasuredLengths(Ws(), Reference(), c.measured);
    EXPECT_FALSE(r.evaluation.has_value()) << c.name;
    EXPECT_EQ(r.note, c.note) << c.name;
  }
}

// A uniform ending at the cap has a mean of at least half the cap (its lowest length is
// 2 x mean - max >= 0): at 1,267 of 8,192 it cannot stand, so the repricing uses the capped
// exponential and says why.
TEST(MeasuredLengths, AUniformThatCannotHaveTheMeanFallsBackAndSaysSo) {
  auto spec = LoadRlSpec(kReferenceRlJobName, {"lengths.response_distribution=uniform"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  const LengthsRepricing r =
      RepriceAtMeasuredLengths(Ws(), *spec, {.prompt_mean = std::nullopt, .response_mean = 1267});
  ASSERT_TRUE(r.evaluation.has_value()) << r.note;
  EXPECT_EQ(r.evaluation->spec.lengths.response_shape, ResponseShape::kCappedExponential);
  EXPECT_NE(r.note.find("the job's uniform responses cannot have that mean under the cap"),
            std::string::npos)
      << r.note;
  EXPECT_NE(r.note.find("capped_exponential instead"), std::string::npos) << r.note;
}

// Two steps of a verl log printing response means of 1,000 and 1,500 tokens and prompt means of
// 500 and 700: the job is priced at their means, 1,250 and 600 (each the mean over the steps
// that print it), the same as the job written with those two values.
TEST(MeasuredLengths, AVerlLogIsPricedAtItsStepsMeanLengths) {
  auto log = ParseVerlLog(
      "step:1 - timing_s/step:100 - prompt_length/mean:500 - response_length/mean:1000\n"
      "step:2 - timing_s/step:120 - prompt_length/mean:700 - response_length/mean:1500\n");
  ASSERT_TRUE(log.ok()) << log.error().Format();
  const VerlComparison c =
      CompareVerlLogAtMeasuredLengths(Ws(), testing::ReferenceRl(), *log, std::nullopt);
  auto by_hand =
      LoadRlSpec(kReferenceRlJobName, {"lengths.response_mean=1250", "lengths.prompt_mean=600"});
  ASSERT_TRUE(by_hand.ok()) << by_hand.error().Format();
  auto expected = EvaluateRl(Ws(), *by_hand);
  ASSERT_TRUE(expected.ok()) << expected.error().Format();
  bool seen = false;
  for (const VerlPhaseRow& r : c.rows) {
    if (r.key != "timing_s/step") continue;
    seen = true;
    ASSERT_TRUE(r.predicted_at_measured_lengths.has_value()) << c.measured_lengths_note;
    EXPECT_DOUBLE_EQ(*r.predicted_at_measured_lengths, expected->configured.times.step.s());
    // measured 110 s (the mean of 100 and 120)
    EXPECT_DOUBLE_EQ(*r.error_at_measured_lengths, expected->configured.times.step.s() / 110 - 1);
  }
  EXPECT_TRUE(seen);
}

// The column takes each row's figure from the row of the same key, and leaves the rows that are
// the lengths themselves empty.
TEST(MeasuredLengths, TheColumnMatchesRowsByKeyAndSkipsTheLengths) {
  auto row = [](std::string key, double predicted, std::optional<double> error) {
    VerlPhaseRow r;
    r.key = std::move(key);
    r.predicted = predicted;
    r.error = error;
    return r;
  };
  std::vector<VerlPhaseRow> rows{row("timing_s/gen", 108.4, -0.8),
                                 row("timing_s/step", 273.7, -0.76),
                                 row("response_length/mean", 4096, 2.23)};
  const std::vector<VerlPhaseRow> at{row("timing_s/step", 142.2, -0.88),
                                     row("timing_s/gen", 54.1, std::nullopt),
                                     row("response_length/mean", 1267, 0)};
  AddMeasuredLengthsColumn(rows, at);
  EXPECT_DOUBLE_EQ(*rows[0].predicted_at_measured_lengths, 54.1);
  EXPECT_FALSE(rows[0].error_at_measured_lengths.has_value());  // the repriced row had none
  EXPECT_DOUBLE_EQ(*rows[1].predicted_at_measured_lengths, 142.2);
  EXPECT_DOUBLE_EQ(*rows[1].error_at_measured_lengths, -0.88);
  EXPECT_FALSE(rows[2].predicted_at_measured_lengths.has_value());
}

}  // namespace
}  // namespace strata::measured_lengths_test

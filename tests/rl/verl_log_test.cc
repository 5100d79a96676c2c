// verl's console log read per phase (tests/golden/cli_rl/verl_7412: a real excerpt, its SOURCE
// says what was kept) and put beside the RL job's prediction. Expected numbers are the log's own
// text; predictions are worked out from the reference RL job's values.
#include "strata/rl/verl_log.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "rl/reference_rl.h"
#include "support/golden.h"

namespace strata::verl_log_test {
namespace {

// The excerpt of verl-project/verl#7412, step 34: the fields as printed in the issue (two of
// them broken across lines by the paste, joined back), the line cut at "perf/total_num_t".
TEST(VerlLogTest, ReadsTheIssueExcerpt) {
  auto log = ParseVerlLog(testing::ReadTestFile("golden/cli_rl/verl_7412/console.log"));
  ASSERT_TRUE(log.ok()) << log.error().Format();
  ASSERT_EQ(log->steps.size(), 1u);
  const VerlStepMetrics& m = log->steps[0];
  EXPECT_EQ(m.step, 34);
  EXPECT_EQ(m.line, 2);
  EXPECT_NEAR(*m.gen_s, 541.1881153844297, 1e-9);
  EXPECT_NEAR(*m.old_log_prob_s, 72.40668203681707, 1e-9);
  EXPECT_NEAR(*m.ref_s, 72.03436468541622, 1e-9);
  // Printed after the mid-number break ("0.0365777518600225" / "45 - timing_s/update_actor").
  EXPECT_NEAR(*m.update_actor_s, 472.1077583655715, 1e-9);
  EXPECT_NEAR(*m.update_weights_s, 5.82697419822216, 1e-9);
  EXPECT_NEAR(*m.step_s, 1163.9566092677414, 1e-9);
  EXPECT_NEAR(*m.response_mean_tokens, 1267.024169921875, 1e-9);
  EXPECT_NEAR(*m.response_max_tokens, 3072.0, 1e-9);
  EXPECT_FALSE(m.throughput_tokens_per_s_per_gpu.has_value());  // past the cut
  EXPECT_FALSE(log->version.has_value());
  ASSERT_EQ(log->notes.size(), 1u);
  EXPECT_EQ(log->notes[0], "line 2: 'perf/total_num_t' has no value (the line is cut off there)");
}

struct ParseCase {
  const char* name;
  const char* text;
  double gen_s;  // < 0: absent
  double throughput;
};

// Newer verl prints numpy scalars as np.float64(...); a version line sets the semantics.
TEST(VerlLogTest, NumpyScalarsAndVersions) {
  const ParseCase cases[] = {
      {"np.float64",
       "step:2 - timing_s/gen:np.float64(10.5) - timing_s/step:np.float64(20.25) - "
       "perf/throughput:np.float64(1500.0)\n",
       10.5, 1500.0},
      {"plain, CRLF",
       "step:3 - timing_s/gen:7.0 - timing_s/update_actor:3 - perf/throughput:12\r\n", 7.0, 12.0},
  };
  for (const ParseCase& c : cases) {
    auto log = ParseVerlLog(c.text);
    ASSERT_TRUE(log.ok()) << c.name << ": " << log.error().Format();
    ASSERT_EQ(log->steps.size(), 1u) << c.name;
    EXPECT_NEAR(*log->steps[0].gen_s, c.gen_s, 1e-12) << c.name;
    EXPECT_NEAR(*log->steps[0].throughput_tokens_per_s_per_gpu, c.throughput, 1e-12) << c.name;
  }
  auto log = ParseVerlLog("INFO verl version 0.7.0\nstep:1 - timing_s/step:5 - timing_s/gen:4\n");
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE(log->version.has_value());
  EXPECT_EQ(log->version->Format(), "0.7.0");
  EXPECT_FALSE(log->version->SeparatesSync());
}

struct ErrorCase {
  const char* name;
  const char* text;
  const char* error;
};

TEST(VerlLogTest, BadInputIsAClearError) {
  const ErrorCase cases[] = {
      {"empty", "",
       "no verl metrics line (\"step:N - key:value - ...\") in the log\n  hint: --log reads "
       "verl's console output (trainer.logger=console) and OpenRLHF's (\"Global step N: "
       "{...}\")"},
      {"megatron",
       " [2024-04-06 02:55:45] iteration       10/     100 | consumed samples:          640 | "
       "elapsed time per iteration (ms): 1000.0 | learning rate: 1.0E-05 | global batch size:    "
       "64 | lm loss: 1.0E+00 | loss scale: 1.0 | grad norm: 1.0 | number of skipped iterations: "
       "  0 | number of nan iterations:   0 |\n",
       "this is a megatron log, not verl's console log (no \"step:N - key:value - ...\" line)\n  "
       "hint: `strata logs` reads it"},
      {"validation only", "step:0 - val-core/openai/gsm8k/acc/mean@1:0.508\n",
       "verl's log holds no training step: its metrics lines carry neither timing_s/step nor "
       "timing_s/update_actor (step:0 is validation)"},
  };
  for (const ErrorCase& c : cases) {
    auto log = ParseVerlLog(c.text);
    ASSERT_FALSE(log.ok()) << c.name;
    EXPECT_EQ(log.error().Format(), c.error) << c.name;
  }
}

// Unknown keys are skipped without a word (verl prints a hundred); a value that is no number
// and a field cut off are noted with their line.
TEST(VerlLogTest, UnknownKeysSkippedBadValuesNoted) {
  auto log = ParseVerlLog(
      "step:5 - made/up_key:1 - timing_s/gen:fast - timing_s/step:9.5 - timing_s/upd\n");
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_FALSE(log->steps[0].gen_s.has_value());
  EXPECT_NEAR(*log->steps[0].step_s, 9.5, 1e-12);
  ASSERT_EQ(log->notes.size(), 2u);
  EXPECT_EQ(log->notes[0], "line 1: timing_s/gen: 'fast' is not a number");
  EXPECT_EQ(log->notes[1], "line 1: 'timing_s/upd' has no value (the line is cut off there)");
}

struct VersionCase {
  const char* text;
  bool valid;
  bool separates_sync;
};

TEST(VerlLogTest, Versions) {
  const VersionCase cases[] = {
      {"0.7.0", true, false}, {"0.7.1", true, true},     {"0.7", true, false},
      {"0.6.9", true, false}, {"0.8.0", true, true},     {"1.0", true, true},
      {"7", false, false},    {"0.7.1.2", false, false}, {"v0.7", false, false},
  };
  for (const VersionCase& c : cases) {
    auto v = ParseVerlVersion(c.text);
    EXPECT_EQ(v.has_value(), c.valid) << c.text;
    if (v) {
      EXPECT_EQ(v->SeparatesSync(), c.separates_sync) << c.text;
    }
  }
}

// verl's perf/throughput for the reference RL job: 160 prompts x 8 samples = 1,280 samples of
// 1,024 + 4,096 mean tokens = 6,553,600 tokens; over a 100 s step and 40 GPUs: 1,638.4.
TEST(VerlLogTest, PredictedThroughput) {
  auto spec = LoadRlSpec(kReferenceRlJobName);
  ASSERT_TRUE(spec.ok());
  EXPECT_NEAR(PredictedVerlThroughput(*spec, Seconds::Of(100), 40), 1638.4, 1e-9);
}

const RlEvaluation& Reference() { return testing::ReferenceRl(); }

// Which timer holds the sync: the flag wins over the log, the log's version over its keys.
// Up to 0.7.0 the generation row is generation + sync (reference: 108.4 + 11.8 s, docs/
// commands/rl.md), from 0.7.1 generation alone with its own update_weights row.
TEST(VerlLogTest, GenerationSemantics) {
  auto with_sync = ParseVerlLog(
      "step:1 - timing_s/gen:100 - timing_s/update_weights:10 - "
      "timing_s/step:300\n");
  auto without = ParseVerlLog("step:1 - timing_s/gen:100 - timing_s/step:300\n");
  ASSERT_TRUE(with_sync.ok() && without.ok());
  const RlTimes& t = Reference().configured.times;

  VerlComparison c = CompareVerlLog(Reference(), *without, std::nullopt);
  EXPECT_EQ(c.semantics, VerlGenSemantics::kIncludesSync);
  ASSERT_EQ(c.rows[0].key, "timing_s/gen");
  EXPECT_NEAR(c.rows[0].predicted, 120.2, 0.1);
  EXPECT_NE(c.rows[1].key, "timing_s/update_weights");

  c = CompareVerlLog(Reference(), *with_sync, std::nullopt);
  EXPECT_EQ(c.semantics, VerlGenSemantics::kSeparateSync);
  EXPECT_NEAR(c.rows[0].predicted, 108.4, 0.05);
  ASSERT_EQ(c.rows[1].key, "timing_s/update_weights");
  EXPECT_NEAR(c.rows[1].predicted, 11.8, 0.05);
  // error = predicted / measured - 1 on the measured 100 s and 10 s.
  EXPECT_NEAR(*c.rows[0].error, t.generation.s() / 100 - 1, 1e-12);
  EXPECT_NEAR(*c.rows[1].error, t.weight_sync.s() / 10 - 1, 1e-12);

  c = CompareVerlLog(Reference(), *with_sync, ParseVerlVersion("0.7.0"));
  EXPECT_EQ(c.semantics, VerlGenSemantics::kIncludesSync);
  // The flag wins, and the printed 10 s sync it leaves out is said, not dropped in silence.
  EXPECT_EQ(c.semantics_source,
            "--verl-version 0.7.0; the log prints timing_s/update_weights (mean 10.0 s), which "
            "verl prints from 0.7.1 with the sync apart from timing_s/gen: not compared under "
            "this version");
  c = CompareVerlLog(Reference(), *without, ParseVerlVersion("0.7.0"));
  EXPECT_EQ(c.semantics_source, "--verl-version 0.7.0");
}

// A log whose version line says 0.7.0 but which prints timing_s/update_weights (verl prints that
// timer only from 0.7.1, when the sync left timing_s/gen): the printed timers win over the
// version line, so the 9 s sync is compared with strata's (11.8 s) instead of vanishing, and
// generation is compared alone (108.4 s, not 120.2 s).
TEST(VerlLogTest, APrintedSyncTimerWinsOverAnOlderVersionLine) {
  auto log = ParseVerlLog(
      "verl version: 0.7.0\n"
      "step:1 - timing_s/gen:110 - timing_s/update_weights:9 - timing_s/step:300\n");
  ASSERT_TRUE(log.ok()) << log.error().Format();
  ASSERT_TRUE(log->version.has_value());
  const VerlComparison c = CompareVerlLog(Reference(), *log, std::nullopt);
  EXPECT_EQ(c.semantics, VerlGenSemantics::kSeparateSync);
  EXPECT_NE(c.semantics_source.find("though its version line says 0.7.0"), std::string::npos)
      << c.semantics_source;
  ASSERT_GE(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].key, "timing_s/gen");
  EXPECT_NEAR(c.rows[0].predicted, 108.4, 0.05);
  EXPECT_EQ(c.rows[1].key, "timing_s/update_weights");
  EXPECT_NEAR(*c.rows[1].measured, 9.0, 1e-12);
}

// PPO's critic timers: verl prints timing_s/values and timing_s/update_critic; with the reference
// job as PPO the critic is the actor's model and layout, so its values pass is predicted at the
// old log-prob pass (24.02 s, `strata rl`) and its update at the actor's (103.32 s). A GRPO
// job reads the keys too and says it has no critic.
// verl prints response_length/clip_ratio, the share of samples at max_response_length
// (verl/trainer/ppo/metric_utils.py: mean(response_length == max_response_length)); it is put
// beside the distribution's point mass at the cap: the reference job's capped exponential, mean
// 4,096 under 8,192, clips e^-1.59362 = 0.2032 (rl_step_test, ReferenceGenerationShape). A log
// without the key gets no row.
TEST(VerlLogTest, ClipRatioBesideTheDistributionsPointMass) {
  auto log = ParseVerlLog(
      "step:1 - timing_s/gen:100 - response_length/clip_ratio:0.25 - timing_s/step:300\n"
      "step:2 - timing_s/gen:100 - response_length/clip_ratio:np.float64(0.15) - "
      "timing_s/step:300\n");
  ASSERT_TRUE(log.ok()) << log.error().Format();
  ASSERT_EQ(log->steps.size(), 2u);
  EXPECT_NEAR(*log->steps[0].response_clip_ratio, 0.25, 1e-12);
  const VerlComparison c = CompareVerlLog(Reference(), *log, std::nullopt);
  const VerlPhaseRow* clip = nullptr;
  for (const VerlPhaseRow& r : c.rows) {
    if (r.key == "response_length/clip_ratio") clip = &r;
  }
  ASSERT_NE(clip, nullptr);
  EXPECT_NEAR(*clip->measured, 0.20, 1e-12);  // (0.25 + 0.15) / 2
  EXPECT_NEAR(clip->predicted, 0.2032, 1e-4);
  EXPECT_EQ(clip->unit, "fraction");
  auto without = ParseVerlLog("step:1 - timing_s/gen:100 - timing_s/step:300\n");
  ASSERT_TRUE(without.ok());
  for (const VerlPhaseRow& r : CompareVerlLog(Reference(), *without, std::nullopt).rows) {
    EXPECT_NE(r.key, "response_length/clip_ratio");
  }
}

TEST(VerlLogTest, PpoCriticTimers) {
  auto log = ParseVerlLog(
      "step:1 - timing_s/gen:100 - timing_s/update_weights:10 - timing_s/values:31 - "
      "timing_s/update_critic:100 - timing_s/step:500\n");
  ASSERT_TRUE(log.ok()) << log.error().Format();
  auto spec = LoadRlSpec(kReferenceRlJobName, {"algorithm=ppo"});
  ASSERT_TRUE(spec.ok());
  auto ppo = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(ppo.ok());
  VerlComparison c = CompareVerlLog(*ppo, *log, std::nullopt);
  auto find = [&](const VerlComparison& v, const std::string& key) -> const VerlPhaseRow* {
    for (const VerlPhaseRow& r : v.rows) {
      if (r.key == key) return &r;
    }
    return nullptr;
  };
  const VerlPhaseRow* values = find(c, "timing_s/values");
  const VerlPhaseRow* critic = find(c, "timing_s/update_critic");
  ASSERT_NE(values, nullptr);
  ASSERT_NE(critic, nullptr);
  EXPECT_NEAR(values->predicted, 24.02, 0.01);
  EXPECT_NEAR(*values->measured, 31, 1e-12);
  EXPECT_NEAR(*values->error, values->predicted / 31 - 1, 1e-12);
  EXPECT_NEAR(critic->predicted, 103.32, 0.01);
  EXPECT_EQ(critic->predicted_from, "critic update");

  const VerlComparison g = CompareVerlLog(Reference(), *log, std::nullopt);
  const VerlPhaseRow* grpo = find(g, "timing_s/values");
  ASSERT_NE(grpo, nullptr);
  EXPECT_NEAR(grpo->predicted, 0, 1e-12);
  EXPECT_EQ(grpo->predicted_from, "critic values (the RL job is GRPO: no critic)");
}

// A log of another batch than the job's: the SYNTH verl line of the format reference (1.5; kept
// as tests/golden/logs/verl-reference-line-rl-job/input.log) prints perf/total_num_tokens
// 8,450,017 at prompt_length/mean 412.7 + response_length/mean 2,871.3 = 3,284.0 tokens a
// sample: 8,450,017 / 3,284 = 2,573.1 samples a step. The reference RL job prices 1,280 samples
// (6,553,600 tokens / 5,120 a sample: PredictedThroughput above). Its timers then measure the
// batch, not strata: no error is shown for them, and the reason is given. The lengths rows keep
// theirs (the lengths are compared as lengths).
TEST(VerlLogTest, AnotherBatchIsSaidAndNotScored) {
  auto log =
      ParseVerlLog(testing::ReadTestFile("golden/logs/verl-reference-line-rl-job/input.log"));
  ASSERT_TRUE(log.ok()) << log.error().Format();
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_NEAR(*log->steps[0].total_num_tokens, 8450017, 1e-9);
  EXPECT_NEAR(*log->steps[0].prompt_mean_tokens, 412.7, 1e-9);
  const VerlComparison c = CompareVerlLog(Reference(), *log, std::nullopt);
  EXPECT_NE(c.batch_mismatch.find("~2,573 samples a step"), std::string::npos) << c.batch_mismatch;
  EXPECT_NE(c.batch_mismatch.find("the job prices 1,280 samples"), std::string::npos)
      << c.batch_mismatch;
  for (const VerlPhaseRow& r : c.rows) {
    if (r.unit == "s" || r.unit == "tokens/s/GPU") {
      EXPECT_FALSE(r.error.has_value()) << r.key;
    } else if (r.measured) {
      EXPECT_TRUE(r.error.has_value()) << r.key;
    }
  }
  // The job's own batch (1,280 x 3,284.0 = 4,203,520 tokens) is compared as before.
  auto same = ParseVerlLog(
      "step:1 - prompt_length/mean:412.7 - response_length/mean:2871.3 - timing_s/gen:100 - "
      "timing_s/step:300 - perf/total_num_tokens:4203520\n");
  ASSERT_TRUE(same.ok());
  const VerlComparison d = CompareVerlLog(Reference(), *same, std::nullopt);
  EXPECT_TRUE(d.batch_mismatch.empty()) << d.batch_mismatch;
  EXPECT_TRUE(d.rows[0].error.has_value());
}

// verl up to v0.5.x runs the validation (and the checkpoint) inside the step timer
// (volcengine/verl@f0964b665, ray_trainer.py fit(): `with marked_timer("testing", ...)` inside
// `with marked_timer("step", ...)`) and prints timing_s/testing on the same line. Ten steps of
// 1,238.5 s (the reference format's verl line), steps 5 and 10 validating for 900 s: 2,138.5 s
// each. The measured step is the 8 others' 1,238.5 s and their throughput 170.57, the 2
// validation steps are said apart (mean 2,138.5 s). Before: timing_s/testing was read nowhere and
// the step averaged (8 x 1238.5 + 2 x 2138.5) / 10 = 1,418.5 s (+14.5 %).
TEST(VerlLogTest, ValidationStepsAreLeftOutOfTheMeasuredStep) {
  std::string text;
  for (int s = 1; s <= 10; ++s) {
    const bool test = s % 5 == 0;
    text += fmt::format(
        "step:{} - timing_s/gen:611.87 - timing_s/old_log_prob:73.4 - timing_s/ref:72.9 - "
        "timing_s/update_actor:468.2{} - timing_s/step:{} - perf/throughput:{}\n",
        s, test ? " - timing_s/testing:900.0" : "", test ? "2138.5" : "1238.5",
        test ? "98.79" : "170.57");
  }
  auto log = ParseVerlLog(text);
  ASSERT_TRUE(log.ok()) << log.error().Format();
  const VerlComparison c = CompareVerlLog(Reference(), *log, std::nullopt);
  EXPECT_EQ(c.steps, 10);
  EXPECT_EQ(c.validation_steps, 2);
  ASSERT_TRUE(c.validation_step_mean_s.has_value());
  EXPECT_NEAR(*c.validation_step_mean_s, 2138.5, 1e-9);
  for (const VerlPhaseRow& r : c.rows) {
    if (r.key == "timing_s/step") {
      EXPECT_NEAR(*r.measured, 1238.5, 1e-9);
      EXPECT_EQ(r.measured_steps, 8);
    }
    if (r.key == "perf/throughput") {
      EXPECT_NEAR(*r.measured, 170.57, 1e-9);
    }
    if (r.key == "timing_s/gen") {
      EXPECT_EQ(r.measured_steps, 10);  // untouched by validation
    }
  }
}

}  // namespace
}  // namespace strata::verl_log_test

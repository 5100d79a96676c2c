// OpenRLHF's per-step status dicts read per phase and put beside the RL job's prediction. The
// line's form is OpenRLHF's code (OpenRLHF/OpenRLHF@3c3be623:openrlhf/trainer/ppo_trainer.py,
// `logger.info(f"✨ Global step {global_step}: {log_status}")`, a Python dict's repr; the async
// trainer prints it without the sparkle) and the keys are the ones train_step and fit set
// (timing/make_experience, timing/ppo_train, timing/broadcast, timing/generation,
// timing/step_total; rollout/response_length_mean, and response_length in older dicts). Pastes
// of these lines in public threads wrap the dict over several lines and elide keys with "...":
// the inputs below take those shapes. Expected numbers are the lines' own text and their means by
// hand; predictions are the reference RL job's (`strata rl`: log-prob 24.02 s, reference
// 24.02 s, update 103.32 s, sync 11.8 s, step 273.68 s: its generation 108.38 s with 6.04 s of
// decode's TP all-reduces, rollout_test TpAllReducesOnTheNodesLink).
#include "strata/rl/openrlhf_log.h"

#include <gtest/gtest.h>

#include <string>

#include "rl/reference_rl.h"
#include "strata/eval/evaluation.h"
#include "strata/rl/rl_job.h"

namespace strata::openrlhf_log_test {
namespace {

const RlEvaluation& Reference() { return testing::ReferenceRl(); }

const VerlPhaseRow& Row(const OpenRlhfComparison& c, const std::string& key) {
  for (const VerlPhaseRow& r : c.rows) {
    if (r.key == key) return r;
  }
  ADD_FAILURE() << "no row " << key;
  static const VerlPhaseRow none;
  return none;
}

// Two steps of the synchronous trainer, behind Ray's actor prefix and the logger's file:line.
constexpr const char* kTwoSteps =
    "(PPOTrainer pid=812) INFO ppo_trainer.py:547] Sample: ['What is 2+2? 4', 1.0]\n"
    "(PPOTrainer pid=812) INFO ppo_trainer.py:547] \xE2\x9C\xA8 Global step 1: {'policy_loss': "
    "0.012, 'actor_lr': 3.25e-06, 'rollout/response_length_mean': 1000.0, "
    "'timing/make_experience': 10.0, 'timing/ppo_train': 30.0, 'timing/broadcast': 2.0, "
    "'timing/generation': 50.0, 'timing/step_total': 92.0}\n"
    "(PPOTrainer pid=812) INFO ppo_trainer.py:547] \xE2\x9C\xA8 Global step 2: {'policy_loss': "
    "-0.004, 'actor_lr': 5e-07, 'rollout/response_length_mean': 1200.0, "
    "'timing/make_experience': 20.0, 'timing/ppo_train': 40.0, 'timing/broadcast': 4.0, "
    "'timing/generation': 70.0, 'timing/step_total': 134.0}\n";

TEST(OpenRlhfLogTest, ReadsEachStepsStatusDict) {
  ASSERT_TRUE(LooksLikeOpenRlhfLog(kTwoSteps));
  auto log = ParseOpenRlhfLog(kTwoSteps);
  ASSERT_TRUE(log.ok()) << log.error().Format();
  ASSERT_EQ(log->steps.size(), 2u);
  const OpenRlhfStepMetrics& s = log->steps[1];
  EXPECT_EQ(s.step, 2);
  EXPECT_EQ(s.line, 3);
  EXPECT_DOUBLE_EQ(*s.make_experience_s, 20.0);
  EXPECT_DOUBLE_EQ(*s.ppo_train_s, 40.0);
  EXPECT_DOUBLE_EQ(*s.broadcast_s, 4.0);
  EXPECT_DOUBLE_EQ(*s.generation_s, 70.0);
  EXPECT_DOUBLE_EQ(*s.step_total_s, 134.0);
  EXPECT_DOUBLE_EQ(*s.response_mean_tokens, 1200.0);
  EXPECT_TRUE(log->notes.empty());
}

// The phases against the reference job: means over the two steps by hand (generation (50 + 70)
// / 2 = 60 s, make_experience (10 + 20) / 2 = 15 s, ppo_train 35 s, broadcast 3 s, step 113 s,
// response 1,100 tokens); make_experience stands for the old log-prob and reference forward
// passes of a GRPO job (24.02 + 24.02 = 48.05 s), ppo_train for
// the actor update.
TEST(OpenRlhfLogTest, PhasesBesideThePrediction) {
  auto log = ParseOpenRlhfLog(kTwoSteps);
  ASSERT_TRUE(log.ok());
  const RlTimes& t = Reference().configured.times;
  const OpenRlhfComparison c = CompareOpenRlhfLog(Reference(), *log);
  EXPECT_EQ(c.steps, 2);
  EXPECT_EQ(c.first_step, 1);
  EXPECT_EQ(c.last_step, 2);
  const VerlPhaseRow& gen = Row(c, "timing/generation");
  EXPECT_DOUBLE_EQ(*gen.measured, 60.0);
  EXPECT_EQ(gen.measured_steps, 2);
  EXPECT_NEAR(gen.predicted, 108.4, 0.05);
  EXPECT_NEAR(*gen.error, t.generation.s() / 60.0 - 1, 1e-12);
  const VerlPhaseRow& exp = Row(c, "timing/make_experience");
  EXPECT_DOUBLE_EQ(*exp.measured, 15.0);
  EXPECT_NEAR(exp.predicted, 48.05, 0.01);
  EXPECT_DOUBLE_EQ(exp.predicted, t.old_log_prob.s() + t.reference.s());
  const VerlPhaseRow& train = Row(c, "timing/ppo_train");
  EXPECT_DOUBLE_EQ(*train.measured, 35.0);
  EXPECT_NEAR(train.predicted, 103.32, 0.01);
  EXPECT_DOUBLE_EQ(*Row(c, "timing/broadcast").measured, 3.0);
  EXPECT_NEAR(Row(c, "timing/broadcast").predicted, 11.8, 0.05);
  EXPECT_DOUBLE_EQ(*Row(c, "timing/step_total").measured, 113.0);
  EXPECT_NEAR(Row(c, "timing/step_total").predicted, 273.68, 0.01);
  EXPECT_DOUBLE_EQ(*Row(c, "response length (mean)").measured, 1100.0);
}

// PPO: make_experience also runs the critic's values pass, ppo_train the critic's update (with
// the reference job as PPO the critic is the actor's model and layout: 23.9 s and 102.8 s more).
TEST(OpenRlhfLogTest, PpoAddsTheCriticToItsTimers) {
  auto log = ParseOpenRlhfLog(kTwoSteps);
  ASSERT_TRUE(log.ok());
  auto spec = LoadRlSpec(kReferenceRlJobName, {"algorithm=ppo"});
  ASSERT_TRUE(spec.ok());
  auto ppo = EvaluateRl(*Workspace::Load(), *spec);
  ASSERT_TRUE(ppo.ok()) << ppo.error().Format();
  const RlTimes& t = ppo->configured.times;
  ASSERT_GT(t.critic_values.s(), 0);
  ASSERT_GT(t.critic_update.s(), 0);
  const OpenRlhfComparison c = CompareOpenRlhfLog(*ppo, *log);
  EXPECT_DOUBLE_EQ(Row(c, "timing/make_experience").predicted,
                   t.old_log_prob.s() + t.reference.s() + t.critic_values.s());
  EXPECT_DOUBLE_EQ(Row(c, "timing/ppo_train").predicted, t.update.s() + t.critic_update.s());
}

// A pasted dict wrapped over three lines with keys elided ("..."), and the older key
// response_length (no rollout/ prefix): joined up to its closing brace, the elision noted. The
// next line's dict starts a new step even when the previous one never closed.
TEST(OpenRlhfLogTest, WrappedElidedAndCutDicts) {
  const char* text =
      "Global step 7: {'reward': -0.69, 'policy_loss': 0.00035,\n"
      "'response_length': 40.375, 'timing/generation': 2.95,\n"
      "'timing/ppo_train': 5.04, ...}\n"
      "Global step 8: {'response_length': 49.5625, 'timing/generation': 1.63, 'timing/ppo_tr\n"
      "Global step 9: {'timing/generation': 'n/a'}\n";
  auto log = ParseOpenRlhfLog(text);
  ASSERT_TRUE(log.ok()) << log.error().Format();
  ASSERT_EQ(log->steps.size(), 3u);
  EXPECT_EQ(log->steps[0].step, 7);
  EXPECT_DOUBLE_EQ(*log->steps[0].response_mean_tokens, 40.375);
  EXPECT_DOUBLE_EQ(*log->steps[0].generation_s, 2.95);
  EXPECT_DOUBLE_EQ(*log->steps[0].ppo_train_s, 5.04);
  EXPECT_EQ(log->steps[1].step, 8);
  EXPECT_EQ(log->steps[1].line, 4);
  EXPECT_DOUBLE_EQ(*log->steps[1].generation_s, 1.63);
  EXPECT_FALSE(log->steps[1].ppo_train_s.has_value());
  EXPECT_FALSE(log->steps[2].generation_s.has_value());
  const std::vector<std::string> notes = {
      "line 1: step 7: keys elided (\"...\") in the dict",
      "line 4: step 8: the dict stops being read at ''timing/ppo_tr'",
      "line 4: step 8: the dict has no closing brace (cut off; its last value is not read)",
      "line 5: timing/generation: ''n/a'' is not a number",
  };
  EXPECT_EQ(log->notes, notes);
}

// A dict cut inside its last value ("92.5" printed as "9") does not put the stump into the mean:
// step 1's step_total is dropped and the mean is step 2's 134 s alone; the same at the end of
// the file. inf and nan are not timings; a key with an escaped quote is read past; two status
// dicts glued on one line are two steps.
TEST(OpenRlhfLogTest, CutValuesNonFiniteTimersAndGluedDicts) {
  auto cut = ParseOpenRlhfLog(
      "Global step 1: {'timing/generation': 50.0, 'timing/step_total': 9\n"
      "Global step 2: {'timing/generation': 70.0, 'timing/step_total': 134.0}\n"
      "Global step 3: {'timing/generation': 60.0, 'timing/step_total': 1");
  ASSERT_TRUE(cut.ok()) << cut.error().Format();
  ASSERT_EQ(cut->steps.size(), 3u);
  EXPECT_DOUBLE_EQ(*cut->steps[0].generation_s, 50.0);
  EXPECT_FALSE(cut->steps[0].step_total_s.has_value());
  EXPECT_DOUBLE_EQ(*cut->steps[1].step_total_s, 134.0);
  EXPECT_FALSE(cut->steps[2].step_total_s.has_value());
  const OpenRlhfComparison c = CompareOpenRlhfLog(Reference(), *cut);
  EXPECT_DOUBLE_EQ(*Row(c, "timing/step_total").measured, 134.0);
  EXPECT_EQ(Row(c, "timing/step_total").measured_steps, 1);

  auto odd = ParseOpenRlhfLog(
      "Global step 4: {'timing/generation': inf, 'timing/ppo_train': nan, 'a\\'b': 2, "
      "'timing/broadcast': 3.0} Global step 5: {'timing/broadcast': 5.0}\n");
  ASSERT_TRUE(odd.ok()) << odd.error().Format();
  ASSERT_EQ(odd->steps.size(), 2u);
  EXPECT_FALSE(odd->steps[0].generation_s.has_value());
  EXPECT_FALSE(odd->steps[0].ppo_train_s.has_value());
  EXPECT_DOUBLE_EQ(*odd->steps[0].broadcast_s, 3.0);
  EXPECT_EQ(odd->steps[1].step, 5);
  EXPECT_DOUBLE_EQ(*odd->steps[1].broadcast_s, 5.0);
  const std::vector<std::string> notes = {
      "line 1: timing/generation: 'inf' is not a finite number",
      "line 1: timing/ppo_train: 'nan' is not a finite number",
  };
  EXPECT_EQ(odd->notes, notes);
}

// No status line: a clear error that names what --log reads; verl's metrics line is not taken
// for OpenRLHF's, and a dict that is not after "Global step N: " is not one either.
TEST(OpenRlhfLogTest, NoStatusLineIsAClearError) {
  for (const char* text : {"", "step:1 - timing_s/gen:100 - timing_s/step:300\n",
                           "{'loss': 1.5, 'grad_norm': 0.3, 'learning_rate': 1e-05}\n",
                           "Global step: {'timing/generation': 1.0}\n",
                           "Global step 3 {'timing/generation': 1.0}\n"}) {
    EXPECT_FALSE(LooksLikeOpenRlhfLog(text)) << text;
    auto log = ParseOpenRlhfLog(text);
    ASSERT_FALSE(log.ok()) << text;
    EXPECT_EQ(log.error().message, "no OpenRLHF status line (\"Global step N: {...}\") in the log");
  }
}

}  // namespace
}  // namespace strata::openrlhf_log_test

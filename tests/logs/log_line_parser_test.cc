// One real line per format (sources in tests/golden/logs/*/SOURCE) and what it says, read off
// the line by hand; then cut and malformed lines that must give nothing rather than a wrong number.
#include "strata/logs/log_line_parser.h"

#include <gtest/gtest.h>

#include <cmath>

namespace strata {
namespace {

std::vector<ParsedLine> Parse(std::string_view line) {
  std::vector<ParsedLine> out;
  ParseLogLine(line, out);
  return out;
}

StepRecord OneStep(std::string_view line) {
  auto out = Parse(line);
  EXPECT_EQ(out.size(), 1u) << line;
  if (out.empty()) return {};
  EXPECT_EQ(out[0].kind, LineKind::kStep) << line;
  return out[0].record;
}

TEST(ParseLogLine, Megatron756) {
  // NVIDIA/Megatron-LM #756.
  const StepRecord r = OneStep(
      " [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | "
      "elapsed time per iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 243.6 | "
      "learning rate: 1.420000E-05 | global batch size:   128 | lm loss: 1.818812E+00 | "
      "load_balancing_loss: 1.013377E+00 | loss scale: 1.0 | grad norm: 1.300 | num zeros: 0.0 | "
      "number of skipped iterations:   0 | number of nan iterations:   0 |");
  EXPECT_EQ(r.format, LogFormat::kMegatron);
  EXPECT_EQ(r.step, 71);
  EXPECT_EQ(r.total_steps, 100);
  EXPECT_DOUBLE_EQ(*r.step_time_s, 5.3616);  // 5361.6 ms
  EXPECT_DOUBLE_EQ(*r.printed_tflops_per_gpu, 243.6);
  EXPECT_DOUBLE_EQ(*r.learning_rate, 1.42e-05);
  EXPECT_DOUBLE_EQ(*r.global_batch, 128);
  EXPECT_DOUBLE_EQ(*r.loss, 1.818812);  // lm loss, not load_balancing_loss
  EXPECT_DOUBLE_EQ(*r.grad_norm, 1.3);
  EXPECT_DOUBLE_EQ(*r.skipped_iterations, 0);
  EXPECT_TRUE(r.timestamp_s.has_value());
}

TEST(ParseLogLine, MegatronCutLineDropsItsLastSegment) {
  // epfLLM/Megatron-LLM #11, the excerpt's last line: "lm loss: 2" is half a number.
  const StepRecord r = OneStep(
      " iteration      126/  250000 | consumed samples:       129024 | elapsed time per "
      "iteration (ms): 89692.9 | learning rate: 9.450E-06 | global batch size:  1024 | lm loss: 2");
  EXPECT_EQ(r.step, 126);
  EXPECT_FALSE(r.loss.has_value());
  EXPECT_DOUBLE_EQ(*r.global_batch, 1024);
  EXPECT_FALSE(r.timestamp_s.has_value());  // this fork prints none
  // Cut before the step time: not a step at all.
  EXPECT_TRUE(Parse(" [2024-04-06 03:02:29] iteration       74/     100 | consumed samples:  "
                    "       9472 | elapse")
                  .empty());
}

TEST(ParseLogLine, MegatronDeepSpeedTokens) {
  // bigscience-workshop/Megatron-DeepSpeed #396: tokens = actual seqlen x global batch.
  const StepRecord r = OneStep(
      " iteration     5426/  250000 | consumed samples:        43408 | consumed tokens:     "
      "88899584 | elapsed time per iteration (ms): 4247.9 | learning rate: 2.999E-04 | global "
      "batch size:     8 | loss scale: 1.0 | grad norm: nan | actual seqlen:  2048 | number of "
      "skipped iterations:   0 | number of nan iterations:   0 | samples per second: 1.883 | "
      "TFLOPs: 78.36 |");
  EXPECT_DOUBLE_EQ(*r.tokens, 2048.0 * 8);
  EXPECT_TRUE(std::isnan(*r.grad_norm));
  EXPECT_DOUBLE_EQ(*r.printed_tflops_per_gpu, 78.36);
  EXPECT_DOUBLE_EQ(*r.samples_per_s, 1.883);
  EXPECT_FALSE(r.loss.has_value());
}

TEST(ParseLogLine, MsSwiftMegatron) {
  const StepRecord r = OneStep(
      " [2026-03-02 11:05:41] iteration       10/    1450 | consumed samples:          800 | "
      "elapsed time per iteration (ms): 120345.6 | memory(GiB): 85.6 | elapsed time: 20m 3s | "
      "remaining time: 2d 0h 8m 17s | throughput per GPU (TFLOP/s/GPU): 13.3 | learning rate: "
      "9.999000E-06 | global batch size:    80 | lm loss: 1.234567E+00 | loss scale: 1.0 | grad "
      "norm: 0.412 | number of skipped iterations:   0 | number of nan iterations:   0 |");
  EXPECT_EQ(r.format, LogFormat::kMsSwiftMegatron);
  EXPECT_DOUBLE_EQ(*r.memory_gib, 85.6);
  EXPECT_DOUBLE_EQ(*r.elapsed_s, 20 * 60 + 3);
}

TEST(ParseLogLine, MegatronMemoryReport) {
  // Megatron-LM #756: "MB" is MiB; max reserved 61480.0 MiB = 60.039 GiB.
  auto out = Parse(
      "[Rank 1] (after 1 iterations) memory (MB) | allocated: 54250.97802734375 | "
      "max allocated: 54250.98583984375 | reserved: 61480.0 | max reserved: 61480.0");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, LineKind::kMemory);
  EXPECT_EQ(out[0].record.step, 1);
  EXPECT_NEAR(*out[0].record.memory_gib, 61480.0 / 1024, 1e-9);
}

TEST(ParseLogLine, HfTrainerAndSwiftDicts) {
  // hiyouga/LlamaFactory #8261 (as quoted in the format reference): no step in the line.
  StepRecord r = OneStep(
      "{'loss': 3.5534, 'grad_norm': 1.4142135381698608, 'learning_rate': "
      "2.0454545454545457e-06, 'epoch': 0.01}");
  EXPECT_EQ(r.format, LogFormat::kDict);
  EXPECT_EQ(r.step, -1);  // the analyser numbers them
  EXPECT_DOUBLE_EQ(*r.loss, 3.5534);
  EXPECT_DOUBLE_EQ(*r.grad_norm, 1.4142135381698608);
  // ms-swift v3 (docs/source_en/BestPractices/Metax-support.md): step 1 of 94, 0.345807 it/s.
  r = OneStep(
      "{'loss': 1.47077751, 'grad_norm': 10.5625, 'learning_rate': 2e-06, 'token_acc': "
      "0.65511727, 'epoch': 0.01, 'global_step/max_steps': '1/94', 'percentage': '1.06%', "
      "'elapsed_time': '2s', 'remaining_time': '4m 28s', 'memory(GiB)': 4.87, "
      "'train_speed(iter/s)': 0.345807}");
  EXPECT_EQ(r.step, 1);
  EXPECT_EQ(r.total_steps, 94);
  // global_step / elapsed since the start: an average, not this step's time (interval_time.h).
  EXPECT_FALSE(r.step_time_s.has_value());
  EXPECT_NEAR(*r.running_step_time_s, 1 / 0.345807, 1e-9);
  EXPECT_EQ(r.running_origin, RunningOrigin::kStepZero);
  EXPECT_DOUBLE_EQ(*r.memory_gib, 4.87);
  EXPECT_DOUBLE_EQ(*r.elapsed_s, 2);
  // ms-swift v4 megatron (format reference SYNTH): iteration '10/1450', train_speed(s/it).
  r = OneStep(
      "{'loss': 1.23456789, 'grad_norm': 0.41234567, 'learning_rate': 9.999e-06, "
      "'iteration': '10/1450', 'elapsed_time': '20m 3s', 'memory(GiB)': 85.6, "
      "'train_speed(s/it)': 120.345612}");
  EXPECT_EQ(r.step, 10);
  // elapsed / (step - the resume step): an average too.
  EXPECT_FALSE(r.step_time_s.has_value());
  EXPECT_DOUBLE_EQ(*r.running_step_time_s, 120.345612);
  EXPECT_EQ(r.running_origin, RunningOrigin::kResumeStep);
  // logging.jsonl: the same keys as JSON.
  r = OneStep(R"({"loss": 0.5, "grad_norm": NaN, "global_step/max_steps": "3/9"})");
  EXPECT_EQ(r.step, 3);
  EXPECT_TRUE(std::isnan(*r.grad_norm));
  // The final summary says the run finished.
  auto out = Parse(
      "{'train_runtime': 183.4332, 'train_samples_per_second': 8.177, 'train_loss': "
      "1.50650934, 'epoch': 1.0}");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, LineKind::kFinished);
}

TEST(ParseLogLine, CutAndGluedDicts) {
  EXPECT_TRUE(Parse("{'loss': 0.0,").empty());
  EXPECT_TRUE(Parse("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 0.0002").empty());
  EXPECT_TRUE(Parse("{'epoch': 0.5}").empty());  // no metric
  // Two dictionaries on one physical line: two steps.
  auto out = Parse(
      "{'loss': 1.0, 'global_step/max_steps': '1/9'} {'loss': 2.0, "
      "'global_step/max_steps': '2/9'}");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].record.step, 2);
  EXPECT_DOUBLE_EQ(*out[1].record.loss, 2.0);
}

TEST(ParseLogLine, DeepSpeed) {
  // deepspeedai/DeepSpeed #3742.
  StepRecord r = OneStep(
      "[2023-07-25 21:03:17,269] [INFO] [timer.py:215:stop] epoch=0/micro_step=34/global_step=34, "
      "RunningAvgSamplesPerSec=7.864669709950182, CurrSamplesPerSec=8.00912418308922, "
      "MemAllocated=59.65GB, MaxMemAllocated=63.31GB");
  EXPECT_EQ(r.format, LogFormat::kDeepSpeed);
  EXPECT_EQ(r.step, 34);
  EXPECT_DOUBLE_EQ(*r.samples_per_s, 8.00912418308922);  // Curr, not RunningAvg
  EXPECT_DOUBLE_EQ(*r.memory_gib, 63.31);
  r = OneStep(
      "[2023-07-25 21:03:21,037] [INFO] [logging.py:96:log_dist] [Rank 0] step=35, "
      "skipped=0, lr=[2.1731931451279077e-06, 2.1731931451279077e-06], mom=[[0.9, 0.95], "
      "[0.9, 0.95]]");
  EXPECT_EQ(r.step, 35);
  EXPECT_DOUBLE_EQ(*r.skipped_iterations, 0);
  EXPECT_DOUBLE_EQ(*r.learning_rate, 2.1731931451279077e-06);
  // deepspeedai/DeepSpeed #1825: the pre-2023 throughput line.
  r = OneStep(
      "[2022-03-11 02:06:58,985] [INFO] [timer.py:189:stop] 0/40, "
      "SamplesPerSec=83.48609168106144, MemAllocated=0.26GB, MaxMemAllocated=9.02GB");
  EXPECT_EQ(r.step, 40);
  EXPECT_DOUBLE_EQ(*r.samples_per_s, 83.48609168106144);
  auto skip = Parse(
      "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, "
      "reducing to 32768");
  ASSERT_EQ(skip.size(), 1u);
  EXPECT_EQ(skip[0].kind, LineKind::kSkip);
}

TEST(ParseLogLine, Torchtitan) {
  // pytorch/torchtitan #3393 (launcher prefix already removed by the analyser).
  const StepRecord r = OneStep(
      "[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  grad_norm:  "
      "0.8319  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%");
  EXPECT_EQ(r.format, LogFormat::kTorchtitan);
  EXPECT_EQ(r.step, 14);
  EXPECT_DOUBLE_EQ(*r.loss, 3.24405);
  EXPECT_DOUBLE_EQ(*r.grad_norm, 0.8319);
  EXPECT_DOUBLE_EQ(*r.memory_gib, 9.46);
  EXPECT_DOUBLE_EQ(*r.printed_tokens_per_s_per_gpu, 7282);
  EXPECT_DOUBLE_EQ(*r.printed_tflops_per_gpu, 0.52);
  EXPECT_DOUBLE_EQ(*r.printed_mfu, 0.0017);  // 0.17% as a fraction
  // A line cut after "tflops: 0." must not claim 0 TFLOP/s: mfu, the last field, is missing.
  const StepRecord cut = OneStep("step: 14  loss:  3.24405  tps: 7,282  tflops: 0.");
  EXPECT_FALSE(cut.printed_tflops_per_gpu.has_value());
  EXPECT_DOUBLE_EQ(*cut.printed_tokens_per_s_per_gpu, 7282);
}

TEST(ParseLogLine, Verl) {
  // verl-project/verl #2060 style (values .3f); step:0 holds validation metrics only.
  // timing_s/step is the whole RL iteration (rollout, reward, log-prob passes, update, weight
  // sync: volcengine/verl@b178a3cd ray_trainer.py, marked_timer("step")), so it is no step
  // time; the trainer's step is the actor's update, timing_s/update_actor.
  const StepRecord r = OneStep(
      "step:12 - actor/entropy:0.323 - actor/grad_norm:0.118 - perf/mfu/actor:0.343 - "
      "perf/max_memory_reserved_gb:84.9 - actor/lr:0.000 - perf/total_num_tokens:8450017 - "
      "timing_s/update_actor:412.0 - timing_s/step:1238.5 - perf/throughput:170.57");
  EXPECT_EQ(r.format, LogFormat::kVerl);
  EXPECT_EQ(r.step, 12);
  EXPECT_DOUBLE_EQ(*r.step_time_s, 412.0);
  EXPECT_DOUBLE_EQ(*r.rl_iteration_s, 1238.5);
  // Without the actor's update (critic warm-up, or a line cut before it): no step time at all.
  const StepRecord warmup = OneStep("step:3 - critic/vf_loss:0.2 - timing_s/step:300.0");
  EXPECT_FALSE(warmup.step_time_s.has_value());
  EXPECT_DOUBLE_EQ(*warmup.rl_iteration_s, 300.0);
  EXPECT_DOUBLE_EQ(*r.printed_mfu, 0.343);  // verl prints a fraction
  EXPECT_DOUBLE_EQ(*r.tokens, 8450017);
  EXPECT_DOUBLE_EQ(*r.printed_tokens_per_s_per_gpu, 170.57);
  EXPECT_TRUE(Parse("step:0 - val-core/gsm8k/reward/mean@1:0.712").empty());
  EXPECT_TRUE(Parse("ip_ratio:0.004 - timing_s/step:96.551 - timing_per_token_ms/ref:").empty());
}

// OpenRLHF's status line (the form of OpenRLHF/OpenRLHF@3c3be623:openrlhf/trainer/ppo_trainer.py,
// logger.info(f"✨ Global step {global_step}: {log_status}"), values chosen for the test): the
// step from "Global step N", the loss from policy_loss; timing/step_total is the whole RL
// iteration, rollout included, so it is no step time here. A paste's elision ("...") is skipped.
// A dict after "Global step N:" without OpenRLHF's keys is read as an HF Trainer dict would be.
TEST(ParseLogLine, OpenRlhf) {
  const StepRecord r = OneStep(
      "(PPOTrainer pid=812) INFO ppo_trainer.py:547] \xE2\x9C\xA8 Global step 12: "
      "{'policy_loss': 0.012, 'actor_grad_norm': 0.29, 'actor_lr': 3.25e-06, "
      "'timing/generation': 50.0, 'timing/step_total': 92.5}");
  EXPECT_EQ(r.format, LogFormat::kOpenRlhf);
  EXPECT_EQ(r.step, 12);
  EXPECT_DOUBLE_EQ(*r.loss, 0.012);
  EXPECT_DOUBLE_EQ(*r.grad_norm, 0.29);
  EXPECT_DOUBLE_EQ(*r.learning_rate, 3.25e-06);
  EXPECT_FALSE(r.step_time_s.has_value());
  const StepRecord elided =
      OneStep("Global step 2: {'policy_loss': 0.00035, 'actor_lr': 5e-08, ...}");
  EXPECT_EQ(elided.format, LogFormat::kOpenRlhf);
  EXPECT_EQ(elided.step, 2);
  EXPECT_DOUBLE_EQ(*elided.loss, 0.00035);
  EXPECT_FALSE(elided.step_time_s.has_value());
  EXPECT_TRUE(Parse("Global step 3: {'response_length': 40.375, 'actor_lr': 5e-07}").empty());
  EXPECT_EQ(OneStep("step 3: {'loss': 1.5, 'grad_norm': 0.3}").format, LogFormat::kDict);
  EXPECT_EQ(OneStep("Global step: {'loss': 1.5, 'grad_norm': 0.3}").format, LogFormat::kDict);
  const StepRecord hf = OneStep("Global step 10: {'loss': 1.5, 'grad_norm': 0.3, 'epoch': 0.1}");
  EXPECT_EQ(hf.format, LogFormat::kDict);
  EXPECT_EQ(hf.step, 10);
  EXPECT_DOUBLE_EQ(*hf.loss, 1.5);
}

TEST(ParseLogLine, Nemo) {
  StepRecord r = OneStep(
      "Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 "
      "| global_batch_size: 1 | global_step: 120 | reduced_train_loss: 1.233 | "
      "train_step_timing in s: 0.03146 | val_loss: 4.106");
  EXPECT_EQ(r.format, LogFormat::kNemo);
  EXPECT_EQ(r.step, 120);
  EXPECT_DOUBLE_EQ(*r.loss, 1.233);
  EXPECT_DOUBLE_EQ(*r.step_time_s, 0.03146);
  r = OneStep(
      "Epoch 0:   1%|          | 795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1, "
      "v_num=, reduced_train_loss=3.090, global_step=794.0, consumed_samples=1.63e+6]");
  EXPECT_EQ(r.step, 794);
  EXPECT_EQ(r.total_steps, 77225);
  EXPECT_DOUBLE_EQ(*r.step_time_s, 41.36);
  EXPECT_DOUBLE_EQ(*r.loss, 3.09);  // reduced_train_loss over the smoothed loss
}

// A log whose comment quotes an example record (the header of a NeMo 2 log written for a
// report: "# format: ... as in public logs (e.g. NVIDIA-BioNeMo/bionemo-recipes PR #740:" and
// "#   'Training epoch 0, iteration 120/149 | ... | train_step_timing in s: 0.03146'") took
// that quote for step 120 of the run: `logs` then reported a restart ("the step counter went
// back from 120 to 0") and a mean global batch of 124.9 over the real 128s. A '#' or a quote
// before "Training epoch" is not NeMo's prefix (a timestamp or a rank tag): no step.
TEST(ParseLogLine, NemoRecordQuotedInACommentIsNoStep) {
  for (const char* line :
       {"#   'Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 | "
        "global_batch_size: 1 | global_step: 120 | reduced_train_loss: 1.233 | "
        "train_step_timing in s: 0.03146'",
        "echo \"Training epoch 0, iteration 120/149 | global_step: 120 | "
        "train_step_timing in s: 0.03146\""}) {
    for (const ParsedLine& p : Parse(line)) EXPECT_NE(p.kind, LineKind::kStep) << line;
  }
  // NeMo's own prefix still reads.
  const StepRecord r = OneStep(
      "[NeMo I 2025-01-01 12:00:00 nemo_logging:393] Training epoch 0, iteration 3/999 | "
      "global_step: 3 | train_step_timing in s: 9.1755");
  EXPECT_EQ(r.step, 3);
  EXPECT_DOUBLE_EQ(*r.step_time_s, 9.1755);
}

TEST(ParseLogLine, ErrorsAndNoise) {
  auto out = Parse(
      "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog "
      "caught collective operation timeout: WorkNCCL(SeqNum=1580)");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, LineKind::kError);
  for (const char* noise :
       {"", "training ...", "<IPython.core.display.HTML object>", "iteration", "step: 1", "{{{{",
        "{'a", "  0%|          | 0/1752 [00:00<?, ?it/s]", " 10it [00:20,  2.00s/it]"}) {
    EXPECT_TRUE(Parse(noise).empty()) << noise;
  }
}

// The HF Trainer's tqdm bar (the format reference 1.3's example): step 22 of 1,752 at 01:02
// elapsed, tqdm's smoothed 2.83 s/it. It numbers the record printed before it.
TEST(ParseLogLine, TqdmBar) {
  auto out = Parse("  1%|▏  | 22/1752 [01:02<1:21:36,  2.83s/it]");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, LineKind::kProgress);
  const StepRecord& r = out[0].record;
  EXPECT_EQ(r.step, 22);
  EXPECT_EQ(r.total_steps, 1752);
  EXPECT_DOUBLE_EQ(*r.elapsed_s, 62);
  EXPECT_DOUBLE_EQ(*r.running_step_time_s, 2.83);
  EXPECT_EQ(r.running_origin, RunningOrigin::kSmoothed);
  EXPECT_FALSE(r.step_time_s.has_value());
  // it/s, and an elapsed time past an hour.
  out = Parse(" 50%|#####     | 500/1000 [1:02:03<1:02:03,  4.00it/s]");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].record.step, 500);
  EXPECT_DOUBLE_EQ(*out[0].record.elapsed_s, 3723);
  EXPECT_DOUBLE_EQ(*out[0].record.running_step_time_s, 0.25);
}

}  // namespace
}  // namespace strata

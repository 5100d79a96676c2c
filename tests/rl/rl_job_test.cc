// The RL job file: the reference job reads as its comments say, --set reaches RL keys and the
// actor's job, and bad, truncated or malformed input is an error naming the field.
#include "strata/rl/rl_job.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::rl_job_test {
namespace {

const char* const kMinimal = R"(actor:
  job: qwen3.6-35b-a3b-sft-h20x40
algorithm: grpo
batch:
  prompts: 16
  samples_per_prompt: 8
lengths:
  prompt_max: 2K
  response_max: 8K
rollout:
  vllm_version: "0.19"
  tp: 2
  gpu_memory_utilization: 0.6
)";

TEST(RlJobTest, ReferenceJobReadsAsWritten) {
  auto spec = LoadRlSpec(kReferenceRlJobName);
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_EQ(spec->actor_job, "qwen3.6-35b-a3b-sft-h20x40");
  EXPECT_EQ(spec->samples(), 1280);  // 160 prompts x 8 samples
  EXPECT_EQ(spec->mini_batches, 4);
  EXPECT_EQ(spec->rollout.tp, 2);
  EXPECT_EQ(spec->rollout.vllm.major, 0);
  EXPECT_EQ(spec->rollout.vllm.minor, 19);
  EXPECT_NEAR(spec->rollout.gpu_memory_utilization, 0.6, 1e-12);
  EXPECT_NEAR(spec->lengths.response_max, 8192, 1e-9);
  EXPECT_EQ(spec->placement, RlPlacement::kColocated);
  EXPECT_TRUE(spec->offload_trainer);
}

TEST(RlJobTest, DefaultsAndOverrides) {
  auto spec = ParseRlSpec(kMinimal, "rl.yaml",
                          {"rollout.tp=4", "actor.parallel.ep=16", "lengths.response_mean=3K"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_EQ(spec->rollout.tp, 4);
  EXPECT_EQ(spec->actor_overrides, std::vector<std::string>{"parallel.ep=16"});
  // Means default to the caps when not given. Token counts read K as 1,000 (ParseTokenCount, as
  // the SFT job's "29K"): 2K = 2,000, 3K = 3,000.
  EXPECT_NEAR(spec->lengths.prompt_mean, 2000, 1e-9);
  EXPECT_NEAR(spec->lengths.response_mean, 3000, 1e-9);
  EXPECT_EQ(spec->mini_batches, 1);
  EXPECT_TRUE(spec->reference_model);
  EXPECT_FALSE(spec->rollout.enforce_eager);  // vLLM's default: CUDA graphs
  auto eager = ParseRlSpec(kMinimal, "rl.yaml", {"rollout.enforce_eager=true"});
  ASSERT_TRUE(eager.ok()) << eager.error().Format();
  EXPECT_TRUE(eager->rollout.enforce_eager);
}

struct BadRow {
  const char* name;
  std::string text;
  std::vector<std::string> overrides;
  std::string expected;  // Error::Format()
};

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(RlJobTest, BadInputNamesTheField) {
  const std::vector<BadRow> rows = {
      {"unknown_rollout_key",
       Replace(kMinimal, "  tp: 2\n", "  tp: 2\n  gpu_memory_utilisation: 0.5\n"),
       {},
       "rl.yaml:13: rollout.gpu_memory_utilisation: unknown field 'gpu_memory_utilisation'\n"
       "  hint: did you mean 'gpu_memory_utilization'?"},
      {"unknown_set_key",
       kMinimal,
       {"rollout.tpp=4"},
       "--set: unknown RL job key 'rollout.tpp'\n  hint: did you mean 'rollout.tp'? (a key of "
       "the actor's training job is set as actor.<key>)"},
      {"set_without_value",
       kMinimal,
       {"rollout.tp"},
       "--set 'rollout.tp': expected key=value\n  hint: for example --set rollout.tp=4"},
      {"misspelt_algorithm",
       Replace(kMinimal, "grpo", "gpro"),
       {},
       "rl.yaml:3: algorithm: unknown algorithm 'gpro'\n  hint: did you mean 'grpo'?"},
      {"utilisation_above_one",
       Replace(kMinimal, "0.6", "1.5"),
       {},
       "rl.yaml:13: rollout.gpu_memory_utilization: expected a fraction in (0, 1], got 1.5"},
      {"bad_version",
       Replace(kMinimal, "\"0.19\"", "latest"),
       {},
       "rl.yaml:11: rollout.vllm_version: expected a version such as 0.19, got 'latest'"},
      {"uneven_mini_batches",
       Replace(kMinimal, "  samples_per_prompt: 8\n",
               "  samples_per_prompt: 8\n  mini_batches: 3\n"),
       {},
       "rl.yaml:7: batch.mini_batches: 128 samples (16 prompts x 8) do not split into 3 mini "
       "batches"},
      {"mean_above_max",
       Replace(kMinimal, "  response_max: 8K\n", "  response_max: 8K\n  response_mean: 9K\n"),
       {},
       "rl.yaml:10: lengths.response_mean: the mean response is longer than response_max"},
      // Uniform up to 8,000 tokens has a mean of at least 4,000: 3,000 needs negative lengths.
      {"uniform_mean_below_half_the_max",
       Replace(kMinimal, "  response_max: 8K\n",
               "  response_max: 8K\n  response_mean: 3K\n  response_distribution: uniform\n"),
       {},
       "rl.yaml:11: lengths.response_distribution: a uniform distribution up to response_max "
       "(8000 tokens) has a mean of at least 4000 (response_max / 2), got 3000\n"
       "  hint: raise response_mean, or use capped_exponential (any mean up to the max)"},
      {"unknown_distribution",
       kMinimal,
       {"lengths.response_distribution=exponentail"},
       "rl.yaml:8: lengths.response_distribution: unknown response distribution "
       "'exponentail'\n  hint: expected one of: capped_exponential, uniform, fixed"},
      {"truncated",
       std::string(kMinimal).substr(0, std::string(kMinimal).find("batch:")),
       {},
       "rl.yaml:1: batch: missing required field"},
      {"unknown_engine",
       Replace(kMinimal, "  tp: 2\n", "  tp: 2\n  engine: trtllm\n"),
       {},
       "rl.yaml:13: rollout.engine: engine 'trtllm' is not modelled\n"
       "  hint: expected one of: vllm, sglang"},
      {"log_prob_budget_without_the_actors",
       Replace(kMinimal, "  samples_per_prompt: 8\n",
               "  samples_per_prompt: 8\n  log_prob_max_tokens_per_gpu: 30000\n"),
       {},
       "rl.yaml:7: batch.log_prob_max_tokens_per_gpu: log_prob_max_tokens_per_gpu packs a pass "
       "by tokens, but the actor's update is not packed (no batch.max_tokens_per_gpu)\n"
       "  hint: set batch.max_tokens_per_gpu (verl's ppo_max_token_len_per_gpu with "
       "use_dynamic_bsz); strata rl packs the log-prob and critic passes only beside it"},
      {"budget_not_a_count",
       kMinimal,
       {"batch.max_tokens_per_gpu=lots"},
       "rl.yaml:5: batch.max_tokens_per_gpu: expected a positive token count (2048, 8K), got "
       "'lots'"},
      {"one_step_off_colocated",
       kMinimal,
       {"placement.mode=colocated", "placement.one_step_off=true"},
       "rl.yaml: placement.one_step_off: one_step_off is for mode: split\n"
       "  hint: colocated rollout and training take turns on the same GPUs"},
      {"malformed", "actor: [job\n", {}, ""},
      {"empty", "", {}, "rl.yaml: the file is empty, expected a YAML mapping"},
  };
  for (const BadRow& row : rows) {
    SCOPED_TRACE(row.name);
    auto spec = ParseRlSpec(row.text, "rl.yaml", row.overrides);
    ASSERT_FALSE(spec.ok());
    if (row.expected.empty()) {
      // yaml-cpp's own wording; the file and line are ours.
      EXPECT_EQ(spec.error().Format().rfind("rl.yaml:", 0), 0u) << spec.error().Format();
    } else {
      EXPECT_EQ(spec.error().Format(), row.expected);
    }
  }
}

TEST(RlJobTest, SglangIsReadAsVllm) {
  // verl's other rollout engine (`strata import` writes it from rollout.name=sglang): read,
  // and modelled as vLLM (docs/rl.md); vLLM when the key is absent.
  auto sglang =
      ParseRlSpec(Replace(kMinimal, "  tp: 2\n", "  tp: 2\n  engine: sglang\n"), "rl.yaml");
  ASSERT_TRUE(sglang.ok()) << sglang.error().Format();
  EXPECT_EQ(sglang->rollout.engine, "sglang");
  auto plain = ParseRlSpec(kMinimal, "rl.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->rollout.engine, "vllm");
}

// verl's dynamic batch: the token budgets per GPU, each pass's own or the actor's.
TEST(RlJobTest, DynamicBatchBudgets) {
  auto fixed = ParseRlSpec(kMinimal, "rl.yaml");
  ASSERT_TRUE(fixed.ok());
  EXPECT_FALSE(fixed->dynamic_batch());
  auto packed =
      ParseRlSpec(kMinimal, "rl.yaml",
                  {"batch.max_tokens_per_gpu=24000", "batch.critic_max_tokens_per_gpu=98K"});
  ASSERT_TRUE(packed.ok()) << packed.error().Format();
  EXPECT_TRUE(packed->dynamic_batch());
  EXPECT_EQ(packed->max_tokens_per_gpu, 24000);
  EXPECT_EQ(packed->LogProbBudget(), 24000);  // the actor's when not given
  EXPECT_EQ(packed->CriticBudget(), 98000);   // K = 1,000, as every token count
}

TEST(RlJobTest, UnknownCatalogName) {
  auto spec = LoadRlSpec("qwen3.6-grpo");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().Format(),
            "no RL job named 'qwen3.6-grpo' in the catalog (data/jobs/)\n  hint: give a path to "
            "an RL job file, or 'qwen3.6-35b-a3b-grpo-h20x40'");
}

}  // namespace
}  // namespace strata::rl_job_test

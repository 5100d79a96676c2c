// strata import of verl RL launches (verl.trainer.main_ppo and its trainer YAML) into RL jobs:
// every RL field read off the public scripts by hand (tests/golden/cli_import/SOURCES.md), the
// imported RL and actor jobs pinned as goldens (tests/golden/rl_import/, which
// tests/golden/cli_rl/imported_* run through `strata rl`), and bad launches refused by key and
// line.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "importer/import_test_support.h"
#include "strata/core/file_io.h"
#include "strata/importer/import_job.h"
#include "strata/importer/verl_rl_mapping.h"
#include "support/golden.h"
#include "support/golden_edit.h"
#include "support/scratch_dir.h"

namespace strata::verl_rl_import_test {
namespace {

using testing::ImportGolden;

ImportOptions Options(const char* gpu, const char* model) {
  ImportOptions o;
  o.gpu = gpu;
  o.model = model;
  o.actor_job_ref = "rl.actor.yaml";  // as `strata import -o rl.yaml` names it
  return o;
}

using testing::ScratchDir;

struct Field {
  const char* key;
  const char* value;
  const char* source;  // the provenance written beside the value
};

struct RlCase {
  const char* name;  // tests/golden/rl_import/<name>/
  const char* file;  // under tests/golden/cli_import/
  ImportOptions options;
  std::vector<Field> fields;
};

std::vector<RlCase> Cases() {
  ImportOptions yaml = Options("H100 SXM", "llama-3.1-8b");
  yaml.nodes = 1;
  yaml.gpus_per_node = 8;
  // DAPO's 4 nodes need a network: the H20 cluster file's (its nodes from the script).
  ImportOptions dapo = Options("", "qwen2.5-math-7b");
  dapo.cluster = "h20-5x8";
  return {
      // volcengine/verl examples/grpo_trainer/run_qwen3moe-30b_megatron_96gb.sh @ 6e7fdc2:
      // train_prompt_bsz=512, n_resp_per_prompt=16, train_prompt_mini_bsz=128 (512 / 128 = 4
      // mini batches), max_prompt_length=$((1024 * 2)), max_response_length=$((1024 * 8)),
      // INFER_TP=4, gpu_memory_utilization=0.7, enforce_eager=True, use_kl_loss=False and
      // use_kl_in_reward=False (no reference), offload=True for the megatron actor's params,
      // grads and optimizer. Unset: ppo_epochs, max_num_seqs, dtype, hybrid_engine (verl's
      // ppo_megatron_trainer.yaml defaults 1, 1024, bfloat16, True).
      {"verl_qwen3moe_megatron",
       "verl_qwen3moe_megatron/run_qwen3moe-30b_megatron_96gb.sh",
       Options("H20", ""),
       {{"algorithm", "grpo", "algorithm.adv_estimator (line 103): 'grpo', no critic"},
        {"batch.prompts", "512", "data.train_batch_size (line 101)"},
        {"batch.samples_per_prompt", "16", "actor_rollout_ref.rollout.n (line 102)"},
        {"batch.mini_batches", "4", nullptr},
        {"batch.epochs", "1", "default: verl's actor_rollout_ref.actor.ppo_epochs = 1"},
        {"lengths.prompt_max", "2048", "data.max_prompt_length (line 99)"},
        {"lengths.response_max", "8192", "data.max_response_length (line 100)"},
        {"rollout.engine", "vllm", "actor_rollout_ref.rollout.name (line 164)"},
        {"rollout.tp", "4", "actor_rollout_ref.rollout.tensor_model_parallel_size (line 153)"},
        {"rollout.gpu_memory_utilization", "0.7",
         "actor_rollout_ref.rollout.gpu_memory_utilization (line 152)"},
        {"rollout.max_num_seqs", "1024", nullptr},
        {"rollout.enforce_eager", "true", "actor_rollout_ref.rollout.enforce_eager (line 165)"},
        {"rollout.dtype", "bf16", nullptr},
        {"reference", "false", nullptr},
        {"placement.mode", "colocated", nullptr},
        {"placement.offload_trainer", "true", nullptr},
        // use_dynamic_bsz=True (line 47, set on line 114); both budgets
        // $(((max_prompt_length + max_response_length))) = 10,240 (lines 117, 151).
        {"batch.max_tokens_per_gpu", "10240",
         "actor_rollout_ref.actor.ppo_max_token_len_per_gpu (line 117): use_dynamic_bsz True "
         "(actor_rollout_ref.actor.use_dynamic_bsz (line 114)): the actor's micro batches "
         "packed up to this many tokens per GPU"},
        {"batch.log_prob_max_tokens_per_gpu", "10240", nullptr}}},
      // volcengine/verl examples/ppo_trainer/run_qwen2-7b_seq_balance.sh @ 7406178: PPO (no
      // adv_estimator: verl's default gae trains a critic), train_batch_size=4096 over
      // ppo_mini_batch_size=512 (8 mini batches), n unset (1), prompt and response 4096,
      // rollout TP 2 at 0.5, FSDP param/optimizer offload False, no KL loss. Unset:
      // enforce_eager (ppo_trainer.yaml's True), max_num_seqs 1024.
      {"verl_rl_ppo_qwen2_7b_critic",
       "verl_rl_ppo_qwen2_7b_critic/run_qwen2-7b_seq_balance.sh",
       Options("H20", "qwen2.5-math-7b"),
       {{"algorithm", "ppo", nullptr},
        {"batch.prompts", "4096", "data.train_batch_size (line 14)"},
        {"batch.samples_per_prompt", "1", "default: verl's actor_rollout_ref.rollout.n = 1"},
        {"batch.mini_batches", "8", nullptr},
        {"batch.epochs", "1", nullptr},
        {"lengths.prompt_max", "4096", "data.max_prompt_length (line 15)"},
        {"lengths.response_max", "4096", "data.max_response_length (line 16)"},
        {"rollout.engine", "vllm", "actor_rollout_ref.rollout.name (line 31)"},
        {"rollout.tp", "2", "actor_rollout_ref.rollout.tensor_model_parallel_size (line 30)"},
        {"rollout.gpu_memory_utilization", "0.5", nullptr},
        {"rollout.max_num_seqs", "1024", nullptr},
        {"rollout.enforce_eager", "true",
         "default: verl's actor_rollout_ref.rollout.enforce_eager = true"},
        {"rollout.dtype", "bf16", nullptr},
        {"reference", "false", nullptr},
        {"placement.mode", "colocated", nullptr},
        {"placement.offload_trainer", "false", nullptr},
        // use_dynamic_bsz=True (line 24): the actor's 24,000 tokens (line 25), the log-prob
        // passes' 24,000 (line 33), the critic's 98,304 (line 40).
        {"batch.max_tokens_per_gpu", "24000",
         "actor_rollout_ref.actor.ppo_max_token_len_per_gpu (line 25): use_dynamic_bsz True "
         "(actor_rollout_ref.actor.use_dynamic_bsz (line 24)): the actor's micro batches packed "
         "up to this many tokens per GPU"},
        {"batch.log_prob_max_tokens_per_gpu", "24000",
         "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu (line 33): the old log-prob "
         "(and reference) passes' micro batches"},
        {"batch.critic_max_tokens_per_gpu", "98304",
         "critic.ppo_max_token_len_per_gpu (line 40): the critic's update and values passes"}}},
      // volcengine/verl examples/grpo_trainer/run_qwen2_5-7b_math.sh @ 7cb8d02: GRPO, 1024
      // prompts x n=5, ppo_mini_batch_size=256 (4 mini batches), prompt and response 1024,
      // rollout TP 2 at 0.6, use_kl_loss=True (a reference pass), 16 GPUs on one node.
      {"verl_rl_grpo_qwen2_5_7b_fsdp",
       "verl_rl_grpo_qwen2_5_7b_fsdp/run_qwen2_5-7b_math.sh",
       Options("H20", "qwen2.5-math-7b"),
       {{"algorithm", "grpo", nullptr},
        {"batch.prompts", "1024", nullptr},
        {"batch.samples_per_prompt", "5", "actor_rollout_ref.rollout.n (line 38)"},
        {"batch.mini_batches", "4", nullptr},
        {"batch.epochs", "1", nullptr},
        {"lengths.prompt_max", "1024", nullptr},
        {"lengths.response_max", "1024", nullptr},
        {"rollout.engine", "vllm", nullptr},
        {"rollout.tp", "2", nullptr},
        {"rollout.gpu_memory_utilization", "0.6",
         "actor_rollout_ref.rollout.gpu_memory_utilization (line 37)"},
        {"rollout.max_num_seqs", "1024", nullptr},
        {"rollout.enforce_eager", "true", nullptr},
        {"rollout.dtype", "bf16", nullptr},
        {"reference", "true",
         "actor_rollout_ref.actor.use_kl_loss (line 27): a KL loss against the reference: one "
         "more forward pass"},
        {"placement.mode", "colocated", nullptr},
        {"placement.offload_trainer", "false", nullptr}}},
      // volcengine/verl verl/trainer/config/ppo_trainer.yaml @ 008db45, verl's own Hydra YAML:
      // data.train_batch_size 1024 / ppo_mini_batch_size 256 = 4, n 1, adv_estimator gae (a
      // critic), rollout vllm TP 2 at 0.5, enforce_eager True, max_num_seqs 1024, dtype
      // bfloat16, use_kl_loss False, hybrid_engine True, FSDP offload False.
      {"verl_ppo_trainer_fsdp",
       "verl_ppo_trainer_fsdp/ppo_trainer.yaml",
       yaml,
       {{"algorithm", "ppo", nullptr},
        {"batch.prompts", "1024", "ppo_trainer.yaml:9: data.train_batch_size"},
        {"batch.samples_per_prompt", "1", nullptr},
        {"batch.mini_batches", "4", nullptr},
        {"batch.epochs", "1", nullptr},
        {"lengths.prompt_max", "512", nullptr},
        {"lengths.response_max", "512", nullptr},
        {"rollout.engine", "vllm", nullptr},
        {"rollout.tp", "2", nullptr},
        {"rollout.gpu_memory_utilization", "0.5", nullptr},
        {"rollout.max_num_seqs", "1024", nullptr},
        {"rollout.enforce_eager", "true", nullptr},
        {"rollout.dtype", "bf16", nullptr},
        {"reference", "false", nullptr},
        {"placement.mode", "colocated",
         "ppo_trainer.yaml:24: actor_rollout_ref.hybrid_engine: the hybrid engine: training and "
         "rollout take turns on every GPU; ppo_trainer.yaml:104: "
         "actor_rollout_ref.rollout.free_cache_engine = True: the rollout's KV cache is freed "
         "while the actor trains"},
        {"placement.offload_trainer", "false", nullptr}}},
      // volcengine/verl recipe/dapo/test_dapo_7b.sh @ 875788e: DAPO's own entry point
      // (`ray job submit ... -- python3 -m recipe.dapo.main_dapo`, its config dapo_trainer over
      // verl's ppo_trainer): train_prompt_bsz=512 x n_resp_per_prompt=16, mini batches of 32
      // prompts (16), prompt and response $((1024 * 2)), rollout TP 1 at 0.85, no KL loss or KL
      // reward, offload False, NNODES 4 x 8 GPUs; use_dynamic_bsz=True with both budgets
      // $((max_prompt_length + max_response_length)) = 4,096 (lines 83, 85).
      {"verl_recipe_dapo",
       "verl_recipe_dapo/test_dapo_7b.sh",
       dapo,
       {{"algorithm", "grpo", "algorithm.adv_estimator (line 73): 'grpo', no critic"},
        {"batch.prompts", "512", "data.train_batch_size (line 66)"},
        {"batch.samples_per_prompt", "16", "actor_rollout_ref.rollout.n (line 67)"},
        {"batch.mini_batches", "16", nullptr},
        {"batch.epochs", "1", nullptr},
        {"lengths.prompt_max", "2048", "data.max_prompt_length (line 63)"},
        {"lengths.response_max", "2048", "data.max_response_length (line 64)"},
        {"rollout.engine", "vllm", "actor_rollout_ref.rollout.name (line 88)"},
        {"rollout.tp", "1", "actor_rollout_ref.rollout.tensor_model_parallel_size (line 102)"},
        {"rollout.gpu_memory_utilization", "0.85",
         "actor_rollout_ref.rollout.gpu_memory_utilization (line 100)"},
        {"reference", "false", nullptr},
        {"placement.mode", "colocated", nullptr},
        {"placement.offload_trainer", "false", nullptr},
        {"batch.max_tokens_per_gpu", "4096",
         "actor_rollout_ref.actor.ppo_max_token_len_per_gpu (line 83): use_dynamic_bsz True "
         "(actor_rollout_ref.actor.use_dynamic_bsz (line 80)): the actor's micro batches packed "
         "up to this many tokens per GPU"},
        {"batch.log_prob_max_tokens_per_gpu", "4096", nullptr}}},
  };
}

const ImportedField* Find(const RlImport& rl, const std::string& key) {
  for (const ImportedField& f : rl.fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

TEST(VerlRlImportTest, FieldsReadOffTheScripts) {
  for (const RlCase& c : Cases()) {
    auto r = ImportJobFile(ImportGolden(c.file), c.options);
    ASSERT_TRUE(r.ok()) << c.file << ": " << r.error().Format();
    ASSERT_TRUE(r->rl.has_value()) << c.file << ": a main_ppo launch imports as an RL job";
    size_t right = 0;
    for (const Field& f : c.fields) {
      const ImportedField* got = Find(*r->rl, f.key);
      ASSERT_NE(got, nullptr) << c.file << ": " << f.key;
      const bool value_ok = got->value == f.value;
      const bool source_ok = f.source == nullptr || got->source == f.source;
      EXPECT_EQ(got->value, f.value) << c.file << ": " << f.key;
      if (f.source != nullptr) {
        EXPECT_EQ(got->source, f.source) << c.file << ": " << f.key;
      }
      right += value_ok && source_ok ? 1 : 0;
    }
    EXPECT_EQ(right, c.fields.size()) << c.file;
    std::printf("[ rl import ] %s: %zu / %zu RL fields right\n", c.name, right, c.fields.size());
    EXPECT_EQ(Find(*r->rl, "actor.job")->value, "rl.actor.yaml");
    // The actor's job and the RL job around it, as `strata import -o rl.yaml` writes them.
    EXPECT_TRUE(testing::MatchesGolden(std::string("golden/rl_import/") + c.name + "/rl.yaml",
                                       r->rl->yaml));
    EXPECT_TRUE(testing::MatchesGolden(std::string("golden/rl_import/") + c.name + "/rl.actor.yaml",
                                       r->yaml));
  }
}

// Both: the script's overrides over verl's Hydra base config given with it (main_ppo's default
// --config-name is ppo_trainer). The script sets n=5 (line 38) over the YAML's n: 1; the keys the
// script leaves out come from the YAML's lines instead of data/verl_rl_defaults.yaml.
TEST(VerlRlImportTest, ScriptOverridesTheHydraYamlGivenWithIt) {
  ImportOptions o = Options("H20", "qwen2.5-math-7b");
  o.files = {ImportGolden("verl_ppo_trainer_fsdp/ppo_trainer.yaml")};
  auto r = ImportJobFile(ImportGolden("verl_rl_grpo_qwen2_5_7b_fsdp/run_qwen2_5-7b_math.sh"), o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const std::vector<Field> expected = {
      {"batch.samples_per_prompt", "5", "actor_rollout_ref.rollout.n (line 38)"},
      {"batch.epochs", "1", "ppo_trainer.yaml:53: actor_rollout_ref.actor.ppo_epochs"},
      {"rollout.max_num_seqs", "1024",
       "ppo_trainer.yaml:109: actor_rollout_ref.rollout.max_num_seqs"},
      {"rollout.enforce_eager", "true",
       "ppo_trainer.yaml:103: actor_rollout_ref.rollout.enforce_eager"},
      {"rollout.dtype", "bf16", "ppo_trainer.yaml:100: actor_rollout_ref.rollout.dtype"},
  };
  for (const Field& f : expected) {
    const ImportedField* got = Find(*r->rl, f.key);
    ASSERT_NE(got, nullptr) << f.key;
    EXPECT_EQ(got->value, f.value) << f.key;
    EXPECT_EQ(got->source, f.source) << f.key;
  }
}

TEST(VerlRlImportTest, SettingsTheRlJobReadAreNotListedAsUnused) {
  auto r = ImportJobFile(ImportGolden("verl_qwen3moe_megatron/run_qwen3moe-30b_megatron_96gb.sh"),
                         Options("H20", ""));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  for (const std::string& line : r->unused) {
    EXPECT_FALSE(line.starts_with("data.train_batch_size")) << line;
    EXPECT_FALSE(line.starts_with("algorithm.adv_estimator")) << line;
    EXPECT_FALSE(line.starts_with("actor_rollout_ref.rollout.enforce_eager")) << line;
  }
}

TEST(VerlRlImportTest, SglangIsReadAsVllmWithANote) {
  // The GRPO script with its rollout on SGLang (verl's other engine name).
  const std::string script =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
      "    actor_rollout_ref.rollout.name=sglang \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
  auto r = ImportJob(script, "run_sglang.sh", Options("H20", "qwen2.5-math-7b"));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Find(*r->rl, "rollout.engine")->value, "sglang");
  ASSERT_FALSE(r->rl->notes.empty());
  EXPECT_NE(r->rl->notes.front().find("SGLang modelled as vLLM"), std::string::npos);
  // The SFT trainer of verl stays a training job.
  auto sft = ImportJob(
      "torchrun -m verl.trainer.fsdp_sft_trainer actor_rollout_ref.model.path=Qwen/Qwen2.5-7B "
      "trainer.n_gpus_per_node=8 trainer.nnodes=1\n",
      "sft.sh", Options("H20", "qwen2.5-math-7b"));
  ASSERT_TRUE(sft.ok()) << sft.error().Format();
  EXPECT_FALSE(sft->rl.has_value());
}

// verl's use_liger puts Liger's kernels into the HF model its FSDP actor trains: the job says
// framework.liger_kernel, so neither the eager module traffic nor HF's eager layer memory is
// charged (it was read but not used). The actor's strategy decides the RL defaults, not whether
// a --set happened to name a sharding mode.
TEST(VerlRlImportTest, UseLigerAndTheStrategyAreRead) {
  const std::string script =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
      "    actor_rollout_ref.model.use_liger=True \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
  auto r = ImportJob(script, "run.sh", Options("H20", "qwen2.5-math-7b"));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_TRUE(r->job.framework.liger_kernel);
  const std::string megatron =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo \\\n"
      "    actor_rollout_ref.actor.strategy=megatron \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
      "    actor_rollout_ref.model.use_liger=True \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
  ImportOptions o = Options("H20", "qwen2.5-math-7b");
  o.overrides.push_back("sharding.mode=zero1");
  auto m = ImportJob(megatron, "run.sh", o);
  ASSERT_TRUE(m.ok()) << m.error().Format();
  EXPECT_FALSE(m->job.framework.liger_kernel);  // megatron workers run megatron-core's layers
  ASSERT_TRUE(m->rl.has_value());
  const std::string defaults = Find(*m->rl, "placement.offload_trainer")->source;
  EXPECT_NE(defaults.find("ppo_megatron_trainer.yaml"), std::string::npos) << defaults;
}

// The whole path as a user runs it: `strata import -o rl.yaml` writes the RL job and the actor's
// job beside it, and `strata rl rl.yaml` reads both and prints the step (exit 0: it runs).
TEST(VerlRlImportTest, ImportedFilesRunInStrataRl) {
  const ScratchDir scratch("strata-verl-rl-");
  const std::filesystem::path& dir = scratch.path;
  const std::string rl = (dir / "rl.yaml").string();
  const testing::CliResult imported = testing::RunCli(
      {"import", ImportGolden("verl_rl_grpo_qwen2_5_7b_fsdp/run_qwen2_5-7b_math.sh"), "--gpu",
       "H20", "--model", "qwen2.5-math-7b", "-o", rl});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "rl.actor.yaml"));
  EXPECT_NE(imported.out.find("(RL job; verl trainer command (Hydra overrides))"),
            std::string::npos)
      << imported.out;
  const testing::CliResult run = testing::RunCli({"rl", rl});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // 1024 prompts x 5 samples on 1 node x 16 H20 (trainer.n_gpus_per_node=16).
  EXPECT_NE(run.out.find("RL job: GRPO on qwen2.5-math-7b, 16 x H20"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("step: 1024 prompts x 5 samples = 5,120 samples"), std::string::npos)
      << run.out;
}

// verl's recipes run their own entry points; those whose config is verl's PPO trainer config
// import as RL jobs with what the recipe adds noted, the others are refused by name. Before, a
// recipe's `-m recipe.dapo.main_dapo` was no launch at all ("no training launch recognised").
TEST(VerlRlImportTest, RecipeEntryPoints) {
  ImportOptions options = Options("", "qwen2.5-math-7b");
  options.cluster = "h20-5x8";
  auto dapo = ImportJobFile(ImportGolden("verl_recipe_dapo/test_dapo_7b.sh"), options);
  ASSERT_TRUE(dapo.ok()) << dapo.error().Format();
  ASSERT_TRUE(dapo->rl.has_value());
  const std::vector<std::string>& notes = dapo->rl->notes;
  auto noted = [&](const std::string& text) {
    for (const std::string& n : notes) {
      if (n.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(
      noted("DAPO (recipe.dapo.main_dapo, config dapo_trainer over verl's "
            "ppo_trainer): priced as verl's PPO step"));
  // enable_filter_groups=True (line 76), gen_prompt_bsz=$((train_prompt_bsz * 3)) = 1536
  // (line 65), max_num_gen_batches=10 (line 78).
  EXPECT_TRUE(
      noted("algorithm.filter_groups.enable = True (algorithm.filter_groups.enable (line "
            "76)): DAPO's dynamic sampling generates data.gen_batch_size = 1536 prompts "
            "a round (data.gen_batch_size (line 65))"));
  EXPECT_TRUE(noted("(at most 10 rounds: algorithm.filter_groups.max_num_gen_batches (line 78))"));
  EXPECT_TRUE(noted("reward_model.overlong_buffer.enable = True"));
  // The recipe's own keys are read, not listed as unused.
  for (const std::string& line : dapo->unused) {
    EXPECT_FALSE(line.starts_with("algorithm.filter_groups.enable")) << line;
  }

  struct Refused {
    const char* module;
    const char* message;
  };
  const Refused kRefused[] = {
      {"recipe.gkd.main_gkd",
       "recipe.gkd.main_gkd (on-policy distillation (GKD)): not imported: its config "
       "(on_policy_distill_trainer) is its own, not verl's PPO trainer config: a teacher model "
       "scores the student's rollouts, which strata rl does not model"},
      {"recipe.fully_async_policy.fully_async_main",
       "recipe.fully_async_policy.fully_async_main (fully async): not imported: the rollout "
       "streams samples of several policy versions (partial rollouts, staleness) to a trainer on "
       "GPUs of its own; strata rl models on-policy and one-step-off pipelines only. Write the "
       "RL job by hand with placement: {mode: split, rollout_gpus: N, one_step_off: true} for its "
       "nearest, the one-step-off split"},
      {"verl.trainer.main_generation",
       "verl.trainer.main_generation: not imported: it generates from a dataset: nothing "
       "trains"},
  };
  for (const Refused& c : kRefused) {
    const std::string script = std::string("python3 -m ") + c.module +
                               " \\\n    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B\n";
    auto r = ImportJob(script, "run.sh", Options("H20", "qwen2.5-math-7b"));
    ASSERT_FALSE(r.ok()) << c.module;
    EXPECT_EQ(r.error().message, c.message);
    EXPECT_EQ(r.error().line, 1) << c.module;
  }
  // A recipe strata does not know is refused with the ones it does.
  auto unknown = ImportJob("python3 -m recipe.mystery.main_mystery data.train_batch_size=8\n",
                           "run.sh", Options("H20", "qwen2.5-math-7b"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(unknown.error().message.starts_with(
      "recipe.mystery.main_mystery: not imported: a verl entry point strata does not know: its "
      "config may not be verl's PPO trainer config. Those imported as RL jobs: "
      "verl.trainer.main_ppo, verl.trainer.main_grpo, recipe.dapo.main_dapo"))
      << unknown.error().message;
  // Another project's `recipe` package (no verl override follows it) is not claimed as verl: it
  // was refused as "a verl entry point strata does not know".
  auto other =
      ImportJob("python3 -m recipe.sft.train --deepspeed ds.json --per_device_train_batch_size 2\n",
                "run.sh", Options("H20", "qwen2.5-math-7b"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().message.find("verl entry point"), std::string::npos)
      << other.error().message;
  EXPECT_TRUE(other.error().message.starts_with("no training launch recognised"))
      << other.error().message;
}

// verl's one-step-off recipe (volcengine/verl@875788e:recipe/one_step_off_policy/shell/
// dapo_7b_math_fsdp2_64_64.sh): NNODES_TRAIN 8 and NNODES_ROLLOUT 8 nodes of 8 GPUs (lines
// 57-59, set on lines 137-140) are one cluster of 16 nodes, split 64 + 64, one step off-policy.
// Before: refused as a placement strata import did not read.
TEST(VerlRlImportTest, OneStepOffRecipeImportsAsASplit) {
  ImportOptions o = Options("", "qwen2.5-math-7b");
  o.cluster = "h20-5x8";
  auto r = ImportJobFile(ImportGolden("verl_recipe_one_step_off/dapo_7b_math_fsdp2_64_64.sh"), o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  ASSERT_TRUE(r->rl.has_value());
  EXPECT_EQ(r->job.cluster.nodes, 16);
  EXPECT_EQ(r->job.cluster.gpus_per_node, 8);
  EXPECT_EQ(Find(*r->rl, "placement.mode")->value, "split");
  EXPECT_EQ(Find(*r->rl, "placement.rollout_gpus")->value, "64");
  EXPECT_EQ(Find(*r->rl, "placement.one_step_off")->value, "true");
  // 512 prompts x 16 = 8,192 samples over the 64 training GPUs (verl's check on the trainer's).
  EXPECT_EQ(Find(*r->rl, "batch.prompts")->value, "512");
  EXPECT_TRUE(
      testing::MatchesGolden("golden/rl_import/verl_recipe_one_step_off/rl.yaml", r->rl->yaml));
}

// The recipe's shared form (volcengine/verl@1dda039b9c6311889a9c9a26040677e1254814f9:verl/
// experimental/one_step_off_policy/README.md, "Resource Configuration Strategies": trainer.nnodes
// = rollout.nnodes, trainer.n_gpus_per_node + rollout.n_gpus_per_node = the node's GPUs; its
// grpo_0.6b_gsm8k_fsdp2_2_6.sh gives 6 + 2 of one node): one node of 6 + 2 = 8 GPUs, the rollout
// 1 x 2 of them, the actor's job the trainer's 6 of the node (shared_nodes: the split comes
// first). Before: refused ("strata's splits are whole nodes of one cluster"). With unequal
// nnodes the sides cannot share nodes: still refused, naming both.
TEST(VerlRlImportTest, OneStepOffSharedNodesImportAsASplitInsideTheNode) {
  const std::string script =
      "python3 -m verl.experimental.one_step_off_policy.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo data.train_batch_size=1152 \\\n"
      "    data.max_prompt_length=512 data.max_response_length=1024 \\\n"
      "    actor_rollout_ref.actor.strategy=fsdp2 actor_rollout_ref.hybrid_engine=False \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-Math-7B \\\n"
      "    actor_rollout_ref.actor.ppo_mini_batch_size=192 \\\n"
      "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\\n"
      "    actor_rollout_ref.rollout.tensor_model_parallel_size=2 actor_rollout_ref.rollout.n=5 "
      "\\\n"
      "    trainer.nnodes=1 trainer.n_gpus_per_node=6 rollout.nnodes=1 "
      "rollout.n_gpus_per_node=2\n";
  ImportOptions o = Options("H20", "qwen2.5-math-7b");
  o.cluster = "h20-5x8";
  auto r = ImportJob(script, "run.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  ASSERT_TRUE(r->rl.has_value());
  EXPECT_EQ(r->job.cluster.nodes, 1);
  EXPECT_EQ(r->job.cluster.gpus_per_node, 6);
  EXPECT_TRUE(r->job.cluster.shared_nodes);
  EXPECT_EQ(Find(*r->rl, "placement.rollout_gpus")->value, "2");
  EXPECT_EQ(Find(*r->rl, "placement.one_step_off")->value, "true");

  std::string unequal = script;
  unequal.replace(unequal.find("rollout.nnodes=1"), 16, "rollout.nnodes=2");
  auto refused = ImportJob(unequal, "run.sh", o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "rollout.n_gpus_per_node 2 differs from trainer.n_gpus_per_node 6 on rollout.nnodes 2 "
            "and trainer.nnodes 1: strata's splits are whole nodes, or the same share of every "
            "node (equal nnodes)");
}

// The same shared-node launch given a GPU alone (--gpu, no --cluster): the launch says each
// side's share of a node (trainer 6, rollout 2), not the node itself, and a job's shared node is
// a cluster file's. Before, the actor's job was written over all 6 + 2 = 8 GPUs of the node (DP
// 8 with the trainer on 6: 960 samples / (4 x 8) = 30 micro batches, so it imported, priced on
// GPUs verl's trainer never holds). Now refused, exit 2, asking for a cluster file whose node
// holds both sides (6 + 2 = 8 GPUs).
TEST(VerlRlImportTest, OneStepOffSharedNodesWithAGpuAloneAskForACluster) {
  const std::string script =
      "python3 -m verl.experimental.one_step_off_policy.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo data.train_batch_size=1152 \\\n"
      "    data.max_prompt_length=512 data.max_response_length=1024 \\\n"
      "    actor_rollout_ref.actor.strategy=fsdp2 actor_rollout_ref.hybrid_engine=False \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-Math-7B \\\n"
      "    actor_rollout_ref.actor.ppo_mini_batch_size=192 \\\n"
      "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\\n"
      "    actor_rollout_ref.rollout.tensor_model_parallel_size=2 actor_rollout_ref.rollout.n=5 "
      "\\\n"
      "    trainer.nnodes=1 trainer.n_gpus_per_node=6 rollout.nnodes=1 "
      "rollout.n_gpus_per_node=2\n";
  auto refused = ImportJob(script, "run.sh", Options("H20", "qwen2.5-math-7b"));
  ASSERT_FALSE(refused.ok()) << refused->yaml;
  EXPECT_EQ(refused.error().message,
            "trainer.n_gpus_per_node 6 + rollout.n_gpus_per_node 2: the one-step-off recipe "
            "shares each node between trainer and rollout, and a cluster given by GPU alone "
            "cannot say a node is shared: the actor's job would be written over all 8 GPUs of "
            "each node, not the trainer's 6");
  EXPECT_EQ(refused.error().hint,
            "add --cluster with a cluster file whose nodes hold both sides (8 GPUs a node)");

  const ScratchDir scratch("strata-verl-gpu-");
  const std::filesystem::path& dir = scratch.path;
  const std::string file = (dir / "run.sh").string();
  ASSERT_TRUE(WriteFileAtomic(file, script).ok());
  const testing::CliResult cli =
      testing::RunCli({"import", file, "--gpu", "H20", "--model", "qwen2.5-math-7b"});
  EXPECT_EQ(cli.exit_code, 2) << cli.out << cli.err;
  EXPECT_NE(cli.err.find("add --cluster"), std::string::npos) << cli.err;
  // With the cluster file the same launch imports, on the trainer's 6 GPUs of the node.
  const testing::CliResult with_cluster =
      testing::RunCli({"import", file, "--cluster", "h20-5x8", "--model", "qwen2.5-math-7b"});
  EXPECT_EQ(with_cluster.exit_code, 0) << with_cluster.err;
}

// verl's one-step-off scripts that share each node between trainer and rollout, as published
// (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/experimental/
// one_step_off_policy/shell/grpo_0.6b_gsm8k_fsdp2_2_6.sh, the lines the import reads, verbatim):
// 2 rollout + 6 training GPUs of one 8-GPU node. Before, the actor's job was written over all 8
// GPUs, where its mini batch does not divide (192 prompts x 5 = 960 samples over micro batch 32
// x DP 8 = 256: 3.75), and `strata import` refused its own job at the read-back; on the trainer's
// 6 GPUs, as verl runs it, 960 / (32 x 6) = 5 micro batches a GPU. Imported on its own GPUs, the
// job prices as the 2 + 6 split; colocated over all 8 it is not possible, for that reason.
constexpr const char* kOneStepOffSharedNode =
    "NNODES=${NNODES:-1}\n"
    "NGPUS_PER_NODE=${NGPUS_PER_NODE:-8}\n"
    "\n"
    "n_gpus_rollout=2\n"
    "n_gpus_training=$((NGPUS_PER_NODE - n_gpus_rollout))\n"
    "\n"
    "python3 -m verl.experimental.one_step_off_policy.main_ppo \\\n"
    "    algorithm.adv_estimator=grpo \\\n"
    "    data.train_batch_size=1152 \\\n"
    "    data.max_prompt_length=512 \\\n"
    "    data.max_response_length=1024 \\\n"
    "    actor_rollout_ref.actor.strategy=fsdp2 \\\n"
    "    critic.strategy=fsdp2 \\\n"
    "    actor_rollout_ref.hybrid_engine=False \\\n"
    "    actor_rollout_ref.model.use_remove_padding=True \\\n"
    "    actor_rollout_ref.actor.ppo_mini_batch_size=192 \\\n"
    "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=32 \\\n"
    "    actor_rollout_ref.actor.use_kl_loss=True \\\n"
    "    actor_rollout_ref.model.enable_gradient_checkpointing=True \\\n"
    "    actor_rollout_ref.actor.fsdp_config.param_offload=False \\\n"
    "    actor_rollout_ref.actor.fsdp_config.optimizer_offload=False \\\n"
    "    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \\\n"
    "    actor_rollout_ref.rollout.name=vllm \\\n"
    "    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \\\n"
    "    actor_rollout_ref.rollout.n=5 \\\n"
    "    actor_rollout_ref.ref.fsdp_config.param_offload=True \\\n"
    "    trainer.nnodes=\"${NNODES}\" \\\n"
    "    trainer.n_gpus_per_node=\"${n_gpus_training}\" \\\n"
    "    rollout.nnodes=\"${NNODES}\" \\\n"
    "    rollout.n_gpus_per_node=\"${n_gpus_rollout}\" $@\n";

TEST(VerlRlImportTest, OneStepOffSharedNodeScriptImportsAndPricesOnTheTrainersGpus) {
  const ScratchDir scratch("strata-verl-2-6-");
  const std::filesystem::path& dir = scratch.path;
  const std::string script = (dir / "grpo_0.6b_gsm8k_fsdp2_2_6.sh").string();
  ASSERT_TRUE(WriteFileAtomic(script, kOneStepOffSharedNode).ok());
  const std::string rl = (dir / "rl.yaml").string();
  const testing::CliResult imported = testing::RunCli(
      {"import", script, "--cluster", "h100-8x8-ib400", "--model", "qwen3-0.6b", "-o", rl});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  auto actor = ReadFile((dir / "rl.actor.yaml").string());
  ASSERT_TRUE(actor.ok());
  // The actor's job: the trainer's 6 GPUs of the node, the other 2 the rollout's, DP 6.
  EXPECT_NE(actor->find("gpus_per_node: 6 "), std::string::npos) << *actor;
  EXPECT_NE(actor->find("shared_nodes: true "), std::string::npos) << *actor;
  EXPECT_NE(actor->find("dp: 6 "), std::string::npos) << *actor;
  const testing::CliResult run = testing::RunCli({"rl", rl, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["gpus"], 8);
  EXPECT_EQ(j["samples"], 1152 * 5);
  const auto& configured = j["configured"];
  EXPECT_EQ(configured["valid"], true) << configured.dump();
  EXPECT_EQ(configured["rollout_gpus"], 2);
  EXPECT_EQ(configured["train_gpus"], 6);
  EXPECT_EQ(configured["shared_nodes"], true);
  EXPECT_GT(configured["step_s"].get<double>(), 0);
  const auto& colocated = j["colocated"];
  EXPECT_EQ(colocated["valid"], false);
  EXPECT_NE(colocated["reason"].get<std::string>().find(
                "the actor over all 8 GPUs: global batch 960 is not a multiple of micro batch x "
                "DP = 32 x 8 = 256"),
            std::string::npos)
      << colocated.dump();
}

// A verl key that no mapper reads and that is no near miss of one (a typo one slip away is
// refused with "did you mean") was only counted, and listed under --explain alone; with -o not
// even counted. The normal output names it: its count, the first few keys, --explain for all.
// (The model is the launch's own path, Qwen/Qwen2.5-7B-Instruct: with --model in its place the
// path would be a second key the import did not use.)
TEST(VerlRlImportTest, IgnoredKeysAreNamedWithoutExplain) {
  const ScratchDir scratch("strata-verl-keys-");
  const std::filesystem::path& dir = scratch.path;
  const std::string script = (dir / "run.sh").string();
  ASSERT_TRUE(WriteFileAtomic(script,
                              "python3 -m verl.trainer.main_ppo \\\n"
                              "    algorithm.adv_estimator=grpo \\\n"
                              "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
                              "    actor_rollout_ref.rollout.speculative_draft_tokens=4 \\\n"
                              "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n")
                  .ok());
  const std::string line =
      "# 1 key not understood, ignored: actor_rollout_ref.rollout.speculative_draft_tokens "
      "(--explain lists it with its value and line)\n";
  const testing::CliResult plain = testing::RunCli({"import", script, "--gpu", "H20"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find(line), std::string::npos) << plain.out;
  const testing::CliResult written =
      testing::RunCli({"import", script, "--gpu", "H20", "-o", (dir / "rl.yaml").string()});
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_NE(written.out.find(line), std::string::npos) << written.out;
  // --explain lists it with its value and where it came from.
  const testing::CliResult explained =
      testing::RunCli({"import", script, "--gpu", "H20", "--explain"});
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_NE(explained.out.find("#   actor_rollout_ref.rollout.speculative_draft_tokens = 4 ("),
            std::string::npos)
      << explained.out;
}

// A launch's keys that change what the run learns, logs or where it reads from, not a step's
// work (data/import_cost_neutral_keys.yaml), are counted apart: the five names the summary shows
// are the keys the prediction may miss. Here ignore_eos (every response runs to the cap) and a
// speculative-decoding setting may change a step; the learning rate and the project name do not
// (the model's path is read: it names the model). Before, the line read "# 4 keys not
// understood, ignored: " with the learning rate and the project name among them.
TEST(VerlRlImportTest, KeysWithoutStepCostAreCountedApart) {
  const ScratchDir scratch("strata-verl-neutral-");
  const std::filesystem::path& dir = scratch.path;
  const std::string script = (dir / "run.sh").string();
  ASSERT_TRUE(WriteFileAtomic(script,
                              "python3 -m verl.trainer.main_ppo \\\n"
                              "    algorithm.adv_estimator=grpo \\\n"
                              "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
                              "    actor_rollout_ref.actor.optim.lr=1e-6 \\\n"
                              "    actor_rollout_ref.rollout.ignore_eos=True \\\n"
                              "    actor_rollout_ref.rollout.speculative_draft_tokens=4 \\\n"
                              "    trainer.project_name=grpo_example \\\n"
                              "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n")
                  .ok());
  const testing::CliResult plain = testing::RunCli({"import", script, "--gpu", "H20"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("# 2 keys not understood, ignored: "
                           "actor_rollout_ref.rollout.ignore_eos, "
                           "actor_rollout_ref.rollout.speculative_draft_tokens; 2 more ignored, "
                           "with no effect on a step's time or memory (loss and optimiser "
                           "settings, sampling, logging, paths, run length: "
                           "data/import_cost_neutral_keys.yaml) (--explain lists all with values "
                           "and lines)\n"),
            std::string::npos)
      << plain.out;
  // --explain still lists every key, each neutral one with its group.
  const testing::CliResult explained =
      testing::RunCli({"import", script, "--gpu", "H20", "--explain"});
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_NE(explained.out.find("#   actor_rollout_ref.actor.optim.lr = 1e-6 ("), std::string::npos)
      << explained.out;
  EXPECT_NE(explained.out.find("[no effect on a step's time or memory: optimiser schedule]"),
            std::string::npos)
      << explained.out;
  // --json keeps every key in "unused" and names the neutral ones with their group.
  const testing::CliResult json = testing::RunCli({"import", script, "--gpu", "H20", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["unused"].size(), 4u);
  EXPECT_EQ(j["unused_no_step_cost"],
            nlohmann::json::array({"actor_rollout_ref.actor.optim.lr: optimiser schedule",
                                   "trainer.project_name: paths, names and logging"}));
}

// verl's FSDP reference runs under FSDP's CPUOffload whatever ref.fsdp_config.param_offload says
// (volcengine/verl@b178a3cd:verl/workers/fsdp_workers.py:526 and 552), so the import derives
// offload_reference: true. The launch's own key was left unread and so listed as "1 key not
// understood, ignored: actor_rollout_ref.ref.fsdp_config.param_offload", a key the prediction
// might miss; it is read now and named in the derivation, with its line (5) and value.
TEST(VerlRlImportTest, TheFsdpReferencesOwnOffloadKeyIsReadAndOverruled) {
  const ScratchDir scratch("strata-verl-ref-offload-");
  const std::filesystem::path& dir = scratch.path;
  const std::string script = (dir / "run.sh").string();
  ASSERT_TRUE(WriteFileAtomic(script,
                              "python3 -m verl.trainer.main_ppo \\\n"
                              "    algorithm.adv_estimator=grpo \\\n"
                              "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
                              "    actor_rollout_ref.actor.use_kl_loss=True \\\n"
                              "    actor_rollout_ref.ref.fsdp_config.param_offload=False \\\n"
                              "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n")
                  .ok());
  const testing::CliResult plain = testing::RunCli({"import", script, "--gpu", "H20"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("not understood"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("offload_reference: true          # derived: verl's FSDP reference "
                           "always runs under FSDP's CPUOffload, whatever "
                           "ref.fsdp_config.param_offload says (here "
                           "actor_rollout_ref.ref.fsdp_config.param_offload (line 5) = False)"),
            std::string::npos)
      << plain.out;
}

// A token budget verl never reads costs a step nothing: each pass reads its budget only with its
// own use_dynamic_bsz on (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7: actor
// dp_actor.py:551-552; the log-prob passes dp_actor.py:459-463 through fsdp_workers.py:1002-1005
// (the rollout's keys) and 1050-1054 (the ref's)), and each switch defaults to the actor's, whose
// default is false (actor/actor.yaml:28, rollout/rollout.yaml:94, ref/ref.yaml:20). This launch
// sets none of the switches, so all three budgets (lines 4-6) are off; ignore_eos (line 7) may
// change a step. The launch runs no reference (no KL term), so the ref's budget is counted apart
// as a key of that pass; no critic key is given, so the summary names a dynamic batching and a
// reference pass, not a critic. Before, the line read "# 4 keys not understood, ignored:
// actor_rollout_ref.actor.ppo_max_token_len_per_gpu, actor_rollout_ref.ref.log_prob_max_token_
// len_per_gpu, actor_rollout_ref.rollout.ignore_eos, actor_rollout_ref.rollout.log_prob_max_
// token_len_per_gpu".
TEST(VerlRlImportTest, TokenBudgetsOfADynamicBatchThatIsOffCostNothing) {
  const ScratchDir scratch("strata-verl-budget-off-");
  const std::filesystem::path& dir = scratch.path;
  const std::string script = (dir / "run.sh").string();
  ASSERT_TRUE(
      WriteFileAtomic(script,
                      "python3 -m verl.trainer.main_ppo \\\n"
                      "    algorithm.adv_estimator=grpo \\\n"
                      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
                      "    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 \\\n"
                      "    actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=32768 \\\n"
                      "    actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=32768 \\\n"
                      "    actor_rollout_ref.rollout.ignore_eos=True \\\n"
                      "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n")
          .ok());
  const testing::CliResult plain = testing::RunCli({"import", script, "--gpu", "H20"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("# 1 key not understood, ignored: actor_rollout_ref.rollout.ignore_eos; "
                           "3 more ignored, with no effect on a step's time or memory (loss and "
                           "optimiser settings, sampling, logging, paths, run length: "
                           "data/import_cost_neutral_keys.yaml; settings of what the launch "
                           "turns off: a dynamic batching and a reference pass) (--explain "
                           "lists all with values and lines)\n"),
            std::string::npos)
      << plain.out;
  const std::string actor_off =
      "actor_rollout_ref.actor.use_dynamic_bsz unset, verl's default false";
  const std::string actor_why =
      "its dynamic batching is off (" + actor_off + "): verl packs by this budget only under it";
  auto pass_why = [&](const std::string& section) {
    return "its dynamic batching is off (actor_rollout_ref." + section +
           ".log_prob_use_dynamic_bsz unset, so the actor's: " + actor_off +
           "): verl packs by this budget only under it";
  };
  // --explain gives each its reason.
  const testing::CliResult explained =
      testing::RunCli({"import", script, "--gpu", "H20", "--explain"});
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_NE(explained.out.find("#   actor_rollout_ref.actor.ppo_max_token_len_per_gpu = 16384 "
                               "(actor_rollout_ref.actor.ppo_max_token_len_per_gpu (line 4)) "
                               "[no effect on a step's time or memory: " +
                               actor_why + "]\n"),
            std::string::npos)
      << explained.out;
  // --json keeps the four in "unused" and names the three with their reasons (key order).
  const testing::CliResult json = testing::RunCli({"import", script, "--gpu", "H20", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["unused"].size(), 4u);
  EXPECT_EQ(
      j["unused_no_step_cost"],
      nlohmann::json::array(
          {"actor_rollout_ref.actor.ppo_max_token_len_per_gpu: " + actor_why,
           // The launch has no KL term, so no reference pass: that is its budget's reason.
           "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu: no reference pass runs (the RL "
           "job's reference: false, from default: verl's actor_rollout_ref.actor.use_kl_loss = "
           "false: no KL loss, and no KL in the reward (default: verl's "
           "algorithm.use_kl_in_reward = false)): verl builds no reference worker, so it reads "
           "no key of it",
           "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu: " + pass_why("rollout")}));
}

// With the actor packing (line 4), each other pass follows its own switch. The old log-prob
// pass (line 7), the reference's (line 10) and the critic (line 13) are set off: their budgets
// (lines 8, 11, 14, 15) are never read by verl (the critic's update and values passes:
// dp_critic.py:211-212 and 167 under critic.use_dynamic_bsz, fsdp_workers.py:1545-1546), so they
// cost nothing, each with its own switch as the reason. The reference's switch is read (before,
// it was listed among the keys that may change a step); its micro batch (line 12) is what verl
// runs that pass at, and strata rl prices the pass packed as the old log-prob pass, at the
// actor's 16,384 tokens (no log-prob budget of its own: RlSpec::LogProbBudget). Before, that
// micro batch was noted "not used: the log-prob passes pack their micro batches by tokens".
TEST(VerlRlImportTest, EachPassReadsItsOwnDynamicBatchSwitch) {
  const std::string script =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=gae \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
      "    actor_rollout_ref.actor.use_dynamic_bsz=True \\\n"
      "    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 \\\n"
      "    actor_rollout_ref.actor.use_kl_loss=True \\\n"
      "    actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=False \\\n"
      "    actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=32768 \\\n"
      "    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \\\n"
      "    actor_rollout_ref.ref.log_prob_use_dynamic_bsz=False \\\n"
      "    actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=32768 \\\n"
      "    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 \\\n"
      "    critic.use_dynamic_bsz=False \\\n"
      "    critic.ppo_max_token_len_per_gpu=65536 \\\n"
      "    critic.forward_max_token_len_per_gpu=65536 \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
  auto r = ImportJob(script, "run.sh", Options("H20", "qwen2.5-math-7b"));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  ASSERT_TRUE(r->rl.has_value());
  auto why = [](const std::string& key, int line) {
    return fmt::format(
        "its dynamic batching is off ({} (line {}) = False): verl packs by this budget only "
        "under it",
        key, line);
  };
  const std::string ro = "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz";
  const std::string ref = "actor_rollout_ref.ref.log_prob_use_dynamic_bsz";
  // The model is the import's option, so the launch's model path (line 3) is left, a path.
  EXPECT_EQ(r->unused_no_step_cost,
            (std::vector<std::string>{
                "actor_rollout_ref.model.path: paths, names and logging",
                "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu: " + why(ref, 10),
                "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu: " + why(ro, 7),
                "critic.forward_max_token_len_per_gpu: " + why("critic.use_dynamic_bsz", 13),
                "critic.ppo_max_token_len_per_gpu: " + why("critic.use_dynamic_bsz", 13)}));
  for (const std::string& line : r->unused) {
    EXPECT_FALSE(line.starts_with(ref + " = ")) << line;
  }
  // The actor's budget is the job's; the passes set off have none of their own.
  ASSERT_NE(Find(*r->rl, "batch.max_tokens_per_gpu"), nullptr);
  EXPECT_EQ(Find(*r->rl, "batch.max_tokens_per_gpu")->value, "16384");
  EXPECT_EQ(Find(*r->rl, "batch.log_prob_max_tokens_per_gpu"), nullptr);
  EXPECT_EQ(Find(*r->rl, "batch.critic_max_tokens_per_gpu"), nullptr);
  const auto& notes = r->rl->notes;
  auto noted = [&](const std::string& text) {
    return std::find(notes.begin(), notes.end(), text) != notes.end();
  };
  EXPECT_TRUE(noted(ref +
                    " (line 10) = False: verl runs the reference pass at a fixed micro batch "
                    "(ref.log_prob_micro_batch_size_per_gpu); strata rl prices it packed as the "
                    "old log-prob pass, at 16384 tokens"))
      << fmt::format("{}", fmt::join(notes, "\n"));
  EXPECT_TRUE(
      noted("actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu = 4 "
            "(actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu (line 12)): verl "
            "runs this pass at this micro batch (its log_prob_use_dynamic_bsz is off); "
            "strata rl prices it packed, as the old log-prob pass"))
      << fmt::format("{}", fmt::join(notes, "\n"));
}

// With no KL term there is no reference pass (verl/trainer/ppo/utils.py:72-75), so its dynamic
// batching switch (line 5) is not read and nothing is said of that pass. Before, the import noted
// "actor_rollout_ref.ref.log_prob_use_dynamic_bsz (line 5) = False: verl runs the reference pass
// at a fixed micro batch", of a pass that never runs (review finding).
TEST(VerlRlImportTest, NothingIsSaidOfAReferencePassThatDoesNotRun) {
  const ScratchDir scratch("strata-verl-no-ref-");
  const std::string script = (scratch.path / "run.sh").string();
  ASSERT_TRUE(WriteFileAtomic(script,
                              "python3 -m verl.trainer.main_ppo \\\n"
                              "    algorithm.adv_estimator=grpo \\\n"
                              "    actor_rollout_ref.actor.use_dynamic_bsz=True \\\n"
                              "    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 \\\n"
                              "    actor_rollout_ref.ref.log_prob_use_dynamic_bsz=False \\\n"
                              "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
                              "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n")
                  .ok());
  const testing::CliResult json = testing::RunCli({"import", script, "--gpu", "H20", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.find("verl runs the reference pass"), std::string::npos) << json.out;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["unused_no_step_cost"].size(), 1u) << json.out;
  EXPECT_TRUE(j["unused_no_step_cost"][0].get<std::string>().starts_with(
      "actor_rollout_ref.ref.log_prob_use_dynamic_bsz: no reference pass runs"))
      << json.out;
}

// The actor's budget is the default of the old log-prob pass's own (verl's rollout.yaml:98:
// ${oc.select:actor_rollout_ref.actor.ppo_max_token_len_per_gpu,16384}). With the actor's
// switch off (verl's default) but the old log-prob pass packing (line 3) and its own budget
// unset, verl packs that pass by the actor's 8,192 tokens (line 4): the key is read, so it is not
// counted apart. Before, it was, with the reason "verl packs by this budget only under it".
TEST(VerlRlImportTest, TheActorsBudgetIsReadAsAPackingPassesDefault) {
  const ScratchDir scratch("strata-verl-budget-default-");
  const std::string script = (scratch.path / "run.sh").string();
  ASSERT_TRUE(WriteFileAtomic(script,
                              "python3 -m verl.trainer.main_ppo \\\n"
                              "    algorithm.adv_estimator=grpo \\\n"
                              "    actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=True \\\n"
                              "    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=8192 \\\n"
                              "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
                              "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n")
                  .ok());
  const testing::CliResult json = testing::RunCli({"import", script, "--gpu", "H20", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  for (const auto& apart : j["unused_no_step_cost"]) {
    EXPECT_FALSE(
        apart.get<std::string>().starts_with("actor_rollout_ref.actor.ppo_max_token_len_per_gpu"))
        << apart;
  }
  bool listed = false;
  for (const auto& unused : j["unused"]) {
    listed = listed || unused.get<std::string>().starts_with(
                           "actor_rollout_ref.actor.ppo_max_token_len_per_gpu");
  }
  EXPECT_TRUE(listed) << json.out;
}

// A GRPO launch with no KL term runs neither a reference nor a critic pass: verl builds those
// workers only under a KL loss or a KL in the reward, and under critic.enable or GAE
// (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/trainer/ppo/utils.py:72-97).
// The reference's and the critic's settings it still gives (lines 3-5, as verl's example scripts
// do) are listed but counted apart, each with the RL job's field as the reason; before, all
// three were named first among the keys that may change a step ("# 3 keys not understood,
// ignored: actor_rollout_ref.ref.fsdp_config.param_offload, ...").
TEST(VerlRlImportTest, KeysOfAPassThatDoesNotRunCostNothing) {
  const ScratchDir scratch("strata-verl-pass-off-");
  const std::string script = (scratch.path / "run.sh").string();
  ASSERT_TRUE(WriteFileAtomic(script,
                              "python3 -m verl.trainer.main_ppo \\\n"
                              "    algorithm.adv_estimator=grpo \\\n"
                              "    actor_rollout_ref.ref.fsdp_config.param_offload=True \\\n"
                              "    actor_rollout_ref.ref.ulysses_sequence_parallel_size=2 \\\n"
                              "    critic.model.fsdp_config.param_offload=True \\\n"
                              "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
                              "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n")
                  .ok());
  const testing::CliResult json = testing::RunCli({"import", script, "--gpu", "H20", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  // The reference's field: "false", from the actor's use_kl_loss (verl's default false) beside
  // no KL in the reward; the algorithm's: "grpo", from line 2, with its field's own reason.
  const std::string no_ref_prefix = "no reference pass runs (the RL job's reference: false, from ";
  const std::string no_critic =
      "no critic runs (the RL job's algorithm: grpo, from algorithm.adv_estimator (line 2): "
      "'grpo', no critic): verl builds no critic worker, so it reads no key of it";
  ASSERT_EQ(j["unused_no_step_cost"].size(), 3u) << json.out;
  const std::string ref_offload = j["unused_no_step_cost"][0];
  const std::string ref_ulysses = j["unused_no_step_cost"][1];
  EXPECT_TRUE(
      ref_offload.starts_with("actor_rollout_ref.ref.fsdp_config.param_offload: " + no_ref_prefix))
      << ref_offload;
  EXPECT_TRUE(ref_ulysses.starts_with("actor_rollout_ref.ref.ulysses_sequence_parallel_size: " +
                                      no_ref_prefix))
      << ref_ulysses;
  EXPECT_EQ(j["unused_no_step_cost"][2], "critic.model.fsdp_config.param_offload: " + no_critic);
  const testing::CliResult plain = testing::RunCli({"import", script, "--gpu", "H20"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("keys not understood"), std::string::npos) << plain.out;
}

// The old log-prob pass's budget unset under the actor's dynamic batch: verl's default is the
// actor's budget (rollout/rollout.yaml:98, `${oc.select:actor_rollout_ref.actor.
// ppo_max_token_len_per_gpu,16384}`), which is the RL job's own when
// batch.log_prob_max_tokens_per_gpu is not written: the field stays out and the default is
// listed with its source. The reference's budget (line 5, its switch the actor's, on) differs
// from the 16,384 both passes are priced at, and is noted.
TEST(VerlRlImportTest, TheLogProbBudgetDefaultsToTheActorsAsInVerl) {
  const std::string script =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo \\\n"
      "    actor_rollout_ref.actor.use_dynamic_bsz=True \\\n"
      "    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 \\\n"
      "    actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=32768 \\\n"
      "    actor_rollout_ref.actor.use_kl_loss=True \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
  auto r = ImportJob(script, "run.sh", Options("H20", "qwen2.5-math-7b"));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  ASSERT_TRUE(r->rl.has_value());
  EXPECT_EQ(Find(*r->rl, "batch.log_prob_max_tokens_per_gpu"), nullptr);
  const auto& defaults = r->rl->defaults;
  EXPECT_NE(std::find(defaults.begin(), defaults.end(),
                      "batch.log_prob_max_tokens_per_gpu unwritten, the actor's 16384: verl's "
                      "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu is "
                      "${oc.select:actor_rollout_ref.actor.ppo_max_token_len_per_gpu,16384} "
                      "(volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/trainer/"
                      "config/rollout/rollout.yaml:98)"),
            defaults.end())
      << fmt::format("{}", fmt::join(defaults, "\n"));
  const auto& notes = r->rl->notes;
  EXPECT_NE(std::find(notes.begin(), notes.end(),
                      "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu = 32768 "
                      "(actor_rollout_ref.ref.log_prob_max_token_len_per_gpu (line 5)): the "
                      "reference pass is priced at the old log-prob pass's budget, 16384 tokens"),
            notes.end())
      << fmt::format("{}", fmt::join(notes, "\n"));
  EXPECT_TRUE(r->unused_no_step_cost.empty());
}

// verl's bypass mode: with algorithm.rollout_correction.bypass_mode on, fit() takes the
// rollout's log-probs as the old ones and runs no old log-prob pass (verl-project/verl@
// 0094eb2057e6f3210c2a4fca88704689d02879aa:verl/trainer/ppo/ray_trainer.py:1537-1549), which is
// the RL job's `old_log_prob: rollout`. verl's own example at that commit
// (examples/rollout_correction/run_qwen2_5_7b_fsdp.sh, verbatim in tests/golden/cli_import/
// verl_rl_bypass_mode) sets `bypass_mode="true"` on its line 25 and passes it on line 74 as
// `algorithm.rollout_correction.bypass_mode=${bypass_mode}`: rollout, sourced at line 74. The
// one-step-off recipe's config sets the key True (recipe/one_step_off_policy/config/
// one_step_off_ppo_trainer.yaml:28 @ 875788ef), so its 64 + 64 script, which does not set it,
// imports as rollout too; its `_ris` script of 0094eb20 turns it off (line 155,
// `algorithm.rollout_correction.bypass_mode=false`): trainer. main_ppo without the key: no
// field (the RL job's default, trainer). Before: the key was ignored and every launch priced
// the pass.
TEST(VerlRlImportTest, BypassModeTakesTheRolloutsLogProbs) {
  ImportOptions o = Options("H20", "qwen2.5-math-7b");
  o.nodes = 1;
  o.gpus_per_node = 4;  // on 8, 32 samples a mini batch are 4 a GPU, below its micro batch of 8
  auto r = ImportJobFile(ImportGolden("verl_rl_bypass_mode/run_qwen2_5_7b_fsdp.sh"), o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  ASSERT_TRUE(r->rl.has_value());
  const auto* f = Find(*r->rl, "old_log_prob");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->value, "rollout");
  EXPECT_NE(f->source.find("algorithm.rollout_correction.bypass_mode (line 74)"), std::string::npos)
      << f->source;
  // The RL job parses back and drops the pass.
  EXPECT_NE(r->rl->yaml.find("old_log_prob: rollout"), std::string::npos) << r->rl->yaml;

  ImportOptions split = Options("", "qwen2.5-math-7b");
  split.cluster = "h20-5x8";
  auto recipe =
      ImportJobFile(ImportGolden("verl_recipe_one_step_off/dapo_7b_math_fsdp2_64_64.sh"), split);
  ASSERT_TRUE(recipe.ok()) << recipe.error().Format();
  ASSERT_NE(Find(*recipe->rl, "old_log_prob"), nullptr);
  EXPECT_EQ(Find(*recipe->rl, "old_log_prob")->value, "rollout");
  EXPECT_NE(Find(*recipe->rl, "old_log_prob")->source.find("one_step_off_ppo_trainer.yaml:28"),
            std::string::npos);

  const std::string off =
      "python3 -m verl.experimental.one_step_off_policy.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo data.train_batch_size=1152 \\\n"
      "    actor_rollout_ref.actor.strategy=fsdp2 actor_rollout_ref.hybrid_engine=False \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-Math-7B \\\n"
      "    actor_rollout_ref.actor.ppo_mini_batch_size=192 \\\n"
      "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\\n"
      "    actor_rollout_ref.rollout.tensor_model_parallel_size=2 actor_rollout_ref.rollout.n=5 "
      "\\\n"
      "    algorithm.rollout_correction.bypass_mode=false \\\n"
      "    trainer.nnodes=1 trainer.n_gpus_per_node=6 rollout.nnodes=1 "
      "rollout.n_gpus_per_node=2\n";
  auto decoupled = ImportJob(off, "run.sh", split);
  ASSERT_TRUE(decoupled.ok()) << decoupled.error().Format();
  ASSERT_NE(Find(*decoupled->rl, "old_log_prob"), nullptr);
  EXPECT_EQ(Find(*decoupled->rl, "old_log_prob")->value, "trainer");

  const std::string plain =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
  auto none = ImportJob(plain, "run.sh", Options("H20", "qwen2.5-math-7b"));
  ASSERT_TRUE(none.ok()) << none.error().Format();
  EXPECT_EQ(Find(*none->rl, "old_log_prob"), nullptr);
}

struct BadCase {
  const char* file;   // <case>/<input>: a case of tests/golden/cli_import in the edit form
  int line;           // where the error points
  const char* field;  // the key it names ("" when none)
  const char* message;
  const char* hint;
};

TEST(VerlRlImportTest, BadLaunchesAreRefusedByKeyAndLine) {
  const BadCase kCases[] = {
      // rollout.name=vlm (a typo of vllm) on line 36.
      {"verl_rl_unknown_engine/run_qwen2_5-7b_math.sh", 36, "actor_rollout_ref.rollout.name",
       "actor_rollout_ref.rollout.name (line 36) = 'vlm': a rollout engine strata rl does not "
       "model",
       "did you mean 'vllm'? (strata rl models vLLM, and SGLang as vLLM)"},
      // No actor_rollout_ref.model.path and no --model: nothing says which model.
      {"verl_rl_missing_model/run_qwen2_5-7b_math.sh", 0, "actor_rollout_ref.model.path",
       "the verl launch sets no actor_rollout_ref.model.path: the actor's model is not known "
       "(verl's own default is a placeholder path)",
       "add actor_rollout_ref.model.path=<HF id or path> to the launch, or pass --model with a "
       "catalog name or a config.json path"},
      // 1040 prompts x 5 = 5,200 samples divide over the 16 GPUs (325 each), but 1040 prompts
      // are 4 mini batches of 256 and 16 left over; the error points at ppo_mini_batch_size.
      {"verl_rl_batch_not_divisible/run_qwen2_5-7b_math.sh", 25,
       "actor_rollout_ref.actor.ppo_mini_batch_size",
       "data.train_batch_size (line 17) = 1040 prompts do not split into mini batches of "
       "actor_rollout_ref.actor.ppo_mini_batch_size (line 25) = 256 prompts (1040 = 4 x 256 + "
       "16)",
       "make train_batch_size a multiple of ppo_mini_batch_size: strata's RL step runs equal "
       "mini batches (each of ppo_mini_batch_size x n samples)"},
      // 1020 x 5 = 5,100 samples over 16 GPUs: 5100 / 16 = 318.75 (verl's own check; the FSDP
      // actor's minimal batch is every GPU).
      {"verl_rl_batch_not_over_gpus/run_qwen2_5-7b_math.sh", 17, "data.train_batch_size",
       "data.train_batch_size (line 17) = 1020 prompts x actor_rollout_ref.rollout.n (line 38) = "
       "5 samples each: 5100 samples do not divide by verl's minimal batch of 16 (16 GPUs)",
       "verl refuses this launch: make train_batch_size x n a multiple of 16 "
       "(volcengine/verl@00401103a8c8900774aba04b910de5b0af930b99:verl/trainer/ppo/"
       "ray_trainer.py, RayPPOTrainer._validate_config)"},
      // The same launch under use_dynamic_bsz, where verl skips its minimal-batch check
      // (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/config.py:89,
      // only `if not use_dynamic_bsz`): 5,100 samples still do not split over the 16 FSDP
      // ranks (DataProto.chunk), but the error no longer says verl's check refuses it. Before:
      // "verl refuses this launch", citing the check verl skips.
      {"verl_rl_dynamic_batch_not_over_gpus/run_qwen2_5-7b_math.sh", 17, "data.train_batch_size",
       "data.train_batch_size (line 17) = 1020 prompts x actor_rollout_ref.rollout.n (line 39) = "
       "5 samples each: 5100 samples do not divide by the 16 data-parallel ranks verl dispatches "
       "it to (16 GPUs)",
       "verl cannot split the batch evenly over its ranks (DataProto.chunk; use_dynamic_bsz skips "
       "the minimal-batch check): make train_batch_size x n a multiple of 16"},
      // The one-step-off recipe with NNODES_ROLLOUT=0 (line 57, read at line 139): no rollout
      // nodes. Before: read as no split at all, then refused for its hybrid_engine=False.
      {"verl_rl_rollout_nodes_zero/dapo_7b_math_fsdp2_64_64.sh", 139, "rollout.nnodes",
       "rollout.nnodes (line 139) = '0': expected a positive whole number",
       "the one-step-off recipe generates on rollout.nnodes nodes of its own, beside the "
       "trainer's trainer.nnodes: at least 1"},
      // The script cut after line 26: its last line ends with '\'.
      {"verl_rl_truncated/run_qwen2_5-7b_math.sh", 26, "",
       "the file ends inside the verl command: its last line is continued ('\\') but nothing "
       "follows (a truncated script)",
       "import the whole script: the overrides after this line are missing"},
  };
  for (const BadCase& c : kCases) {
    ImportOptions o = Options("H20", "qwen2.5-math-7b");
    if (std::string(c.file).starts_with("verl_rl_missing_model")) o.model.clear();
    // Each launch is a public script with one edit (the case's `edit` file), applied here.
    const std::string file = c.file;
    const testing::EditedInput input(ImportGolden(file.substr(0, file.find('/'))));
    ASSERT_FALSE(input.path().empty()) << c.file;
    auto r = ImportJobFile(input.path(), o);
    ASSERT_FALSE(r.ok()) << c.file;
    const Error& e = r.error();
    EXPECT_EQ(e.code, ErrorCode::kInvalidInput) << c.file;
    EXPECT_TRUE(e.file.ends_with(c.file)) << e.file;
    EXPECT_EQ(e.line, c.line) << c.file;
    EXPECT_EQ(e.field, c.field) << c.file;
    EXPECT_EQ(e.message, c.message) << c.file;
    EXPECT_EQ(e.hint, c.hint) << c.file;
  }
}

// A comment line that ends in '\' continues nothing in bash (a comment runs to the end of its
// line). ISEEKYAN/verl_megatron_practice@dfd811adc3e42edc0d5b32cdfca5e7ad9df5c4f0:DAPO_MOE30B/
// 4.megatron_2node_tp4ep8.sh ends its command at line 142 and then has two commented-out
// overrides, each ending in '\' (lines 144 and 145); bash runs it. Before, the import refused it
// as truncated at line 145. A code line ending in '\' with nothing after it is still refused.
TEST(VerlRlImportTest, TrailingCommentedOverridesAreNotATruncation) {
  const std::string complete =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    trainer.nnodes=2 \\\n"
      "    trainer.log_val_generations=10\n"
      "\n"
      "    # +actor_rollout_ref.actor.megatron.override_transformer_config.moe_enable_deepep=True "
      "\\\n"
      "    # +actor_rollout_ref.actor.megatron.override_transformer_config."
      "moe_token_dispatcher_type=flex \\";
  EXPECT_TRUE(CheckVerlCommandComplete(complete, "run.sh").ok());
  const std::string cut =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    trainer.nnodes=2 \\\n"
      "    # a comment inside the command\n"
      "    trainer.log_val_generations=10 \\\n\n";
  const Status s = CheckVerlCommandComplete(cut, "run.sh");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().line, 4);
}

// Under use_dynamic_bsz verl ignores ppo_micro_batch_size_per_gpu (its minimal-batch check runs
// only without it, volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/
// config.py:89) and packs each rank's samples by tokens: the actor's job carries that packing,
// for the megatron actor as for FSDP. The launch: 8 GPUs, megatron TP2 (DP 4), mini batch 16
// prompts x n 4 = 64 samples = 16 a rank, prompt 1,024 + response 3,072 = 4,096 tokens a sample
// at the caps (the RL job's means, as imported), budget 12,288 per GPU:
//   micro batches a rank = min(16, ceil(16 x 4,096 / 12,288)) = ceil(5.33) = 6
//   rows a mini batch    = 6 x DP 4 = 24, each a packed micro batch
//   the largest          = ceil(16 / 6) = 3 samples x 4,096 = 12,288 tokens (every sample at
//                          its cap: the partition's parts are whole samples)
// Before: the job took the fixed micro batch of 3 samples and was refused ("global batch 64 is
// not a multiple of micro batch x DP = 3 x 4 = 12"), a launch verl runs.
TEST(VerlRlImportTest, MegatronDynamicBatchCarriesThePackingNotTheFixedMicroBatch) {
  const std::string script =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo \\\n"
      "    actor_rollout_ref.actor.strategy=megatron \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
      "    data.train_batch_size=32 data.max_prompt_length=1024 \\\n"
      "    data.max_response_length=3072 \\\n"
      "    actor_rollout_ref.rollout.n=4 \\\n"
      "    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\\n"
      "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=3 \\\n"
      "    actor_rollout_ref.actor.use_dynamic_bsz=True \\\n"
      "    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=12288 \\\n"
      "    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
  ImportOptions o = Options("H20", "qwen2.5-math-7b");
  auto r = ImportJob(script, "run.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  // 16 prompts x 4 = 64 samples a mini batch over DP 8 / TP 2 = 4: 16 samples a rank of 4,096
  // tokens; ceil(16 x 4,096 / 12,288) = 6 micro batches, the largest ceil(16 / 6) = 3 samples
  // (12,288 tokens). 16 / 3 = 5.3 rows of 12,288 carry the rank's 65,536 tokens: 5 rows x DP 4.
  EXPECT_EQ(r->job.micro_batch, 1);
  EXPECT_EQ(r->job.global_batch, 20);
  EXPECT_TRUE(r->job.sequence.packing);
  EXPECT_NEAR(r->job.sequence.max_tokens, 12288, 1e-9);
  EXPECT_NEAR(r->job.sequence.mean_tokens, 4096, 1e-9);
  ASSERT_TRUE(r->rl.has_value());
  EXPECT_EQ(Find(*r->rl, "batch.max_tokens_per_gpu")->value, "12288");
  EXPECT_NE(r->yaml.find("ppo_max_token_len_per_gpu"), std::string::npos) << r->yaml;
}

// The rows of a packed job are each max_tokens long, so their count must carry the rank's tokens,
// not verl's count of micro batches (of which only some are the largest). GRPO, 320 prompts x 4 =
// 1,280 samples a mini batch on 16 GPUs (FSDP, DP 16): 80 samples a rank of 1,024 + 1,024 =
// 2,048 tokens, budget 5,000: ceil(80 x 2,048 / 5,000) = 33 micro batches, the largest
// ceil(80 / 33) = 3 samples (6,144 tokens; verl's balanced partitions of equal samples: 14 of 3
// and 19 of 2). Rows: round(80 / 3) = 27 a rank, 432 in all: 432 x 6,144 = 2,654,208 tokens a
// step against the 1,280 x 2,048 = 2,621,440 trained (+1.3%). 33 rows a rank gave 3,244,032
// (+23.8%) before.
TEST(VerlRlImportTest, PackedRowsCarryTheTokensTheStepTrains) {
  const std::string script =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
      "    data.train_batch_size=320 data.max_prompt_length=1024 \\\n"
      "    data.max_response_length=1024 \\\n"
      "    actor_rollout_ref.rollout.n=4 \\\n"
      "    actor_rollout_ref.actor.ppo_mini_batch_size=320 \\\n"
      "    actor_rollout_ref.actor.use_dynamic_bsz=True \\\n"
      "    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=5000 \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=2\n";
  ImportOptions o = Options("H20", "qwen2.5-math-7b");
  auto r = ImportJob(script, "run.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.micro_batch, 1);
  EXPECT_EQ(r->job.global_batch, 432);
  EXPECT_NEAR(r->job.sequence.max_tokens, 6144, 1e-9);
  EXPECT_NEAR(r->job.sequence.mean_tokens, 2048, 1e-9);
  const double tokens = static_cast<double>(r->job.global_batch) * r->job.sequence.max_tokens;
  EXPECT_NEAR(tokens / (1280.0 * 2048.0), 1.0, 0.02);
}

// Megatron's CPU optimizer in a verl megatron actor (the Qwen3 MoE fixture's
// +actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_cpu_offload=True, which verl
// passes to megatron-core's OptimizerConfig: HybridDeviceOptimizer keeps the optimizer states and
// fp32 master weights in host memory) is the actor job's sharding.offload_optimizer: cpu, as
// strata's megatron importer reads --optimizer-cpu-offload. A fraction below 1 is noted; one that
// is no Python number is refused by key and line. Before: the key was listed as unused and the
// ledger kept the states on the GPU.
TEST(VerlRlImportTest, MegatronCpuOptimizerIsTheActorsOptimizerOffload) {
  const std::string head =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo \\\n"
      "    actor_rollout_ref.actor.strategy=megatron \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
      "    data.train_batch_size=32 actor_rollout_ref.rollout.n=4 \\\n"
      "    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\\n"
      "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\\n"
      "    +actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_cpu_offload=True "
      "\\\n";
  const std::string tail = "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
  ImportOptions o = Options("H20", "qwen2.5-math-7b");
  auto r = ImportJob(head + tail, "run.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.sharding.offload_optimizer, OffloadTarget::kCpu);
  EXPECT_EQ(r->yaml.find("optimizer_cpu_offload = True"), std::string::npos) << r->yaml;
  auto half = ImportJob(head +
                            "    +actor_rollout_ref.actor.optim.override_optimizer_config."
                            "optimizer_offload_fraction=0.5 \\\n" +
                            tail,
                        "run.sh", o);
  ASSERT_TRUE(half.ok()) << half.error().Format();
  EXPECT_NE(half->yaml.find("only that fraction"), std::string::npos) << half->yaml;
  auto bad = ImportJob(head +
                           "    +actor_rollout_ref.actor.optim.override_optimizer_config."
                           "optimizer_offload_fraction=0x0.8p0 \\\n" +
                           tail,
                       "run.sh", o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field,
            "actor_rollout_ref.actor.optim.override_optimizer_config.optimizer_offload_fraction");
  EXPECT_NE(bad.error().message.find("(line 9) = '0x0.8p0'"), std::string::npos)
      << bad.error().Format();
}

// gpu_memory_utilization is read as Python's float() reads it (Hydra): 0x0.8p0 (strtod's hex
// float, 0.5) is refused by key and line, as are inf and nan. Before: read as 0.5.
TEST(VerlRlImportTest, RolloutMemoryFractionIsAPythonNumber) {
  for (const char* value : {"0x0.8p0", "inf", "nan"}) {
    const std::string script = fmt::format(
        "python3 -m verl.trainer.main_ppo \\\n"
        "    algorithm.adv_estimator=grpo \\\n"
        "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
        "    data.train_batch_size=32 actor_rollout_ref.rollout.n=4 \\\n"
        "    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\\n"
        "    actor_rollout_ref.rollout.gpu_memory_utilization={} \\\n"
        "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n",
        value);
    auto r = ImportJob(script, "run.sh", Options("H20", "qwen2.5-math-7b"));
    ASSERT_FALSE(r.ok()) << value;
    EXPECT_EQ(r.error().field, "actor_rollout_ref.rollout.gpu_memory_utilization") << value;
    EXPECT_EQ(r.error().line, 6) << value;
    EXPECT_NE(r.error().message.find("expected a fraction in (0, 1]"), std::string::npos)
        << r.error().Format();
  }
}

// verl's older global actor.ppo_micro_batch_size (deprecated, still accepted) is divided by the
// actor's DP into ppo_micro_batch_size_per_gpu when the workers start
// (volcengine/verl@004c888001c88628b98fbc5fdee9c3e9b8898800:verl/workers/fsdp_workers.py,
// "normalize config": ppo_micro_batch_size //= device_mesh.size() // ulysses; megatron_workers.py:
// //= mpu.get_data_parallel_world_size()). The launch is verl's own GRPO example
// (volcengine/verl@03aefba examples/grpo_trainer/run_qwen2-7b.sh, its batch keys verbatim): 8
// GPUs, FSDP, ulysses 1: 128 // (8 / 1) = 16 samples a micro batch per GPU (per GPU mini batch
// 256 x 5 / 8 = 160: 10 micro batches of 16). Megatron TP 2 on 8 GPUs: DP 4, 8 // 4 = 2. Both
// keys set: verl's trainer refuses ("You have set both", ray_trainer.py check_mutually_exclusive).
// Before: the global key was listed as unused and the micro batch was 1 ("not given").
TEST(VerlRlImportTest, GlobalPpoMicroBatchIsDividedByTheActorsDp) {
  const std::string head =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    data.train_batch_size=1024 \\\n"
      "    data.max_prompt_length=512 \\\n"
      "    data.max_response_length=512 \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2-7B-Instruct \\\n"
      "    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\\n"
      "    actor_rollout_ref.actor.use_kl_loss=True \\\n"
      "    actor_rollout_ref.rollout.log_prob_micro_batch_size=128 \\\n"
      "    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \\\n"
      "    actor_rollout_ref.rollout.n=5 \\\n"
      "    actor_rollout_ref.ref.log_prob_micro_batch_size=128 \\\n"
      "    trainer.n_gpus_per_node=8 \\\n"
      "    trainer.nnodes=1 \\\n";
  ImportOptions o = Options("H100 SXM", "qwen2.5-math-7b");
  auto r = ImportJob(head + "    actor_rollout_ref.actor.ppo_micro_batch_size=128\n", "run.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.micro_batch, 16);
  EXPECT_EQ(r->job.global_batch, 1280);
  EXPECT_NE(testing::SourceOf(*r, "batch.micro_batch").find("= 128 // DP 8 (8 GPUs / ulysses 1)"),
            std::string::npos)
      << testing::SourceOf(*r, "batch.micro_batch");
  EXPECT_EQ(r->yaml.find("actor.ppo_micro_batch_size = 128"), std::string::npos) << r->yaml;

  auto mega = ImportJob(head +
                            "    actor_rollout_ref.actor.strategy=megatron \\\n"
                            "    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n"
                            "    actor_rollout_ref.actor.ppo_micro_batch_size=8\n",
                        "run.sh", o);
  ASSERT_TRUE(mega.ok()) << mega.error().Format();
  EXPECT_EQ(mega->job.micro_batch, 2);

  auto both = ImportJob(head +
                            "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\\n"
                            "    actor_rollout_ref.actor.ppo_micro_batch_size=128\n",
                        "run.sh", o);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().field, "actor_rollout_ref.actor.ppo_micro_batch_size");
  EXPECT_NE(both.error().message.find("both set"), std::string::npos) << both.error().Format();

  // 4 samples over 8 ranks: verl's // gives 0 (its next assert divides by it).
  auto zero = ImportJob(head + "    actor_rollout_ref.actor.ppo_micro_batch_size=4\n", "run.sh", o);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().field, "actor_rollout_ref.actor.ppo_micro_batch_size");
}

}  // namespace
}  // namespace strata::verl_rl_import_test

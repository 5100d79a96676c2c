// The verl keys that may change a step which `strata import` reads into the actor's job
// (fsdp_config.reshard_after_forward, fsdp_config.offload_policy), the ones it keeps listed with
// the reason it does not model them (use_torch_compile, vLLM's max_num_batched_tokens and chunked
// prefill), and the summary naming only the kinds of switched-off settings that applied. Each
// key's meaning and default is verl's (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7),
// cited beside each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "strata/importer/import_job.h"
#include "strata/report/import_report.h"

namespace strata::verl_step_keys_import_test {
namespace {

ImportOptions Options() {
  ImportOptions o;
  o.gpu = "H20";
  o.model = "qwen2.5-math-7b";
  o.actor_job_ref = "rl.actor.yaml";
  return o;
}

// A GRPO launch on 8 GPUs: line 1 the command, line 2 the estimator, then `extra` (one override
// a line, from line 3), then the GPUs.
std::string Launch(const std::string& extra) {
  return "python3 -m verl.trainer.main_ppo \\\n"
         "    algorithm.adv_estimator=grpo \\\n" +
         extra + "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
}

const ImportedField* FieldOf(const ImportReport& r, const std::string& key) {
  for (const ImportedField& f : r.fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

bool Listed(const ImportReport& r, const std::string& key) {
  return std::any_of(r.unused.begin(), r.unused.end(),
                     [&](const std::string& u) { return u.starts_with(key + " = "); });
}

// The reason after "key: " in `lines` ("key: why"), or "" when the key is not there.
std::string ReasonOf(const std::vector<std::string>& lines, const std::string& key) {
  for (const std::string& l : lines) {
    if (l.starts_with(key + ": ")) return l.substr(key.size() + 2);
  }
  return "";
}

// verl's strategy fsdp2 passes fsdp_config.reshard_after_forward to fully_shard
// (verl/workers/fsdp_workers.py:558; default true, verl/trainer/config/engine/fsdp.yaml:23): False
// keeps each unit's gathered weights from its forward to its backward, which is the job's
// sharding.reshard_after_forward false. Before, the key was listed among those that may change a
// step and the job kept FSDP2's default true.
TEST(VerlStepKeysImportTest, ReshardAfterForwardIsTheFsdp2ActorsSharding) {
  const std::string key = "actor_rollout_ref.actor.fsdp_config.reshard_after_forward";
  auto r = ImportJob(Launch("    actor_rollout_ref.actor.strategy=fsdp2 \\\n"
                            "    " +
                            key + "=False \\\n"),
                     "run.sh", Options());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.sharding.mode, ShardingMode::kFsdp2);
  EXPECT_FALSE(r->job.sharding.reshard_after_forward);
  EXPECT_TRUE(r->job.sharding.reshard_after_forward_given);
  const ImportedField* f = FieldOf(*r, "sharding.reshard_after_forward");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->value, "false");
  EXPECT_EQ(f->source, key + " (line 4) = False");
  EXPECT_FALSE(Listed(*r, key));
}

// Strategy fsdp (FSDP1) takes reshard_after_forward False as ShardingStrategy SHARD_GRAD_OP
// (fsdp_workers.py:108-124 and 520-521): gradients and optimizer state sharded, weights whole:
// sharding.mode zero2, still run by FSDP1. True is FULL_SHARD, the zero3 the importer already
// sets: read, the mode unchanged.
TEST(VerlStepKeysImportTest, ReshardAfterForwardFalseIsFsdp1sShardGradOp) {
  const std::string key = "actor_rollout_ref.actor.fsdp_config.reshard_after_forward";
  auto off = ImportJob(Launch("    " + key + "=False \\\n"), "run.sh", Options());
  ASSERT_TRUE(off.ok()) << off.error().Format();
  EXPECT_EQ(off->job.sharding.mode, ShardingMode::kZero2);
  EXPECT_EQ(off->job.sharding.runtime, ShardingRuntime::kFsdp1);
  EXPECT_FALSE(Listed(*off, key));
  auto on = ImportJob(Launch("    " + key + "=True \\\n"), "run.sh", Options());
  ASSERT_TRUE(on.ok()) << on.error().Format();
  EXPECT_EQ(on->job.sharding.mode, ShardingMode::kZero3);
  EXPECT_FALSE(Listed(*on, key));
}

// FSDP2 also takes an integer (reshard to groups of that many GPUs after forward), which the
// job's true | false cannot say: the key stays listed among those that may change a step, with
// that reason, and the job keeps FSDP2's default.
TEST(VerlStepKeysImportTest, AnIntegerReshardStaysListedWithItsReason) {
  const std::string key = "actor_rollout_ref.actor.fsdp_config.reshard_after_forward";
  auto r = ImportJob(Launch("    actor_rollout_ref.actor.strategy=fsdp2 \\\n"
                            "    " +
                            key + "=2 \\\n"),
                     "run.sh", Options());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_TRUE(r->job.sharding.reshard_after_forward);
  EXPECT_TRUE(Listed(*r, key));
  EXPECT_EQ(ReasonOf(r->unused_not_modelled, key),
            "FSDP2 reshards to groups of 2 GPUs after forward; the job's "
            "sharding.reshard_after_forward is true or false only");
  EXPECT_NE(RenderIgnoredKeys(*r).find(key), std::string::npos);
}

// offload_policy True under strategy fsdp2 is FSDP2's CPUOffloadPolicy on the actor
// (fsdp_workers.py:547-548): parameters, gradients and optimizer state in host memory, the job's
// sharding.offload_param cpu. Strategy fsdp never reads it (only the fsdp2 branch does), so there
// it is counted apart, and the summary says what kind of setting left it unread.
TEST(VerlStepKeysImportTest, OffloadPolicyIsFsdp2sCpuOffload) {
  const std::string key = "actor_rollout_ref.actor.fsdp_config.offload_policy";
  auto r = ImportJob(Launch("    actor_rollout_ref.actor.strategy=fsdp2 \\\n"
                            "    " +
                            key + "=True \\\n"),
                     "run.sh", Options());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.sharding.offload_param, OffloadTarget::kCpu);
  EXPECT_EQ(r->job.sharding.offload_optimizer, OffloadTarget::kNone);
  EXPECT_FALSE(Listed(*r, key));
  auto fsdp1 = ImportJob(Launch("    " + key + "=True \\\n"), "run.sh", Options());
  ASSERT_TRUE(fsdp1.ok()) << fsdp1.error().Format();
  EXPECT_EQ(fsdp1->job.sharding.offload_param, OffloadTarget::kNone);
  EXPECT_TRUE(Listed(*fsdp1, key));
  EXPECT_EQ(ReasonOf(fsdp1->unused_no_step_cost, key),
            "only FSDP2 reads it (volcengine/verl@b178a3cd:verl/workers/fsdp_workers.py:547); "
            "the actor's strategy is fsdp");
  const std::string summary = RenderIgnoredKeys(*fsdp1);
  EXPECT_NE(summary.find("; settings the actor's training strategy does not read)"),
            std::string::npos)
      << summary;
  EXPECT_EQ(summary.find("turns off"), std::string::npos) << summary;
}

// verl's use_torch_compile (default true, verl/trainer/config/actor/actor.yaml:102) compiles the
// FSDP actor's entropy function only (verl/workers/actor/dp_actor.py:86-90), not the model: not
// framework.compile. Under FSDP it stays listed among the keys that may change a step, and
// --explain says why; the megatron actor never reads it, so there it is counted apart.
TEST(VerlStepKeysImportTest, UseTorchCompileIsNotTheModelsCompile) {
  const std::string key = "actor_rollout_ref.actor.use_torch_compile";
  auto r = ImportJob(Launch("    " + key + "=True \\\n"), "run.sh", Options());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_FALSE(r->job.framework.compile);
  EXPECT_TRUE(Listed(*r, key));
  EXPECT_EQ(ReasonOf(r->unused_no_step_cost, key), "");
  const std::string why = ReasonOf(r->unused_not_modelled, key);
  EXPECT_TRUE(why.starts_with("verl compiles only the entropy-from-logits function with it"))
      << why;
  EXPECT_NE(RenderImportText(*r).find(key + " = True (" + key +
                                      " (line 3)) [may change a step, not modelled: " + why + "]"),
            std::string::npos)
      << RenderImportText(*r);
  ImportOptions o = Options();
  o.overrides.push_back("sharding.mode=zero1");
  auto m = ImportJob(Launch("    actor_rollout_ref.actor.strategy=megatron \\\n"
                            "    " +
                            key + "=False \\\n"),
                     "run.sh", o);
  ASSERT_TRUE(m.ok()) << m.error().Format();
  EXPECT_TRUE(Listed(*m, key));
  EXPECT_TRUE(
      ReasonOf(m->unused_no_step_cost, key).starts_with("the megatron actor never reads it"))
      << ReasonOf(m->unused_no_step_cost, key);
}

// vLLM's max_num_batched_tokens and enable_chunked_prefill (verl passes both to the engine:
// verl/workers/rollout/vllm_rollout/vllm_async_server.py:273-274) may change the rollout's
// memory and prefill, which strata rl does not model: both stay among the keys that may change a
// step, each with its reason in --explain.
TEST(VerlStepKeysImportTest, VllmSchedulerBudgetStaysListedWithItsReason) {
  auto r = ImportJob(Launch("    actor_rollout_ref.rollout.max_num_batched_tokens=16384 \\\n"
                            "    actor_rollout_ref.rollout.enable_chunked_prefill=True \\\n"),
                     "run.sh", Options());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  for (const char* key : {"actor_rollout_ref.rollout.max_num_batched_tokens",
                          "actor_rollout_ref.rollout.enable_chunked_prefill"}) {
    EXPECT_TRUE(Listed(*r, key)) << key;
    EXPECT_NE(ReasonOf(r->unused_not_modelled, key), "") << key;
  }
  EXPECT_TRUE(ReasonOf(r->unused_not_modelled, "actor_rollout_ref.rollout.max_num_batched_tokens")
                  .starts_with("vLLM's token budget per scheduler step"));
  const std::string summary = RenderIgnoredKeys(*r);
  EXPECT_NE(summary.find("# 2 keys not understood, ignored: "
                         "actor_rollout_ref.rollout.enable_chunked_prefill, "
                         "actor_rollout_ref.rollout.max_num_batched_tokens"),
            std::string::npos)
      << summary;
}

// The summary names only the kinds of switched-off settings that left keys unread. The launch
// runs a reference (use_kl_loss=True, line 3) and no critic (GRPO): only the critic's key
// (line 4) is left unread by what the launch turns off, and there is no token budget whose
// dynamic batching is off. Before, the summary named "a dynamic batching, a reference or critic
// pass" whichever applied.
TEST(VerlStepKeysImportTest, TheSummaryNamesOnlyTheKindsThatApplied) {
  auto critic = ImportJob(Launch("    actor_rollout_ref.actor.use_kl_loss=True \\\n"
                                 "    critic.model.fsdp_config.param_offload=True \\\n"),
                          "run.sh", Options());
  ASSERT_TRUE(critic.ok()) << critic.error().Format();
  EXPECT_EQ(critic->unused_unread_kinds, std::vector<UnreadBecause>{UnreadBecause::kNoCriticPass});
  const std::string summary = RenderIgnoredKeys(*critic);
  EXPECT_NE(summary.find("data/import_cost_neutral_keys.yaml; settings of what the launch turns "
                         "off: a critic pass)"),
            std::string::npos)
      << summary;
  EXPECT_EQ(summary.find("dynamic batching"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("reference"), std::string::npos) << summary;
  // The actor's budget beside its dynamic batching left off (verl's default use_dynamic_bsz
  // false), and a reference key without a KL term: three kinds, in order, the last after "and".
  auto three = ImportJob(Launch("    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=8192 \\\n"
                                "    actor_rollout_ref.ref.fsdp_config.param_offload=True \\\n"
                                "    critic.model.fsdp_config.param_offload=True \\\n"),
                         "run.sh", Options());
  ASSERT_TRUE(three.ok()) << three.error().Format();
  const std::string all = RenderIgnoredKeys(*three);
  EXPECT_NE(all.find("; settings of what the launch turns off: a dynamic batching, a reference "
                     "pass and a critic pass)"),
            std::string::npos)
      << all;
}

}  // namespace
}  // namespace strata::verl_step_keys_import_test

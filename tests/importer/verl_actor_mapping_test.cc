// strata import of a verl launch's actor as verl runs it: the keys verl's own examples set (or
// leave to verl's defaults) that change what the actor's training job holds on the GPU. Each
// launch below is cut from a verl example at volcengine/verl@
// b178a3cd56f58b2d502255daba591e92833930a7 (the file named above it; keys verbatim, lines
// renumbered) and its expected fields read off verl's own code at that commit.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "importer/import_test_support.h"
#include "strata/importer/import_job.h"
#include "support/golden.h"

namespace strata::verl_actor_mapping_test {
namespace {

using testing::Field;
using testing::SourceOf;

ImportOptions Options(const char* gpu, const char* model, int64_t gpus_per_node) {
  ImportOptions o;
  o.gpu = gpu;
  o.model = model;
  o.nodes = 1;
  o.gpus_per_node = gpus_per_node;
  o.actor_job_ref = "rl.actor.yaml";
  return o;
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

// examples/rollout_correction/run_with_rollout_corr.sh (Qwen2.5-7B, FSDP, 2,048 + 4,096 tokens,
// mini batch 32, micro 8 a GPU; run on 4 GPUs, where verl accepts it: 32 / 4 = 8). It sets no
// enable_gradient_checkpointing.
const char* kRolloutCorr =
    "python3 -m verl.trainer.main_ppo \\\n"
    "    data.max_prompt_length=2048 \\\n"
    "    data.max_response_length=4096 \\\n"
    "    data.train_batch_size=128 \\\n"
    "    algorithm.adv_estimator=rloo \\\n"
    "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B \\\n"
    "    actor_rollout_ref.actor.ppo_mini_batch_size=32 \\\n"
    "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \\\n"
    "    actor_rollout_ref.rollout.name=vllm \\\n"
    "    trainer.total_epochs=10\n";

// verl's FSDP actor checkpoints its layers by default: enable_gradient_checkpointing is True in
// ppo_trainer.yaml since volcengine/verl@9fca71d2 (2025-01-28), in the 008db456 config strata
// takes its defaults from (line 29) and at b178a3cd (_generated_ppo_trainer.yaml:304); verl's
// fsdp_workers.py then calls gradient_checkpointing_enable(). Before: the launch alone imported as
// `granularity: none # enable_gradient_checkpointing defaults to false`, and this example's
// update read 356.77 GiB, "does not fit" (64.37 GiB with verl's full recompute).
TEST(VerlActorMappingTest, FsdpActorCheckpointsLayersByVerlsDefault) {
  auto r = ImportJob(kRolloutCorr, "run.sh", Options("H100 SXM", "qwen2.5-math-7b", 4));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.recompute.granularity, RecomputeGranularity::kFull) << r->yaml;
  EXPECT_NE(SourceOf(*r, "recompute.granularity")
                .find("008db456bf612da5543c9bb6e26fe654029ad5b8:verl/trainer/config/"
                      "ppo_trainer.yaml:29"),
            std::string::npos)
      << SourceOf(*r, "recompute.granularity");
  // Set to False by the launch: what it says.
  auto off =
      ImportJob(std::string(kRolloutCorr)
                    .insert(std::string(kRolloutCorr).find("    trainer.total_epochs"),
                            "    actor_rollout_ref.model.enable_gradient_checkpointing=False \\\n"),
                "run.sh", Options("H100 SXM", "qwen2.5-math-7b", 4));
  ASSERT_TRUE(off.ok()) << off.error().Format();
  EXPECT_EQ(off->job.recompute.granularity, RecomputeGranularity::kNone);
}

// examples/grpo_trainer/run_deepseek7b_llm_math_megatron.sh at volcengine/verl@f252da34 (verbatim,
// tests/fixtures/verl_f252da34/README.md): megatron (line 14, --config-name
// ppo_megatron_trainer.yaml) with actor_rollout_ref.model.enable_gradient_checkpointing=True (line
// 33) and no override_transformer_config.recompute_*. verl's megatron workers do not read that key
// (b178a3cd: it appears in fsdp_workers.py:439/:797 and the FSDP/veomni engines only;
// megatron_workers.py:230 builds megatron-core's TransformerConfig from
// override_transformer_config alone; docs/examples/config.rst:237 "FSDP only ... Megatron uses
// recompute options in override_transformer_config"), and #2691 deleted this very line from the
// example as a flag that does nothing. So no full recompute: strata's megatron default (nothing,
// override_transformer_config.recompute_granularity null at b178a3cd
// _generated_ppo_megatron_trainer.yaml:48). Before: `granularity: full` read from line 34.
std::string ExampleAt(const std::string& commit_dir, const std::string& file) {
  return testing::TestPath("fixtures/" + commit_dir + "/" + file);
}

TEST(VerlActorMappingTest, MegatronIgnoresEnableGradientCheckpointing) {
  auto r = ImportJobFile(ExampleAt("verl_f252da34", "run_deepseek7b_llm_math_megatron.sh"),
                         Options("H100 SXM", "qwen2.5-math-7b", 16));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.recompute.granularity, RecomputeGranularity::kNone) << r->yaml;
  EXPECT_TRUE(AnyContains(r->notes, "not read by verl's megatron workers")) << r->yaml;
  EXPECT_FALSE(AnyContains(r->unused, "enable_gradient_checkpointing")) << r->yaml;
}

// examples/ppo_trainer/run_deepseek7b_llm_sp2.sh: ulysses_sequence_parallel_size=2 (line 17 of
// the example). verl's Ulysses is DeepSpeed-Ulysses, not a ring: its patched flash attention
// all-to-alls Q, K and V before the kernel and the output after it, inline
// (monkey_patch.py:119-153 at b178a3cd), so the actor job says CP 2 with cp_comm_type a2a and
// overlap.cp_comm false. Before: CP 2 at the ring default (p2p, hidden behind attention).
TEST(VerlActorMappingTest, UlyssesIsAnAllToAllNotARing) {
  auto r = ImportJobFile(ExampleAt("verl_b178a3cd", "run_deepseek7b_llm_sp2.sh"),
                         Options("H100 SXM", "qwen2.5-math-7b", 8));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.layout.cp, 2) << r->yaml;
  EXPECT_EQ(r->job.layout.cp_comm_type, CpCommType::kA2a) << r->yaml;
  EXPECT_FALSE(r->job.overlap.cp_comm) << r->yaml;
}

// fsdp_config.fsdp_size below the world: verl's HSDP mesh (world // fsdp_size, fsdp_size)
// (fsdp_workers.py:98-104 at b178a3cd). The 128-GPU colocate recipe's fsdp_size=2
// (volcengine/verl@7f837ac3a4a2b98b217d393a4170456223cdbb05:recipe/fully_async_policy/exp/
// qwen2-7B-math_128/fsdp2_colocate/dapo_7b_math_fsdp2_colocate.sh:56) over 16 GPUs here: 8
// replicas of FSDP groups of 2. Before: "read but not used", one FSDP group of 16.
TEST(VerlActorMappingTest, FsdpSizeIsHsdp) {
  const std::string script =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-Math-7B \\\n"
      "    actor_rollout_ref.actor.strategy=fsdp2 \\\n"
      "    data.train_batch_size=64 actor_rollout_ref.actor.ppo_mini_batch_size=32 \\\n"
      "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\\n"
      "    actor_rollout_ref.actor.fsdp_config.fsdp_size=2 \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=2\n";
  auto r = ImportJob(script, "run.sh", Options("H100 SXM", "qwen2.5-math-7b", 8));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.sharding.replicate, 8) << r->yaml;
  EXPECT_FALSE(AnyContains(r->unused, "fsdp_size")) << r->yaml;
}

// The pre-#2675 API (028af31be single_controller/base/megatron/worker.py:73-77 took the megatron
// recompute from model.gradient_checkpointing_kwargs; later releases ignore it): what runs depends
// on the release, so strata refuses it by key rather than guess.
TEST(VerlActorMappingTest, MegatronOldGradientCheckpointingKwargsAreRefused) {
  const std::string script =
      "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
      "    actor_rollout_ref.model.enable_gradient_checkpointing=True \\\n"
      "    +actor_rollout_ref.model.gradient_checkpointing_kwargs."
      "activations_checkpoint_granularity=full \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
  auto r = ImportJob(script, "run.sh", Options("H100 SXM", "qwen2.5-math-7b", 8));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Format().find("activations_checkpoint_granularity"), std::string::npos)
      << r.error().Format();
}

// verl's megatron workers never read enable_gradient_checkpointing (b178a3cd: the key appears in
// fsdp_workers.py alone): recompute comes from override_transformer_config. A megatron launch
// that sets recompute_granularity lists no contradicting default. Before: --explain listed
// "recompute.granularity = none: enable_gradient_checkpointing defaults to false" beside the
// `granularity: full` the file said.
TEST(VerlActorMappingTest, MegatronRecomputeListsNoContradictingDefault) {
  const std::string script =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=grpo \\\n"
      "    actor_rollout_ref.actor.strategy=megatron \\\n"
      "    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
      "    data.train_batch_size=32 actor_rollout_ref.rollout.n=4 \\\n"
      "    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\\n"
      "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\\n"
      "    +actor_rollout_ref.actor.megatron.override_transformer_config."
      "recompute_granularity=full \\\n"
      "    trainer.n_gpus_per_node=8 trainer.nnodes=1\n";
  auto r = ImportJob(script, "run.sh", Options("H20", "qwen2.5-math-7b", 8));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_FALSE(AnyContains(r->defaults, "recompute.granularity")) << r->yaml;
}

// examples/ppo_trainer/run_deepseek7b_llm_sp2.sh's actor with verl's FSDP offload on (lines 20-21
// as examples/gmpo_trainer/test_dapo_7b_math.sh:99-100 set them). verl moves the actor's states
// to the host between phases and loads them all back for the update, where AdamW steps on the
// GPU (fsdp_workers.py: no CPUOffload for the actor, lines 526 and 552; update_actor loads params
// and optimizer, 893-898): the actor's job keeps every state on the GPU (sharding.offload_* none)
// and the RL job's placement.offload_trainer prices the moves. Before: the actor job said
// offload_param/offload_optimizer: cpu (CPU Adam), its update priced 14.64 GiB instead of 29.12
// on 8 H100 (hand: fp32 params 3.45 GB + fp32 grads 3.45 GB + moments 6.91 GB = 13.8 GB a GPU
// for 6.91e9 parameters over 8 ranks left on the host).
TEST(VerlActorMappingTest, FsdpOffloadIsBetweenPhasesNotDuringTheUpdate) {
  const std::string script =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=gae \\\n"
      "    data.train_batch_size=1024 \\\n"
      "    data.max_prompt_length=512 \\\n"
      "    data.max_response_length=512 \\\n"
      "    actor_rollout_ref.model.path=deepseek-ai/deepseek-llm-7b-chat \\\n"
      "    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\\n"
      "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=32 \\\n"
      "    actor_rollout_ref.model.enable_gradient_checkpointing=True \\\n"
      "    actor_rollout_ref.actor.fsdp_config.param_offload=True \\\n"
      "    actor_rollout_ref.actor.fsdp_config.optimizer_offload=True \\\n"
      "    actor_rollout_ref.rollout.tensor_model_parallel_size=4 \\\n"
      "    actor_rollout_ref.rollout.name=vllm \\\n"
      "    trainer.n_gpus_per_node=8 \\\n"
      "    trainer.nnodes=1\n";
  auto r = ImportJob(script, "run.sh", Options("H100 SXM", "qwen2.5-math-7b", 8));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.sharding.offload_param, OffloadTarget::kNone) << r->yaml;
  EXPECT_EQ(r->job.sharding.offload_optimizer, OffloadTarget::kNone) << r->yaml;
  EXPECT_TRUE(AnyContains(r->notes, "fsdp_config.optimizer_offload = True")) << r->yaml;
  ASSERT_TRUE(r->rl.has_value());
  bool offload_trainer = false;
  for (const auto& f : r->rl->fields) {
    if (f.key == "placement.offload_trainer") offload_trainer = f.value == "true";
  }
  EXPECT_TRUE(offload_trainer) << r->rl->yaml;
}

std::string RlField(const ImportReport& r, const std::string& key) {
  if (!r.rl.has_value()) return "(no RL job)";
  for (const auto& f : r.rl->fields) {
    if (f.key == key) return f.value;
  }
  return "(not set)";
}

// A verl example, verbatim (tests/fixtures/verl_b178a3cd/README.md).
std::string Example(const std::string& file) {
  return testing::TestPath("fixtures/verl_b178a3cd/" + file);
}

// examples/grpo_trainer/run_qwen2_5-3b_gsm8k_grpo_lora.sh: FSDP, lora_rank=64 (line 16),
// lora_alpha=32 (line 17), no target_modules (verl's default all-linear), use_kl_loss (a
// reference). verl turns LoRA on from lora_rank > 0 (fsdp_workers.py:187-188) and passes
// r / lora_alpha / target_modules to PEFT (466-467); the reference is the actor with its adapter
// disabled (ray_trainer.py:299-302, ref_in_actor). Before: lora_rank and lora_alpha were "read but
// not used", the actor imported as full fine-tuning (`frozen: [] # the actor trains every
// parameter`) beside a separate reference, its update 56.25 GiB instead of ~36.
TEST(VerlActorMappingTest, FsdpLoraIsTheActorsAdapter) {
  auto r = ImportJobFile(Example("run_qwen2_5-3b_gsm8k_grpo_lora.sh"),
                         Options("H100 SXM", "qwen2.5-math-7b", 2));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.adapter.kind, AdapterKind::kLora) << r->yaml;
  EXPECT_EQ(r->job.adapter.rank, 64);
  EXPECT_EQ(r->job.adapter.alpha, 32);
  EXPECT_EQ(r->job.adapter.targets, std::vector<std::string>{"all-linear"});
  EXPECT_NE(SourceOf(*r, "adapter.rank").find("line 16"), std::string::npos)
      << SourceOf(*r, "adapter.rank");
  EXPECT_FALSE(AnyContains(r->unused, "lora_rank")) << r->yaml;
  EXPECT_EQ(RlField(*r, "reference"), "true");
  EXPECT_EQ(RlField(*r, "reference_in_actor"), "true") << r->rl->yaml;
  EXPECT_EQ(RlField(*r, "placement.offload_reference"), "(not set)");
  // Under LoRA compute_ref_log_prob returns the actor's compute_log_prob before it reads any
  // ref.* key (fsdp_workers.py:1041-1045): the script's two (lines 36-37) cost a step nothing.
  // Before, both were named among the keys that may change a step.
  const std::string in_actor =
      ": the reference runs inside the actor (LoRA: the actor's old log-prob pass with its adapter "
      "disabled), so verl reads no key of a reference worker";
  EXPECT_TRUE(AnyContains(r->unused_no_step_cost,
                          "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu" + in_actor));
  EXPECT_TRUE(AnyContains(r->unused_no_step_cost,
                          "actor_rollout_ref.ref.fsdp_config.param_offload" + in_actor));
}

// examples/grpo_trainer/run_qwen3moe-30b_megatron_lora.sh: megatron, lora.rank=32 and
// lora.alpha=64 (lines 48-49), no target_modules: verl's megatron default [linear_qkv,
// linear_proj, linear_fc1, linear_fc2] (_generated_ppo_megatron_trainer.yaml:352-356), passed to
// Megatron-Bridge (megatron_workers.py:418). Before: imported as full fine-tuning, the update
// 77.44 GiB of 79.05 where the adapter strata supports gives 22.51 GiB (hand: ~3.9e9 base
// parameters a GPU x 16 B of fp32 grads, master and moments = ~58 GiB a LoRA run does not
// hold), host memory 580.53 GiB a node instead of 143.55.
TEST(VerlActorMappingTest, MegatronLoraIsTheActorsAdapter) {
  auto r = ImportJobFile(Example("run_qwen3moe-30b_megatron_lora.sh"),
                         Options("H100 SXM", "qwen3-30b-a3b", 8));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.adapter.kind, AdapterKind::kLora) << r->yaml;
  EXPECT_EQ(r->job.adapter.rank, 32);
  EXPECT_EQ(r->job.adapter.alpha, 64);
  EXPECT_EQ(r->job.adapter.targets,
            (std::vector<std::string>{"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"}));
  EXPECT_EQ(RlField(*r, "reference_in_actor"), "true") << r->rl->yaml;
}

// verl's megatron actor builds megatron-core's DDP config from {grad_reduce_in_fp32: True,
// overlap_grad_reduce: False} updated by actor.megatron.override_ddp_config
// (volcengine/verl@b178a3cd:verl/utils/megatron_utils.py:139-146). No verl example sets it, so the
// megatron LoRA example above gets three overrides added after its recompute lines. Off,
// grad_reduce_in_fp32 makes the gradient buffer bf16 (megatron-core: grad_dtype = param_dtype);
// bucket_size is megatron-core's and changes nothing strata models. Before: the three keys were
// "read but not used" and the job kept fp32 gradients and no overlap.
TEST(VerlActorMappingTest, MegatronDdpOverridesAreTheJobs) {
  const std::string example =
      testing::ReadTestFile("fixtures/verl_b178a3cd/run_qwen3moe-30b_megatron_lora.sh");
  const std::string after = "override_transformer_config.recompute_num_layers=1\n";
  ASSERT_NE(example.find(after), std::string::npos);
  const auto with = [&](const std::string& lines) {
    std::string text = example;
    return text.insert(text.find(after) + after.size(), lines);
  };
  auto plain = ImportJob(example, "run.sh", Options("H100 SXM", "qwen3-30b-a3b", 8));
  ASSERT_TRUE(plain.ok()) << plain.error().Format();
  EXPECT_EQ(Field(*plain, "precision.grads"), "fp32") << plain->yaml;
  EXPECT_NE(Field(*plain, "overlap.grad_reduce"), "true") << plain->yaml;

  const std::string prefix = "    +actor_rollout_ref.actor.megatron.override_ddp_config.";
  auto r = ImportJob(with(prefix + "grad_reduce_in_fp32=False\n" + prefix +
                          "overlap_grad_reduce=True\n" + prefix + "bucket_size=40000000\n"),
                     "run.sh", Options("H100 SXM", "qwen3-30b-a3b", 8));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "precision.grads"), "bf16") << r->yaml;
  EXPECT_EQ(Field(*r, "overlap.grad_reduce"), "true") << r->yaml;
  EXPECT_NE(SourceOf(*r, "precision.grads").find("grad_reduce_in_fp32"), std::string::npos)
      << SourceOf(*r, "precision.grads");
  EXPECT_TRUE(AnyContains(r->notes, "override_ddp_config.bucket_size = 40000000")) << r->yaml;
  EXPECT_FALSE(AnyContains(r->unused, "override_ddp_config")) << r->yaml;

  // A value that is not a boolean is refused by key, as megatron-core's dataclass would not take
  // it as one.
  auto bad = ImportJob(with(prefix + "overlap_grad_reduce=maybe\n"), "run.sh",
                       Options("H100 SXM", "qwen3-30b-a3b", 8));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("overlap_grad_reduce"), std::string::npos)
      << bad.error().Format();
}

// examples/gspo_trainer/test_gspo_qwen30b_a3b_ep.sh runs vLLM at TP1 with data_parallel_size 4
// and expert_parallel_size 4 (lines 138-139): one engine whose routed experts are split 4 ways,
// which strata rl's TP-only rollout does not model (it would hold the whole 30B model on every
// GPU: 56.87 GiB of weights instead of ~16.4, and price a 9,782.8 s generation). Refused by key
// and line, exit 2. Before: both keys "read but not used", rollout.tp 1, exit 0.
TEST(VerlActorMappingTest, RolloutExpertAndDataParallelismAreRefusedByKey) {
  ImportOptions o;  // as the audit ran it: --cluster h100-8x8-ib400 --model qwen3-30b-a3b
  o.cluster = "h100-8x8-ib400";
  o.model = "qwen3-30b-a3b";
  o.actor_job_ref = "rl.actor.yaml";
  auto r = ImportJobFile(Example("test_gspo_qwen30b_a3b_ep.sh"), o);
  ASSERT_FALSE(r.ok()) << r->yaml;
  EXPECT_EQ(r.error().field, "actor_rollout_ref.rollout.data_parallel_size") << r.error().Format();
  EXPECT_EQ(r.error().line, 138) << r.error().Format();
  EXPECT_NE(r.error().message.find("does not model"), std::string::npos) << r.error().Format();
}

// The same example on verl's default 8 GPUs: verl itself refuses it (fsdp_workers.py:255,
// "normalized ppo_mini_batch_size 4 should be divisible by ppo_micro_batch_size_per_gpu 8": 32 x
// n 1 // 8 ranks = 4). Refused with verl's reason, naming the launch's key. Before: "strata import
// wrote a job it cannot read back (a fault of the importer ...)".
TEST(VerlActorMappingTest, AMiniBatchVerlRefusesIsRefusedWithVerlsReason) {
  auto r = ImportJob(kRolloutCorr, "run.sh", Options("H100 SXM", "qwen2.5-math-7b", 8));
  ASSERT_FALSE(r.ok()) << r->yaml;
  EXPECT_EQ(r.error().field, "actor_rollout_ref.actor.ppo_mini_batch_size") << r.error().Format();
  EXPECT_NE(r.error().message.find("normalized ppo_mini_batch_size 4 (= 32 x rollout.n 1 // 8 "
                                   "data-parallel ranks) should be divisible by "
                                   "ppo_micro_batch_size_per_gpu 8"),
            std::string::npos)
      << r.error().Format();
  EXPECT_EQ(r.error().Format().find("fault of the importer"), std::string::npos)
      << r.error().Format();
}

// The launch leaves rollout.enforce_eager and max_num_seqs to verl's defaults: the table's
// 008db456 config says true and 1024, while verl changed them to false (ff6978c14, 2025-08-08)
// and 256 (e9405d70, 2026-01-24; b178a3cd _generated_ppo_trainer.yaml:203 and :212). The RL job
// says so. Before: nothing said it (docs/rl.md named enforce_eager alone).
TEST(VerlActorMappingTest, RolloutDefaultsOfAnOlderReleaseAreSaid) {
  auto r = ImportJob(kRolloutCorr, "run.sh", Options("H100 SXM", "qwen2.5-math-7b", 4));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  ASSERT_TRUE(r->rl.has_value());
  EXPECT_TRUE(AnyContains(r->rl->notes,
                          "rollout.enforce_eager true and rollout.max_num_seqs 1024 "
                          "are verl's defaults of volcengine/verl@008db456"))
      << r->rl->yaml;
}

// examples/ppo_trainer/run_deepseek7b_llm_sp2.sh sets critic.ppo_micro_batch_size_per_gpu=64
// (its line 32) beside the actor's 32; the critic's update is priced on the actor's job, at 32.
// The RL job says so. Before: "read but not used", the critic's micro batch memory 2x under
// verl's without a word.
TEST(VerlActorMappingTest, TheCriticsOwnMicroBatchIsSaid) {
  const std::string script =
      "python3 -m verl.trainer.main_ppo \\\n"
      "    algorithm.adv_estimator=gae \\\n"
      "    data.train_batch_size=1024 \\\n"
      "    actor_rollout_ref.model.path=deepseek-ai/deepseek-llm-7b-chat \\\n"
      "    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\\n"
      "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=32 \\\n"
      "    critic.model.path=deepseek-ai/deepseek-llm-7b-chat \\\n"
      "    critic.ppo_micro_batch_size_per_gpu=64 \\\n"
      "    trainer.n_gpus_per_node=8 \\\n"
      "    trainer.nnodes=1\n";
  auto r = ImportJob(script, "run.sh", Options("H100 SXM", "qwen2.5-math-7b", 8));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  ASSERT_TRUE(r->rl.has_value());
  EXPECT_TRUE(AnyContains(r->rl->notes,
                          "critic.ppo_micro_batch_size_per_gpu = 64 "
                          "(critic.ppo_micro_batch_size_per_gpu (line 8)): the "
                          "critic's update is priced on the actor's job, at its "
                          "micro batch 32 a GPU"))
      << r->rl->yaml;
  EXPECT_FALSE(AnyContains(r->unused, "critic.ppo_micro_batch_size_per_gpu")) << r->yaml;
}

}  // namespace
}  // namespace strata::verl_actor_mapping_test

// The launch settings that decide what a checkpoint holds, read into the job's checkpoint.*
// fields (before, each was listed under "read but not used by a strata job" and the checkpoint
// was sized as if it were not set).
#include <gtest/gtest.h>

#include "import_test_support.h"
#include "strata/importer/import_job.h"

namespace strata {
namespace {

bool Unused(const ImportReport& r, const std::string& text) {
  for (const std::string& line : r.unused) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

// Megatron-LM's --no-save-optim (store_true, "Do not save current optimizer.", megatron/training/
// arguments.py): the checkpoint holds the model alone. --no-save-rng drops a few kB of RNG state
// per rank and changes no size, so it is read without a field.
TEST(ImportCheckpoint, MegatronNoSaveOptim) {
  ImportOptions o;
  o.gpu = "H100";
  const std::string script =
      "GPUS_PER_NODE=8\nNNODES=4\n"
      "torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py \\\n"
      "    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 \\\n"
      "    --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 \\\n"
      "    --num-attention-heads 32 --group-query-attention --num-query-groups 8 \\\n"
      "    --seq-length 8192 --max-position-embeddings 8192 \\\n"
      "    --micro-batch-size 1 --global-batch-size 128 --bf16 --use-distributed-optimizer \\\n"
      "    --swiglu --normalization RMSNorm --untie-embeddings-and-output-weights \\\n"
      "    --position-embedding-type rope --disable-bias-linear --vocab-size 128256 \\\n"
      "    --no-save-optim --no-save-rng --save /ckpt --save-interval 500\n";
  auto r = ImportJob(script, "pretrain.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_FALSE(r->job.checkpoint.optimizer);
  EXPECT_NE(testing::SourceOf(*r, "checkpoint.optimizer").find("--no-save-optim"),
            std::string::npos)
      << testing::SourceOf(*r, "checkpoint.optimizer");
  EXPECT_FALSE(Unused(*r, "no_save_optim"));
  EXPECT_FALSE(Unused(*r, "no_save_rng"));
  // Without the flag the optimizer state is saved, and no field is written.
  std::string plain = script;
  plain.replace(plain.find("--no-save-optim --no-save-rng "), 30, "");
  auto p = ImportJob(plain, "pretrain.sh", o);
  ASSERT_TRUE(p.ok()) << p.error().Format();
  EXPECT_TRUE(p->job.checkpoint.optimizer);
  EXPECT_EQ(testing::SourceOf(*p, "checkpoint.optimizer"), "(not set)");
}

// ms-swift's `megatron sft --no_save_optim true` passes Megatron's flag on.
TEST(ImportCheckpoint, SwiftNoSaveOptimTrue) {
  ImportOptions o;
  o.gpu = "H100";
  o.model = "qwen3-30b-a3b";
  const std::string script =
      "NNODES=2 NPROC_PER_NODE=8 megatron sft --load Qwen3-30B-A3B-Base-mcore \\\n"
      "    --pipeline_model_parallel_size 2 --expert_model_parallel_size 8 \\\n"
      "    --micro_batch_size 1 --global_batch_size 16 --max_length 8192 \\\n"
      "    --sequence_parallel true --no_save_optim true --no_save_rng true\n";
  auto r = ImportJob(script, "train.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_FALSE(r->job.checkpoint.optimizer);
  EXPECT_FALSE(Unused(*r, "no_save_optim"));
}

// The HF Trainer + DeepSpeed ZeRO-3 config with stage3_gather_16bit_weights_on_model_save true:
// the Trainer's save_model writes the gathered 16-bit model from rank 0 at every save.
TEST(ImportCheckpoint, Zero3GatherFlagSavesThe16BitModel) {
  ImportOptions o;
  o.gpu = "H100";
  o.nodes = 1;
  o.gpus_per_node = 8;
  o.model = "llama-3.1-8b";
  o.overrides = {"sequence.max_tokens=4096"};
  const std::string config =
      "{\"bf16\": {\"enabled\": \"auto\"},\n"
      " \"zero_optimization\": {\"stage\": 3,\n"
      "   \"stage3_gather_16bit_weights_on_model_save\": true},\n"
      " \"train_micro_batch_size_per_gpu\": \"auto\"}\n";
  auto r = ImportJob(config, "ds_config_zero3.json", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_TRUE(r->job.checkpoint.save_16bit_model);
  EXPECT_FALSE(Unused(*r, "stage3_gather_16bit_weights_on_model_save"));
  std::string off = config;
  off.replace(off.find("true}"), 4, "false");
  auto f = ImportJob(off, "ds_config_zero3.json", o);
  ASSERT_TRUE(f.ok()) << f.error().Format();
  EXPECT_FALSE(f->job.checkpoint.save_16bit_model);
}

// DeepSpeed's overlap_comm: given, it is the job's; absent, DeepSpeed's own default by stage
// (deepspeed/runtime/zero/config.py, overlap_comm_valid: true only for stage 3). Every stage
// carries it as sharding.overlap_comm (ZeRO-1/2's overlap.grad_reduce is derived from it).
// LLaMA-Factory's examples/deepspeed/ds_z3_config.json and ds_z2_config.json set it false. Before,
// the key was "read but not used" and every ZeRO job was priced with its collectives hidden.
TEST(ImportCheckpoint, DeepSpeedOverlapCommFollowsTheConfigAndItsDefault) {
  ImportOptions o;
  o.gpu = "H100";
  o.nodes = 1;
  o.gpus_per_node = 8;
  o.model = "llama-3.1-8b";
  o.overrides = {"sequence.max_tokens=4096"};
  auto config = [](int stage, const std::string& overlap) {
    return "{\"bf16\": {\"enabled\": true},\n \"zero_optimization\": {\"stage\": " +
           std::to_string(stage) + overlap + "},\n \"train_micro_batch_size_per_gpu\": 1}\n";
  };
  auto z3_off = ImportJob(config(3, ", \"overlap_comm\": false"), "ds_z3_config.json", o);
  ASSERT_TRUE(z3_off.ok()) << z3_off.error().Format();
  EXPECT_FALSE(z3_off->job.sharding.overlap_comm);
  EXPECT_FALSE(Unused(*z3_off, "overlap_comm"));
  auto z3_default = ImportJob(config(3, ""), "ds_z3_config.json", o);
  ASSERT_TRUE(z3_default.ok()) << z3_default.error().Format();
  EXPECT_TRUE(z3_default->job.sharding.overlap_comm);
  auto z2_default = ImportJob(config(2, ""), "ds_z2_config.json", o);
  ASSERT_TRUE(z2_default.ok()) << z2_default.error().Format();
  EXPECT_FALSE(z2_default->job.sharding.overlap_comm);
  auto z1_on = ImportJob(config(1, ", \"overlap_comm\": true"), "ds_z1_config.json", o);
  ASSERT_TRUE(z1_on.ok()) << z1_on.error().Format();
  // ZeRO-1's overlap is written once, as sharding.overlap_comm: overlap.grad_reduce is derived
  // from it when the job is resolved (tests/job/resolved_job_test.cc).
  EXPECT_TRUE(z1_on->job.sharding.overlap_comm);
  EXPECT_TRUE(z1_on->job.sharding.overlap_comm_given);
}

}  // namespace
}  // namespace strata

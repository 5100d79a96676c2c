// The launch settings that decide what a checkpoint holds, read into the job's checkpoint.*
// fields (before, each was listed under "read but not used by a strata job" and the checkpoint
// was sized as if it were not set).
#include <gtest/gtest.h>

#include "import_test_support.h"
#include "strata/core/file_io.h"
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

// Megatron-LM's --async-save: with --use-persistent-ckpt-worker the save runs in the background
// (checkpoint.async_save true); without it megatron-core (core_v0.16.0 on) disables it
// (NVIDIA/Megatron-LM d98e8a6 megatron/training/arguments.py: "--async-save is not supported
// without --use-persistent-ckpt-worker. Disabling --async-save."). Before, both flags were "read
// but not used" and every save was priced synchronous.
TEST(ImportCheckpoint, MegatronAsyncSaveNeedsThePersistentWorker) {
  ImportOptions o;
  o.gpu = "H100";
  const std::string script =
      "torchrun --nnodes 8 --nproc-per-node 8 pretrain_gpt.py \\\n"
      "    --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 \\\n"
      "    --num-attention-heads 32 --group-query-attention --num-query-groups 8 \\\n"
      "    --seq-length 8192 --max-position-embeddings 131072 \\\n"
      "    --micro-batch-size 1 --global-batch-size 128 --bf16 --use-distributed-optimizer \\\n"
      "    --swiglu --normalization RMSNorm --untie-embeddings-and-output-weights \\\n"
      "    --position-embedding-type rope --disable-bias-linear --vocab-size 128256 \\\n"
      "    --save /ckpt --save-interval 500 --ckpt-format torch_dist --async-save "
      "--use-persistent-ckpt-worker\n";
  auto r = ImportJob(script, "pretrain.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_TRUE(r->job.checkpoint.async_save);
  EXPECT_FALSE(Unused(*r, "async_save"));
  EXPECT_FALSE(Unused(*r, "use_persistent_ckpt_worker"));
  std::string alone = script;
  alone.replace(alone.find(" --use-persistent-ckpt-worker"),
                std::string(" --use-persistent-ckpt-worker").size(), "");
  auto a = ImportJob(alone, "pretrain.sh", o);
  ASSERT_TRUE(a.ok()) << a.error().Format();
  EXPECT_FALSE(a->job.checkpoint.async_save);
  EXPECT_NE(testing::SourceOf(*a, "checkpoint.async_save").find("disables"), std::string::npos)
      << testing::SourceOf(*a, "checkpoint.async_save");
}

// torchtitan's [checkpoint] async_mode (torchtitan components/checkpointer/dcp.py): "async" and
// "async_with_pinned_mem" stage to host memory and write in the background; "disabled" (the
// shipped llama3_8b.toml's) saves synchronously; anything else is refused, naming the key.
TEST(ImportCheckpoint, TorchtitanAsyncMode) {
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.nodes = 8;
  o.gpus_per_node = 8;
  auto text = ReadFile(testing::ImportGolden("torchtitan_llama3_8b/llama3_8b.toml"));
  ASSERT_TRUE(text.ok());
  const std::string key = "async_mode = \"disabled\"";
  ASSERT_NE(text->find(key), std::string::npos);
  auto off = ImportJob(*text, "llama3_8b.toml", o);
  ASSERT_TRUE(off.ok()) << off.error().Format();
  EXPECT_FALSE(off->job.checkpoint.async_save);
  for (const char* mode : {"async", "async_with_pinned_mem"}) {
    std::string on = *text;
    on.replace(on.find(key), key.size(), std::string("async_mode = \"") + mode + "\"");
    auto r = ImportJob(on, "llama3_8b.toml", o);
    ASSERT_TRUE(r.ok()) << r.error().Format();
    EXPECT_TRUE(r->job.checkpoint.async_save) << mode;
    EXPECT_FALSE(Unused(*r, "async_mode")) << mode;
  }
  std::string bad = *text;
  bad.replace(bad.find(key), key.size(), "async_mode = \"sometimes\"");
  auto b = ImportJob(bad, "llama3_8b.toml", o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().field, "checkpoint.async_mode");
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

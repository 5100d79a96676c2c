// Megatron-LM flags that state what a job shards and how its experts are loaded: Megatron-FSDP's
// sharding strategy and the torch-FSDP2 wrapper (the job's sharding.mode), the forced-balance
// router and padded expert capacity (moe.routing_imbalance), the launch's collective timeout, a
// pipeline that does not divide the layers, and sliding-window layers. Before, each flag was
// listed as "read but not used" (or, for the pipeline, written into a job every view refused).
// Expected values are read off the flags by hand, with Megatron's rule beside each.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "importer/import_test_support.h"
#include "strata/core/file_io.h"
#include "strata/importer/import_job.h"
#include "strata/importer/shell_script.h"
#include "strata/model/megatron_model.h"

namespace strata {
namespace {

using testing::Field;
using testing::ImportGolden;
using testing::SourceOf;

ImportOptions H100() {
  ImportOptions o;
  o.gpu = "H100 SXM";
  return o;
}

// Mixtral's model arguments of NVIDIA/Megatron-LM d98e8a64
// examples/mixtral/train_mixtral_8x7b_distributed.sh (MODEL_ARGS, MOE_ARGS), one node of 8 GPUs,
// with `extra` appended: the flags under test.
std::string MixtralCommand(const std::string& extra) {
  return "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py \\\n"
         "  --use-mcore-models --disable-bias-linear --seq-length 4096 \\\n"
         "  --max-position-embeddings 32768 --num-layers 32 --hidden-size 4096 \\\n"
         "  --ffn-hidden-size 14336 --num-attention-heads 32 --normalization RMSNorm \\\n"
         "  --position-embedding-type rope --swiglu --untie-embeddings-and-output-weights \\\n"
         "  --group-query-attention --num-query-groups 8 --vocab-size 32000 \\\n"
         "  --num-experts 8 --moe-router-topk 2 --moe-grouped-gemm \\\n"
         "  --moe-token-dispatcher-type alltoall --micro-batch-size 1 --global-batch-size 256 \\\n"
         "  --bf16 " +
         extra + "\n";
}

// NVIDIA's own Megatron-FSDP example, verbatim: --use-megatron-fsdp
// --data-parallel-sharding-strategy optim_grads_params (Megatron-LM d98e8a64
// docs/user-guide/parallelism-guide.md: "optim_grads_params - Shard parameters + gradients +
// optimizer (ZeRO-3)") beside --use-distributed-optimizer. Before: both FSDP flags "read but not
// used" and the job a ZeRO-1 distributed optimizer (an fp32 gradient buffer of 8.03e9 x 4 B =
// 32.12 GB per GPU instead of a 1/8 shard, 4.02 GB).
TEST(MegatronFsdpImport, NvidiasFsdpExampleIsZero3) {
  const std::string file = ImportGolden("megatron_fsdp_llama3_8b/train_llama3_8b_fsdp_h100_fp8.sh");
  auto text = ReadFile(file);
  ASSERT_TRUE(text.ok());
  auto r = ImportJob(*text, file, H100());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "sharding.mode"), "zero3");
  EXPECT_EQ(r->job.sharding.mode, ShardingMode::kZero3);
  EXPECT_NE(SourceOf(*r, "sharding.mode").find("optim_grads_params"), std::string::npos)
      << SourceOf(*r, "sharding.mode");
  // The FSDP strategy carries the optimizer's sharding; --use-distributed-optimizer is read.
  EXPECT_EQ(Field(*r, "optimizer.distributed"), "(not set)");
  EXPECT_EQ(r->yaml.find("use_megatron_fsdp = true"), std::string::npos) << r->yaml;
  // m1: the script's --distributed-timeout-minutes 60 (line 209), not Megatron's default 10.
  EXPECT_EQ(r->yaml.find("distributed_timeout_minutes = 10"), std::string::npos) << r->yaml;
  EXPECT_NE(r->yaml.find("distributed_timeout_minutes = 60"), std::string::npos) << r->yaml;
}

// The strategies by name (megatron/training/arguments.py choices; the docs' ZeRO stages): optim
// shards the optimizer (ZeRO-1), optim_grads adds the gradients (ZeRO-2), no_shard is DDP; the
// strategy's default with --use-megatron-fsdp alone is optim_grads_params (ZeRO-3).
// --use-torch-fsdp2 is PyTorch's fully_shard over every layer: fsdp2.
TEST(MegatronFsdpImport, StrategiesAndTorchFsdp2) {
  const std::pair<const char*, const char*> cases[] = {
      {"--use-megatron-fsdp --data-parallel-sharding-strategy optim", "zero1"},
      {"--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads", "zero2"},
      {"--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params", "zero3"},
      {"--use-megatron-fsdp --data-parallel-sharding-strategy no_shard", "none"},
      {"--use-megatron-fsdp", "zero3"},
      {"--use-torch-fsdp2", "fsdp2"}};
  for (const auto& [flags, mode] : cases) {
    auto r = ImportJob(MixtralCommand(flags), "train.sh", H100());
    ASSERT_TRUE(r.ok()) << flags << ": " << r.error().Format();
    EXPECT_EQ(Field(*r, "sharding.mode"), mode) << flags;
  }
  // Without the FSDP flag the strategy does nothing (Megatron reads it for its FSDP only).
  auto plain = ImportJob(MixtralCommand("--data-parallel-sharding-strategy optim_grads_params"),
                         "train.sh", H100());
  ASSERT_TRUE(plain.ok()) << plain.error().Format();
  EXPECT_EQ(Field(*plain, "sharding.mode"), "(not set)");
  EXPECT_EQ(plain->job.sharding.mode, ShardingMode::kNone);
  auto bad =
      ImportJob(MixtralCommand("--use-megatron-fsdp --data-parallel-sharding-strategy optim_grad"),
                "train.sh", H100());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("optim_grad"), std::string::npos) << bad.error().Format();
}

// --moe-router-force-load-balancing: megatron-core d98e8a64 transformer_config.py "Force load
// balancing with random logits for MoE router ... only for benchmark"; router.py replaces the
// gate's logits with apply_random_logits, so every expert receives the mean: 1.00x. With
// --moe-expert-capacity-factor X --moe-pad-expert-input-to-capacity every expert computes
// exactly X x its mean (tokens above dropped, the rest padded up): X. A capacity without the
// padding only caps the busiest rank: left to the step's assumption, with a note. Before: all
// "read but not used", the step priced with the 1.15x default skew and then advised
// "--set moe.routing_imbalance=1" for a launch that already forces it.
TEST(MegatronMoeRoutingImport, ForcedBalanceAndPaddedCapacitySetTheImbalance) {
  struct Case {
    const char* flags;
    const char* imbalance;
  };
  const Case cases[] = {
      {"--expert-model-parallel-size 8 --moe-router-force-load-balancing", "1"},
      {"--expert-model-parallel-size 8 --moe-expert-capacity-factor 1.0 "
       "--moe-pad-expert-input-to-capacity",
       "1"},
      {"--expert-model-parallel-size 8 --moe-expert-capacity-factor 1.25 "
       "--moe-pad-expert-input-to-capacity",
       "1.25"},
      {"--expert-model-parallel-size 8 --moe-expert-capacity-factor 1.25", "(not set)"}};
  for (const Case& c : cases) {
    auto r = ImportJob(MixtralCommand(c.flags), "train.sh", H100());
    ASSERT_TRUE(r.ok()) << c.flags << ": " << r.error().Format();
    EXPECT_EQ(Field(*r, "moe.routing_imbalance"), c.imbalance) << c.flags;
    const bool stated = std::string(c.imbalance) != "(not set)";
    EXPECT_EQ(r->job.moe_routing_imbalance_given, stated) << c.flags;
    if (stated) {
      EXPECT_DOUBLE_EQ(r->job.moe_routing_imbalance, std::stod(c.imbalance)) << c.flags;
    }
  }
  auto capped = ImportJob(MixtralCommand("--moe-expert-capacity-factor 1.25"), "train.sh", H100());
  ASSERT_TRUE(capped.ok());
  EXPECT_NE(capped->yaml.find("without --moe-pad-expert-input-to-capacity"), std::string::npos)
      << capped->yaml;
}

// m2: Megatron asserts at start that the layers divide by PP ("Number of layers should be
// divisible by the pipeline-model-parallel size", megatron/training/arguments.py) unless an
// uneven split is given. 32 layers over PP 3: refused at import, naming both flags; PP 4 (8 a
// stage) imports; PP 3 with --decoder-last-pipeline-num-layers is Megatron's uneven split.
TEST(MegatronPipelineImport, LayersThatDoNotDivideArePipelineRefused) {
  auto bad = ImportJob(MixtralCommand("--pipeline-model-parallel-size 3"), "train.sh", H100());
  ASSERT_FALSE(bad.ok());
  const std::string message = bad.error().Format();
  EXPECT_NE(message.find("32 layers"), std::string::npos) << message;
  EXPECT_NE(message.find("--num-layers"), std::string::npos) << message;
  EXPECT_NE(message.find("--pipeline-model-parallel-size"), std::string::npos) << message;
  auto even = ImportJob(MixtralCommand("--pipeline-model-parallel-size 4"), "train.sh", H100());
  EXPECT_TRUE(even.ok()) << even.error().Format();
}

// m5: --window-size 127,0 --window-attn-skip-freq 2 (NVIDIA/Megatron-LM d98e8a64
// examples/gptoss/02_train.sh). megatron-core's is_layer_window_attention (1-based layer
// numbers): layer n slides unless n % 2 == 0, so layers 1, 3, 5, ... (indices 0, 2, 4, ...) are
// sliding and 2, 4, ... full; get_sliding_window_causal_mask keeps keys i-127 .. i, 128 tokens:
// strata's sliding_window 128. Before: both flags "read but not used", every layer full.
TEST(MegatronWindowImport, WindowSizeAndSkipFrequencyMakeSlidingLayers) {
  auto r = ImportJob(MixtralCommand("--window-size 127,0 --window-attn-skip-freq 2"), "train.sh",
                     H100());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  auto model = ParseMegatronModel(nlohmann::json::parse(r->model_json), "model.json");
  ASSERT_TRUE(model.ok()) << model.error().Format();
  ASSERT_EQ(model->layers.size(), 32u);
  EXPECT_EQ(model->attention.sliding_window, 128);
  for (size_t i = 0; i < model->layers.size(); ++i) {
    EXPECT_EQ(model->layers[i].mixer,
              i % 2 == 0 ? MixerKind::kSlidingAttention : MixerKind::kFullAttention)
        << "layer index " << i;
  }
  // A per-layer list is not read: every layer stays full attention, and the import says so.
  auto list = ImportJob(MixtralCommand("--window-size 127,0 --window-attn-skip-freq [1,0]"),
                        "train.sh", H100());
  ASSERT_TRUE(list.ok()) << list.error().Format();
  auto full = ParseMegatronModel(nlohmann::json::parse(list->model_json), "model.json");
  ASSERT_TRUE(full.ok()) << full.error().Format();
  EXPECT_EQ(full->attention.sliding_window, 0);
  EXPECT_NE(list->yaml.find("the sliding-window layers are not modelled"), std::string::npos)
      << list->yaml;
}

// m2: NVIDIA/Megatron-LM d98e8a64 examples/gptoss/02_train.sh parses its own arguments with
// `while [[ $# -gt 0 ]]; do case $1 in ... --data) DATA_ARG="$2"; shift 2;; ... esac; done`.
// strata reads a script as run without arguments ($# is 0), so bash runs the loop zero times
// and DATA_ARG keeps its "MOCK"; before, every arm was read and DATA_ARG became "$2".
TEST(ShellArgumentLoop, TheArgumentLoopRunsZeroTimesWithoutArguments) {
  const char* script =
      "DATA_ARG=\"MOCK\"\n"
      "while [[ $# -gt 0 ]]; do\n"
      "    case $1 in\n"
      "        --data)\n"
      "            DATA_ARG=\"$2\"\n"
      "            shift 2\n"
      "            ;;\n"
      "    esac\n"
      "done\n"
      "python pretrain_gpt.py --data-path $DATA_ARG\n";
  auto cmds = ParseShellScript(script, "train.sh");
  ASSERT_TRUE(cmds.ok()) << cmds.error().Format();
  const ShellCommandLine& last = cmds->back();
  ASSERT_GE(last.words.size(), 4u);
  EXPECT_EQ(last.words[0].text, "python");
  EXPECT_EQ(last.words[3].text, "MOCK");
  for (const ShellCommandLine& c : *cmds) {
    for (const ShellWord& w : c.words) EXPECT_NE(w.text, "shift") << "a loop arm was read";
  }
}

}  // namespace
}  // namespace strata

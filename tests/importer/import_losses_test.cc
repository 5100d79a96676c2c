// What the importer used to lose, each on a real launch input (tests/golden/cli_import/
// SOURCES.md): bash array appends, FP8 and overlap flags, sequence parallelism at TP 1, ETP on
// dense models, gradient dtypes, torchtitan's older TOML layout, verl's TransformerConfig
// overrides, and node counts only the scheduler knows. Each expected value is read off the input
// by hand, with the framework rule that produces it named beside it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "importer/import_test_support.h"
#include "strata/core/file_io.h"
#include "strata/importer/import_job.h"
#include "strata/importer/input_readers.h"
#include "strata/importer/shell_script.h"
#include "strata/job/resolved_job.h"
#include "strata/model/megatron_model.h"

namespace strata::import_losses_test {
namespace {

using testing::ImportGolden;
using testing::SourceOf;

ImportReport Import(const std::string& file, const ImportOptions& options) {
  auto report = ImportJobFile(ImportGolden(file), options);
  EXPECT_TRUE(report.ok()) << file << ": " << (report.ok() ? "" : report.error().Format());
  return report.ok() ? *report : ImportReport{};
}

ImportOptions Gpu(const char* gpu) {
  ImportOptions o;
  o.gpu = gpu;
  return o;
}

// The imported job is one every view reads (memory, step, map): it resolves with its model.
void ExpectResolves(const ImportReport& r) {
  ASSERT_FALSE(r.model_json.empty());
  auto model = ParseMegatronModel(nlohmann::json::parse(r.model_json), "model.json");
  ASSERT_TRUE(model.ok()) << model.error().Format();
  auto resolved = ResolveJobWithModel(r.job, *model);
  EXPECT_TRUE(resolved.ok()) << resolved.error().Format();
}

std::string Words(const ShellCommandLine& cmd) {
  std::string out;
  for (const ShellWord& w : cmd.words) out += w.text + "|";
  return out;
}

TEST(ShellArraysTest, AppendsAndSelfReferencesAsBashExpandsThem) {
  struct Case {
    const char* name;
    const char* script;
    const char* expected;  // the last command's words, '|' after each
  };
  // Each expected line is what `printf '%s|'` prints for the same script in bash.
  const Case cases[] = {
      {"+= appends", "A=(--x 1)\nA+=(--y)\nrun ${A[@]}\n", "run|--x|1|--y|"},
      {"older spelling: A=(\"${A[@]}\" ...)", "A=(--x)\nA=(\"${A[@]}\" --z 2)\nrun \"${A[@]}\"\n",
       "run|--x|--z|2|"},
      {"append of another array", "B=(--b1 --b2)\nA=(--a)\nA+=(\"${B[@]}\")\nrun ${A[@]}\n",
       "run|--a|--b1|--b2|"},
      // Unquoted, an element with a blank is split; quoted, it stays one word.
      {"unquoted splits elements", "A=()\nA+=(\"--fp8-format hybrid\")\nrun ${A[@]}\n",
       "run|--fp8-format|hybrid|"},
      {"quoted keeps elements", "A=(\"--fp8-format hybrid\")\nrun \"${A[@]}\"\n",
       "run|--fp8-format hybrid|"},
      {"= after += replaces", "A=(--x)\nA+=(--y)\nA=(--z)\nrun ${A[@]}\n", "run|--z|"},
      // An unquoted variable inside NAME=( ... ) is split into one element per word, so the
      // quoted "${A[@]}" still passes each flag alone; a quoted one stays one element.
      {"unquoted variable in an array splits",
       "G=\"--num-layers 32 --bf16\"\nA=($G --tp 2)\nrun \"${A[@]}\"\n",
       "run|--num-layers|32|--bf16|--tp|2|"},
      {"quoted variable in an array stays whole", "G=\"--x 1\"\nA=(\"$G\")\nrun \"${A[@]}\"\n",
       "run|--x 1|"},
  };
  for (const Case& c : cases) {
    auto cmds = ParseShellScript(c.script, "s.sh");
    ASSERT_TRUE(cmds.ok()) << c.name << ": " << cmds.error().Format();
    ASSERT_FALSE(cmds->empty()) << c.name;
    EXPECT_EQ(Words(cmds->back()), c.expected) << c.name;
  }
}

TEST(ShellIfTest, TestsJoinedByAndOrRunAsBashRunsThem) {
  // Each expected line is what bash prints for the same script with
  // run() { printf '%s|' run "$@"; }. Before, an `if` whose first test ended with && or || was
  // never resolved and both branches were read (the Snellius script's
  // `if [ $PP -gt 1 ] && [ $N -gt 1 ]` added --num-layers-per-virtual-pipeline-stage at PP 1).
  struct Case {
    const char* script;
    const char* expected;
  };
  const Case cases[] = {
      {"P=1; N=1; A=(--a); if [ $P -gt 1 ] && [ $N -gt 1 ]; then A+=(--vpp); fi; run \"${A[@]}\"\n",
       "run|--a|"},
      {"P=2; N=2; A=(--a); if [ $P -gt 1 ] && [ $N -gt 1 ]; then A+=(--vpp); fi; run \"${A[@]}\"\n",
       "run|--a|--vpp|"},
      {"P=2; N=1; A=(--a); if [ $P -gt 1 ] || [ $N -gt 1 ]; then A+=(--or); fi; run \"${A[@]}\"\n",
       "run|--a|--or|"},
      {"X=b; if [ $X = a ]; then Y=1; elif [ $X = b ] && [ 1 -eq 1 ]; then Y=2; else Y=3; fi; "
       "run $Y\n",
       "run|2|"},
      {"X=b; if [ $X = a ]; then Y=1; elif [ $X = b ] && [ 1 -eq 2 ]; then Y=2; else Y=3; fi; "
       "run $Y\n",
       "run|3|"},
  };
  for (const Case& c : cases) {
    auto cmds = ParseShellScript(c.script, "s.sh");
    ASSERT_TRUE(cmds.ok()) << c.script << ": " << cmds.error().Format();
    ASSERT_FALSE(cmds->empty()) << c.script;
    EXPECT_EQ(Words(cmds->back()), c.expected) << c.script;
  }
}

TEST(ShellArraysTest, SchedulerVariablesAreNotReplacedByTheirFallback) {
  // ${SLURM_NNODES:-1}: Slurm sets it on every real run, so the fallback 1 is not the job's.
  // A user variable's fallback is still the script's own default.
  auto cmds = ParseShellScript("N=${SLURM_NNODES:-1}\nM=${MY_NODES:-2}\nrun $N $M\n", "s.sh");
  ASSERT_TRUE(cmds.ok()) << cmds.error().Format();
  EXPECT_EQ(Words(cmds->back()), "run|${SLURM_NNODES:-1}|2|");
}

TEST(ImportLossesTest, MegatronArrayAppendsCarryFp8OverlapsAndTheDistributedOptimizer) {
  // NVIDIA/Megatron-LM examples/llama/train_llama3_8b_h100_fp8.sh.
  const ImportReport r =
      Import("megatron_llama3_8b_fp8/train_llama3_8b_h100_fp8.sh", Gpu("H100 SXM"));
  const JobSpec& j = r.job;
  // TRAINING_ARGS+=("${DDP_ARGS[@]}"): --use-distributed-optimizer --overlap-grad-reduce
  // --overlap-param-gather, lines 125-127.
  EXPECT_TRUE(j.optimizer.distributed);
  EXPECT_TRUE(j.overlap.grad_reduce);
  EXPECT_TRUE(j.overlap.param_gather);
  EXPECT_EQ(SourceOf(r, "overlap.grad_reduce"), "--overlap-grad-reduce (line 126)");
  // DTYPE_ARGS+=("--fp8-format hybrid" ...) expanded unquoted: --fp8-format hybrid with no
  // --fp8-recipe, Megatron's default recipe 'delayed'; history 1024; --fp8-param-gather.
  EXPECT_EQ(j.fp8.recipe, Fp8Recipe::kDelayed);
  EXPECT_EQ(j.fp8.amax_history, 1024);
  EXPECT_TRUE(j.fp8.param_gather);
  EXPECT_EQ(SourceOf(r, "fp8.recipe"),
            "--fp8-format (line 107) hybrid (Megatron's fp8_recipe defaults to delayed)");
  // --sequence-parallel with TP_SIZE=1: Megatron's validate_args turns it off.
  EXPECT_EQ(j.layout.tp, 1);
  EXPECT_FALSE(j.layout.sequence_parallel);
  // --bf16 --grad-reduce-in-bf16.
  EXPECT_EQ(j.grad_dtype, DType::kBf16);
  // 8 GPUs / (TP 1 x PP 1 x CP 1) = DP 8; 128 / (1 x 8) = 16 micro batches.
  EXPECT_EQ(j.layout.dp, 8);
  EXPECT_EQ(j.global_batch, 128);
  // "--vocab-size 128256" (one array element, split when expanded) reaches the model.
  EXPECT_NE(r.model_json.find("\"vocab_size\": 128256"), std::string::npos) << r.model_json;
  ExpectResolves(r);
}

TEST(ImportLossesTest, LayersPerVirtualStageGiveTheVirtualPipeline) {
  // Megatron's validate_args: VPP = layers / PP / --num-layers-per-virtual-pipeline-stage, the
  // embedding and the loss counted as layers where the split accounts for them. Before, the flag
  // was read and left unused: VPP 1.
  struct Case {
    const char* extra;
    const char* vpp;  // "" where Megatron refuses it
  };
  const Case cases[] = {
      {"--num-layers-per-virtual-pipeline-stage 1", "8"},  // 32 / 4 / 1
      {"--num-layers-per-virtual-pipeline-stage 2", "4"},  // 32 / 4 / 2
      {"--num-virtual-stages-per-pipeline-rank 2", "2"},
      // 32 + 2 = 34 layers do not split over 4 stages.
      {"--num-layers-per-virtual-pipeline-stage 1 --account-for-embedding-in-pipeline-split "
       "--account-for-loss-in-pipeline-split",
       ""},
      {"--num-layers-per-virtual-pipeline-stage 3", ""},  // 8 layers a stage, not 3s
      {"--num-layers-per-virtual-pipeline-stage 1 --decoder-first-pipeline-num-layers 6", ""},
  };
  for (const Case& c : cases) {
    const std::string script =
        std::string(
            "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size "
            "1024 --num-attention-heads 8 --seq-length 1024 --max-position-embeddings "
            "1024 --micro-batch-size 1 --global-batch-size 16 --vocab-size 32000 "
            "--pipeline-model-parallel-size 4 ") +
        c.extra + "\n";
    const std::string dir = ::testing::TempDir() + "strata_vpp";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/run.sh") << script;
    ImportOptions o;
    o.gpu = "H100 SXM";
    auto r = ImportJobFile(dir + "/run.sh", o);
    if (std::string(c.vpp).empty()) {
      EXPECT_FALSE(r.ok()) << c.extra;
      continue;
    }
    ASSERT_TRUE(r.ok()) << c.extra << ": " << r.error().Format();
    std::string vpp = "(not set)";
    for (const auto& f : r->fields) {
      if (f.key == "parallel.vpp") vpp = f.value;
    }
    EXPECT_EQ(vpp, c.vpp) << c.extra;
  }
}

TEST(ImportLossesTest, DenseModelsGetNoExpertTensorParallelism) {
  // NVIDIA/Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh: TP 2, a dense GPT. ETP
  // was written as TP (2) and every view refused the job ("ETP 2 given but ... no experts").
  const ImportReport r =
      Import("megatron_gpt3_script/train_gpt3_175b_distributed.sh", Gpu("H100 SXM"));
  EXPECT_EQ(r.job.layout.tp, 2);
  EXPECT_EQ(r.job.layout.etp, 1);
  EXPECT_EQ(SourceOf(r, "parallel.etp"),
            "default: the model has no experts: expert_tensor_parallel_size does not apply");
  ExpectResolves(r);
  // --fp16 without --accumulate-allreduce-grads-in-fp32: Megatron's gradient buffer is in the
  // parameters' dtype (arguments.py forces fp32 accumulation for bf16 only).
  EXPECT_EQ(r.job.grad_dtype, DType::kFp16);
}

TEST(ImportLossesTest, DeepSpeedZeroKeepsGradientsInTheModelDtype) {
  // TigerBot's train_sft.sh (--bf16 True) with ds_config_zero3.json (bf16 "auto", stage 3):
  // DeepSpeed's grad_accum_dtype defaults to the model dtype under ZeRO
  // (engine.get_data_types), so the gradients are bf16, not fp32.
  ImportOptions o = Gpu("A100 80GB");
  o.model = "llama-3.1-8b";
  o.overrides = {"sequence.max_tokens=2048"};
  const ImportReport r = Import("hf_deepspeed_zero3_offload/train_sft.sh", o);
  EXPECT_EQ(r.job.param_dtype, DType::kBf16);
  EXPECT_EQ(r.job.grad_dtype, DType::kBf16);
}

TEST(ImportLossesTest, OlderTorchtitanTomlKeepsItsTensorParallelDegree) {
  // pytorch/torchtitan train_configs/llama3_70b.toml (2024): tensor_parallel_degree = 8 under
  // [training] (line 36); 64 GPUs / TP 8 = DP 8; batch_size 8 per rank x DP 8 = 64.
  ImportOptions o = Gpu("A100 80GB");
  o.nodes = 8;
  o.gpus_per_node = 8;
  const ImportReport r = Import("torchtitan_llama3_70b_2024/llama3_70b.toml", o);
  EXPECT_EQ(r.job.model, "llama-3.1-70b");
  EXPECT_EQ(r.job.layout.tp, 8);
  EXPECT_EQ(SourceOf(r, "parallel.tp"), "llama3_70b.toml:36: training.tensor_parallel_degree");
  EXPECT_EQ(r.job.layout.dp, 8);
  EXPECT_EQ(r.job.global_batch, 64);
  EXPECT_TRUE(r.job.layout.sequence_parallel);    // torchtitan's TP plan, TP > 1
  EXPECT_EQ(r.job.fp8.recipe, Fp8Recipe::kNone);  // [float8] enable_float8_linear = false
}

TEST(ImportLossesTest, VerlTransformerConfigOverridesGiveTheRecompute) {
  // volcengine/verl run_deepseek671b_math_megatron_80gb.sh: no enable_gradient_checkpointing,
  // but override_transformer_config.recompute_granularity=full, method uniform, 1 layer
  // (lines 107-109), which megatron-core applies.
  ImportOptions o = Gpu("H100 SXM");
  o.model = "deepseek-v3";
  const ImportReport r =
      Import("verl_dsv3_recompute_override/run_deepseek671b_math_megatron_80gb.sh", o);
  EXPECT_EQ(r.job.recompute.granularity, RecomputeGranularity::kFull);
  EXPECT_EQ(r.job.recompute.method, RecomputeMethod::kUniform);
  EXPECT_EQ(r.job.recompute.num_layers, 1);
  EXPECT_EQ(SourceOf(r, "recompute.granularity"),
            "actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity "
            "(line 108)");
}

TEST(ImportLossesTest, VerlRecomputeModulesOverrideIsRead) {
  // ISEEKYAN/verl_megatron_practice DAPO_MOE30B/17.megatron_4node_ep8_deepep.sh (line 136) runs
  // selective recompute with override_transformer_config.recompute_modules=["core_attn",
  // "moe_act","layernorm","mlp","moe"]; the importer dropped the list, so the job recomputed
  // megatron-core's default, core_attn alone. The verl DeepSeek-V3 script with its recompute
  // lines turned into that form: each module is read, with its line.
  auto text =
      ReadFile(ImportGolden("verl_dsv3_recompute_override/run_deepseek671b_math_megatron_80gb.sh"));
  ASSERT_TRUE(text.ok());
  std::string script = *text;
  const std::string full = "override_transformer_config.recompute_granularity=full";
  ASSERT_NE(script.find(full), std::string::npos);
  script.replace(script.find(full), full.size(),
                 "override_transformer_config.recompute_granularity=selective \\\n"
                 "    +actor_rollout_ref.actor.megatron.override_transformer_config."
                 "recompute_modules=[\\\"core_attn\\\",\\\"moe_act\\\",\\\"moe\\\"]");
  ImportOptions o = Gpu("H100 SXM");
  o.model = "deepseek-v3";
  auto r = ImportJob(script, "run.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.recompute.granularity, RecomputeGranularity::kSelective);
  EXPECT_TRUE(r->job.recompute.modules.core_attn);
  EXPECT_TRUE(r->job.recompute.modules.moe_act);
  EXPECT_TRUE(r->job.recompute.modules.moe);
  EXPECT_FALSE(r->job.recompute.modules.mlp);
  EXPECT_FALSE(r->job.recompute.modules.layernorm);
  // A name megatron-core does not know is refused, naming it and its line.
  std::string typo = script;
  typo.replace(typo.find("moe_act"), 7, "moe_actt");
  auto bad = ImportJob(typo, "run.sh", o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("recompute module 'moe_actt'"), std::string::npos)
      << bad.error().Format();
  EXPECT_NE(bad.error().Format().find("moe_act"), std::string::npos);
}

TEST(ImportLossesTest, MegatronRecomputeModulesAreRead) {
  // megatron-core's --recompute-modules (nargs '*'; ms-swift's --recompute_modules): selective
  // recompute of the named modules instead of the default core_attn. Before, dropped.
  ImportOptions two = Gpu("H100");
  two.gpus_per_node = 2;
  auto sft = [&](const std::string& recompute) {
    return ImportJob(
        "megatron sft --model Qwen/Qwen3-32B --tensor_model_parallel_size 2 --sequence_parallel "
        "true --micro_batch_size 1 --global_batch_size 8 --max_length 2048 " +
            recompute + "\n",
        "train.sh", two);
  };
  auto r = sft("--recompute_granularity selective --recompute_modules mlp layernorm");
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.recompute.granularity, RecomputeGranularity::kSelective);
  EXPECT_FALSE(r->job.recompute.modules.core_attn);  // the list replaces the default
  EXPECT_TRUE(r->job.recompute.modules.mlp);
  EXPECT_TRUE(r->job.recompute.modules.layernorm);
  // ms-swift's default granularity is selective: the list applies to it too.
  auto swift_default = sft("--recompute_modules core_attn moe_act");
  ASSERT_TRUE(swift_default.ok()) << swift_default.error().Format();
  EXPECT_TRUE(swift_default->job.recompute.modules.moe_act);
}

TEST(ImportLossesTest, ASlurmNodeCountIsAskedFor) {
  // The GPT-3 example with NUM_NODES taken from Slurm, as multi-node copies of it do.
  auto text = ReadFile(ImportGolden("megatron_gpt3_script/train_gpt3_175b_distributed.sh"));
  ASSERT_TRUE(text.ok());
  std::string script = *text;
  const std::string from = "NUM_NODES=1\n";
  ASSERT_NE(script.find(from), std::string::npos);
  script.replace(script.find(from), from.size(), "NUM_NODES=${SLURM_NNODES:-1}\n");
  auto r = ImportJob(script, "slurm.sh", Gpu("H100 SXM"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Format().find("cluster.nodes is '${SLURM_NNODES:-1}'"), std::string::npos)
      << r.error().Format();
  EXPECT_NE(r.error().Format().find("--nodes"), std::string::npos) << r.error().Format();
  // Given, it imports.
  ImportOptions o = Gpu("H100 SXM");
  o.nodes = 4;
  auto given = ImportJob(script, "slurm.sh", o);
  ASSERT_TRUE(given.ok()) << given.error().Format();
  EXPECT_EQ(given->job.cluster.nodes, 4);
}

TEST(ImportLossesTest, ADuplicatedYamlKeyIsAnErrorNamingBothLines) {
  // verl's ppo_trainer.yaml with trainer.nnodes written twice: yaml-cpp kept the first value.
  auto r = ReadYamlSettings("trainer:\n  nnodes: 1\n  n_gpus_per_node: 8\n  nnodes: 4\n", "t.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Format(),
            "t.yaml:4: key 'nnodes' is written twice in one mapping, on line 2 and line 4; YAML "
            "readers keep only one of the values\n  hint: remove one of the two 'nnodes' lines");
}

}  // namespace
}  // namespace strata::import_losses_test

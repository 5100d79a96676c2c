// Accelerate configs, launch bundles (a script with the files it names, a sourced config, a
// Slurm header) on real files (tests/golden/cli_import/SOURCES.md). Each expected value is read
// off the input by hand, with the Accelerate, DeepSpeed or Slurm rule that gives it beside it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "importer/import_test_support.h"
#include "strata/importer/import_job.h"
#include "strata/importer/shell_script.h"

namespace strata::accelerate_bundle_test {
namespace {

using testing::CaseInput;
using testing::Field;
using testing::ImportGolden;
using testing::ImportInput;
using testing::SourceOf;

ImportOptions Options(const char* gpu, std::vector<std::string> files = {}) {
  ImportOptions o;
  o.gpu = gpu;
  o.model = "llama-3.1-8b";
  o.overrides = {"sequence.max_tokens=2048"};
  for (auto& f : files) o.files.push_back(ImportGolden(f));
  return o;
}

TEST(AccelerateImportTest, ConfigsGiveClusterPrecisionAndSharding) {
  struct Case {
    const char* file;
    std::vector<std::string> bundle;
    std::vector<std::pair<const char*, const char*>> expected;
  };
  const Case cases[] = {
      // TRL's fsdp2.yaml: fsdp_version 2 -> FSDP2; fsdp_reshard_after_forward true; 8
      // processes on num_machines 1; mixed_precision bf16, which Accelerate's FSDP plugin turns
      // into MixedPrecision(param_dtype=bf16, reduce_dtype=bf16): gradients reduced in bf16.
      {"accelerate_trl_fsdp2/fsdp2.yaml",
       {},
       {{"sharding.mode", "fsdp2"},
        {"sharding.reshard_after_forward", "true"},
        {"cluster.gpus_per_node", "8"},
        {"cluster.nodes", "1"},
        {"precision.params", "bf16"},
        {"precision.grads", "bf16"},
        {"optimizer.distributed", "true"},
        {"recompute.granularity", "none"},
        {"parallel.dp", "8"}}},
      // alignment-handbook's fsdp.yaml: FSDP1 FULL_SHARD shards weights, gradients and
      // optimizer states with one all-gather per wrapped unit per pass (FSDP2's per-unit model,
      // not DeepSpeed ZeRO-3's per-parameter hooks) and reshards after forward; bf16 reduce as
      // above.
      {"accelerate_handbook_fsdp1/fsdp.yaml",
       {},
       {{"sharding.mode", "fsdp2"},
        {"sharding.reshard_after_forward", "true"},
        {"cluster.gpus_per_node", "8"},
        {"precision.params", "bf16"},
        {"precision.grads", "bf16"}}},
      // TRL's deepspeed_zero3.yaml: zero_stage 3, mixed_precision fp16; DeepSpeed keeps the
      // gradients in the model dtype under ZeRO (grad_accum_dtype default); offload none.
      {"accelerate_trl_zero3/deepspeed_zero3.yaml",
       {},
       {{"sharding.mode", "zero3"},
        {"precision.params", "fp16"},
        {"precision.grads", "fp16"},
        {"cluster.gpus_per_node", "8"},
        {"sharding.offload_optimizer", "(not set)"}}},
      // Accelerate's deepspeed.yaml template: its deepspeed_config_file (relative to the
      // YAML's folder) gives ZeRO stage 1 and fp16.enabled true; num_processes 2.
      {"accelerate_template_ds_file/config_yaml_templates/deepspeed.yaml",
       {},
       {{"sharding.mode", "zero1"},
        {"precision.params", "fp16"},
        {"cluster.gpus_per_node", "2"},
        {"optimizer.distributed", "true"}}},
      // PersonaMath's run_zero3.sh with the YAML it names given beside it: --num_processes 4
      // (the flag, equal to the YAML's), ZeRO-3 with optimizer and parameters on the CPU,
      // fp16; global batch = per-device 2 x accumulation 16 x 4 GPUs = 128.
      {"accelerate_bundle_zero3_offload/run_zero3.sh",
       {"accelerate_bundle_zero3_offload/accelerator_config_zero3.yaml"},
       {{"sharding.mode", "zero3"},
        {"sharding.offload_optimizer", "cpu"},
        {"sharding.offload_param", "cpu"},
        {"precision.params", "fp16"},
        {"cluster.gpus_per_node", "4"},
        {"cluster.nodes", "1"},
        {"batch.micro_batch", "2"},
        {"batch.global_batch", "128"}}},
  };
  for (const Case& c : cases) {
    auto r = ImportJobFile(ImportGolden(c.file), Options("A100 80GB", c.bundle));
    ASSERT_TRUE(r.ok()) << c.file << ": " << r.error().Format();
    for (const auto& [key, value] : c.expected) {
      EXPECT_EQ(Field(*r, key), value) << c.file << " " << key << " from " << SourceOf(*r, key);
    }
  }
}

TEST(AccelerateImportTest, SourcesNameTheFileAndLine) {
  auto r = ImportJobFile(ImportGolden("accelerate_bundle_zero3_offload/run_zero3.sh"),
                         Options("A100 80GB", {"accelerate_bundle_zero3_offload/"
                                               "accelerator_config_zero3.yaml"}));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  // The flag on the script's line 9 wins over the YAML's num_processes (line 18).
  EXPECT_EQ(SourceOf(*r, "cluster.gpus_per_node"), "--num_processes (line 9)");
  EXPECT_EQ(SourceOf(*r, "sharding.offload_param"),
            "accelerator_config_zero3.yaml:6: deepspeed_config.offload_param_device");
  EXPECT_EQ(r->format, "accelerate launch (train.py, HF Trainer)");
}

TEST(AccelerateImportTest, BadInputIsAnErrorNamingTheFileAndValue) {
  struct Case {
    const char* file;
    std::vector<std::string> bundle;
    const char* expected;  // in the error's text
  };
  const Case cases[] = {
      // The script names /accelerator_config_zero3.yaml (line 7, used on line 9): not there.
      {"accelerate_missing_config/run_zero3.sh",
       {},
       "run_zero3.sh:9: accelerate launch --config_file names "
       "'/accelerator_config_zero3.yaml', which is not there"},
      {"accelerate_unknown_strategy/fsdp.yaml",
       {},
       "fsdp_sharding_strategy 'FULL_SHARDED' (fsdp.yaml:12: fsdp_config.fsdp_sharding_strategy)"},
      {"accelerate_bad_distributed_type/deepspeed_zero3.yaml",
       {},
       "distributed_type 'MEGATRON_LM'"},
      // A second file the input never names.
      {"bundle_unused_file/deepspeed_zero3.yaml",
       {"bundle_unused_file/fsdp.yaml"},
       "which names no file called fsdp.yaml"},
  };
  for (const Case& c : cases) {
    const CaseInput input = ImportInput(c.file);
    ASSERT_NE(input.path(), "") << c.file;
    auto r = ImportJobFile(input.path(), Options("A100 80GB", c.bundle));
    ASSERT_FALSE(r.ok()) << c.file;
    EXPECT_NE(r.error().Format().find(c.expected), std::string::npos)
        << c.file << ": " << r.error().Format();
  }
}

TEST(BundleImportTest, SourcedConfigAndSlurmHeaderSayWhereValuesCameFrom) {
  // The Megatron-LM example with its cluster lines moved to CONFIG.sh: the same job as the
  // script alone (8 GPUs, 1 node), each size traced to CONFIG.sh's line.
  ImportOptions o;
  o.gpu = "H100 SXM";
  const CaseInput sourced_input =
      ImportInput("megatron_sourced_config/train_gpt3_175b_distributed.sh");
  auto sourced = ImportJobFile(sourced_input.path(), o);
  ASSERT_TRUE(sourced.ok()) << sourced.error().Format();
  EXPECT_EQ(Field(*sourced, "cluster.gpus_per_node"), "8");
  EXPECT_EQ(Field(*sourced, "cluster.nodes"), "1");
  EXPECT_NE(SourceOf(*sourced, "cluster.gpus_per_node").find("$GPUS_PER_NODE from CONFIG.sh:2"),
            std::string::npos)
      << SourceOf(*sourced, "cluster.gpus_per_node");
  const CaseInput missing_input =
      ImportInput("megatron_sourced_missing/train_gpt3_175b_distributed.sh");
  auto missing = ImportJobFile(missing_input.path(), o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().Format().find("train_gpt3_175b_distributed.sh:4: source names "
                                          "'./CONFIG.sh', which is not there"),
            std::string::npos)
      << missing.error().Format();

  // torchtitan's multinode_trainer.slurm edited to launch `--nnodes $SLURM_NNODES
  // --nproc_per_node $SLURM_GPUS_PER_TASK`: the header gives 4 nodes (#SBATCH --nodes=4) and
  // 8 GPUs per node (--gpus-per-task=8 x (--ntasks=4 / --nodes=4) tasks per node).
  ImportOptions slurm;
  slurm.gpu = "A100 80GB";
  slurm.files = {ImportGolden("slurm_torchtitan_nodes_from_header/llama3_8b.toml")};
  const CaseInput header_input =
      ImportInput("slurm_torchtitan_nodes_from_header/multinode_trainer.slurm");
  auto header = ImportJobFile(header_input.path(), slurm);
  ASSERT_TRUE(header.ok()) << header.error().Format();
  EXPECT_EQ(Field(*header, "cluster.nodes"), "4");
  EXPECT_EQ(Field(*header, "cluster.gpus_per_node"), "8");
  EXPECT_EQ(SourceOf(*header, "cluster.nodes"), "multinode_trainer.slurm:17: #SBATCH --nodes=4");
}

TEST(ShellSourceTest, SourcedAssignmentsAndTheirOrigins) {
  const std::string script = "source cluster.sh\ntorchrun --nnodes $NNODES train.py\n";
  const ShellSourceReader reader = [](const std::string& path, const std::string&, int,
                                      std::string_view) -> Result<std::optional<ShellSource>> {
    if (path != "cluster.sh") return std::optional<ShellSource>();
    return std::optional<ShellSource>(ShellSource{"# nodes\nNNODES=2\n", "dir/cluster.sh"});
  };
  auto commands = ParseShellScript(script, "run.sh", reader);
  ASSERT_TRUE(commands.ok()) << commands.error().Format();
  ASSERT_EQ(commands->size(), 1u);
  const ShellCommandLine& cmd = commands->front();
  ASSERT_GE(cmd.words.size(), 3u);
  EXPECT_EQ(cmd.words[2].text, "2");
  EXPECT_EQ(cmd.words[2].origin, "$NNODES from cluster.sh:2");
  EXPECT_EQ(cmd.env_origin.at("NNODES"), "cluster.sh:2");
  // Without a reader the line is an ordinary command and the variable stays unresolved.
  auto plain = ParseShellScript(script, "run.sh");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->back().words[2].text, "$NNODES");
}

TEST(ShellSourceTest, EveryPartOfAJoinedValueKeepsItsOwnPlace) {
  // ALL joins a sourced file's two variables, one of the script's and its own text: each word it
  // splits into says where it was written (by hand from the script: GPT at cfg.sh:1, PAR at
  // cfg.sh:2, TRAIN at line 2, --ffn at line 3), not "line 4" for all of them.
  const std::string script =
      "source cfg.sh\nTRAIN=\"--mbs 1\"\nALL=\"$GPT $PAR $TRAIN --ffn 8\"\nrun $ALL\n";
  const ShellSourceReader reader = [](const std::string&, const std::string&, int,
                                      std::string_view) -> Result<std::optional<ShellSource>> {
    return std::optional<ShellSource>(
        ShellSource{"GPT=\"--layers 2\"\nPAR=\"--tp 4\"\n", "cfg.sh"});
  };
  auto commands = ParseShellScript(script, "run.sh", reader);
  ASSERT_TRUE(commands.ok()) << commands.error().Format();
  const ShellCommandLine& cmd = commands->back();
  std::string got;
  for (const ShellWord& w : cmd.words) got += w.text + "@" + w.origin + "|";
  EXPECT_EQ(got,
            "run@|--layers@cfg.sh:1|2@cfg.sh:1|--tp@cfg.sh:2|4@cfg.sh:2|--mbs@line 2|1@line 2|"
            "--ffn@line 3|8@line 3|");
}

TEST(ShellSourceTest, AMultiLineQuotedValueTracesEachLine) {
  // A value continued over lines inside double quotes (Megatron-LM's sc21 CONFIG.sh): each flag
  // is traced to its own line, the second flag to line 3.
  auto commands = ParseShellScript("P=\" --a 1 \\\n  --b 2 \\\n  --c 3\"\nrun $P\n", "run.sh");
  ASSERT_TRUE(commands.ok()) << commands.error().Format();
  std::string got;
  for (const ShellWord& w : commands->back().words) got += w.text + "@" + w.origin + "|";
  EXPECT_EQ(got, "run@|--a@line 1|1@line 1|--b@line 2|2@line 2|--c@line 3|3@line 3|");
}

TEST(BundleImportTest, Sc21ScriptsSubmittedBySbatchImportWithEachValuesFile) {
  // NVIDIA/Megatron-LM's sc21 scripts (tests/golden/cli_import/SOURCES.md): run_figure_14.sh
  // sets the sizes, sources CONFIG.sh (which joins them into MEGATRON_PARAMS) and SBATCH.sh,
  // whose `sbatch --nodes=${NNODES} ... SRUN.sh` submits the launch; SRUN.sh's header asks for 8
  // tasks a node and srun starts the program once per task. So 8 nodes x 8 = 64 ranks, TP1 PP2,
  // DP 64 / 2 = 32 (the script's own DP=$((64/PP))), micro batch 1, global 32, and Megatron
  // 2021's --activations-checkpoint-method uniform: full recompute. Before, CONFIG.sh's
  // `export MEGATRON_CODE_DIR=<megatron source code directory>` was read as `source code` and
  // the import failed; the sbatch'ed script was never read.
  ImportOptions o;
  o.gpu = "A100 80GB";
  o.files = {ImportGolden("megatron_sc21_sbatch_bundle/CONFIG.sh"),
             ImportGolden("megatron_sc21_sbatch_bundle/SBATCH.sh"),
             ImportGolden("megatron_sc21_sbatch_bundle/SRUN.sh")};
  auto r = ImportJobFile(ImportGolden("megatron_sc21_sbatch_bundle/run_figure_14.sh"), o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "cluster.nodes"), "8");
  EXPECT_EQ(Field(*r, "cluster.gpus_per_node"), "8");
  EXPECT_EQ(Field(*r, "parallel.tp"), "1");
  EXPECT_EQ(Field(*r, "parallel.pp"), "2");
  EXPECT_EQ(Field(*r, "parallel.dp"), "32");
  EXPECT_EQ(Field(*r, "batch.micro_batch"), "1");
  EXPECT_EQ(Field(*r, "batch.global_batch"), "32");
  EXPECT_EQ(Field(*r, "recompute.granularity"), "full");
  EXPECT_EQ(Field(*r, "recompute.method"), "uniform");
  EXPECT_EQ(Field(*r, "precision.params"), "fp16");
  // Each value says its file and line: the flag in CONFIG.sh (line 30 holds
  // --tensor-model-parallel-size), its value in the script (TP=1 on line 22, PP=2 on line 8).
  EXPECT_EQ(SourceOf(*r, "parallel.tp"),
            "--tensor-model-parallel-size (CONFIG.sh:30; value from line 22)");
  EXPECT_EQ(SourceOf(*r, "parallel.pp"),
            "--pipeline-model-parallel-size (CONFIG.sh:31; value from line 8)");
  EXPECT_EQ(SourceOf(*r, "sequence.max_tokens"), "--seq-length (CONFIG.sh:42)");
  EXPECT_EQ(SourceOf(*r, "cluster.nodes"), "SBATCH.sh:4: sbatch command line");
  EXPECT_NE(SourceOf(*r, "cluster.gpus_per_node").find("SRUN.sh:3: #SBATCH"), std::string::npos)
      << SourceOf(*r, "cluster.gpus_per_node");
}

TEST(BundleImportTest, MegatronFunctionalTestRecipe) {
  // NVIDIA/Megatron-LM tests/functional_tests/test_cases/gpt/gpt3_7b_tp1_pp4_memory_speed/
  // model_config.yaml (SOURCES.md): MODEL_ARGS maps pretrain_gpt.py's flags to values. The GPUs
  // come from the CI's job recipe, so they are given here (8 H100 of one node). PP 4 and
  // --num-layers-per-virtual-pipeline-stage 1 give VPP 32 / 4 / 1 = 8; DP 8 / 4 = 2. Before,
  // the file was refused as "a YAML file that is neither ...".
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.gpus_per_node = 8;
  o.nodes = 1;
  auto r = ImportJobFile(ImportGolden("megatron_ci_recipe_memory_speed/model_config.yaml"), o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "parallel.tp"), "1");
  EXPECT_EQ(Field(*r, "parallel.pp"), "4");
  EXPECT_EQ(Field(*r, "parallel.vpp"), "8");
  EXPECT_EQ(Field(*r, "parallel.dp"), "2");
  EXPECT_EQ(Field(*r, "batch.micro_batch"), "1");
  EXPECT_EQ(Field(*r, "batch.global_batch"), "8");
  EXPECT_EQ(Field(*r, "sequence.max_tokens"), "8192");
  EXPECT_EQ(Field(*r, "optimizer.distributed"), "true");
  EXPECT_EQ(Field(*r, "overlap.grad_reduce"), "true");
  EXPECT_EQ(Field(*r, "precision.params"), "bf16");
  EXPECT_EQ(SourceOf(*r, "parallel.pp"),
            "model_config.yaml:47: MODEL_ARGS.--pipeline-model-parallel-size");

  // A MODEL_ARGS that is not a mapping is named, not taken for another kind of YAML.
  const std::string dir = ::testing::TempDir() + "strata_ci_recipe";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/model_config.yaml") << "MODEL_ARGS:\n  - --num-layers 2\n";
  auto bad = ImportJobFile(dir + "/model_config.yaml", o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("MODEL_ARGS"), std::string::npos) << bad.error().Format();
  // A flag set to false is left out, as the CI's launcher drops it.
  std::ofstream(dir + "/model_config.yaml")
      << "MODEL_ARGS:\n  --num-layers: 2\n  --hidden-size: 64\n  --num-attention-heads: 2\n"
         "  --seq-length: 128\n  --max-position-embeddings: 128\n  --micro-batch-size: 1\n"
         "  --global-batch-size: 8\n  --vocab-size: 100\n  --use-distributed-optimizer: false\n";
  auto off = ImportJobFile(dir + "/model_config.yaml", o);
  ASSERT_TRUE(off.ok()) << off.error().Format();
  EXPECT_EQ(Field(*off, "optimizer.distributed"), "false");
}

TEST(BundleImportTest, ASourcedFilesMissingSourceNamesThatFile) {
  // A source line inside a sourced file names a file that is not there: the error names the
  // sourced file and its line, not the script's line of the same number.
  const std::string dir = ::testing::TempDir() + "strata_nested_source";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir + "/run.sh") << "#!/bin/bash\n. ./inner.sh\n";
    std::ofstream(dir + "/inner.sh") << "X=1\nY=2\n. ./missing.sh\n";
  }
  ImportOptions o;
  o.gpu = "A100 80GB";
  auto r = ImportJobFile(dir + "/run.sh", o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Format().find("inner.sh:3: source names './missing.sh'"), std::string::npos)
      << r.error().Format();
}

}  // namespace
}  // namespace strata::accelerate_bundle_test

// TRL recipes, LLaMA-Factory's Liger switch and Slurm scripts that start one task per GPU, on
// real files (tests/golden/cli_import/SOURCES.md). Each expected value is read off the input by
// hand, with the TRL, LLaMA-Factory or Slurm rule that gives it beside it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "importer/import_test_support.h"
#include "strata/core/file_io.h"
#include "strata/importer/import_job.h"

namespace strata::trl_slurm_import_test {
namespace {

using testing::Field;
using testing::ImportGolden;
using testing::SourceOf;

// LLaMA-Factory's examples/train_full/llama3_full_sft_ds3.yaml with one line added, the one its
// README gives for Liger ("Try `enable_liger_kernel: true` for efficient training"), and its
// stage set to `stage`.
Result<ImportReport> LlamaFactoryWithLiger(const std::string& stage) {
  const std::string yaml =
      ImportGolden("llamafactory_full_sft_ds3/examples/train_full/llama3_full_sft_ds3.yaml");
  auto text = ReadFile(yaml);
  if (!text.ok()) return text.error();
  std::string edited = *text + "enable_liger_kernel: true\n";
  const std::string from = "stage: sft\n";
  edited.replace(edited.find(from), from.size(), "stage: " + stage + "\n");
  ImportOptions o;
  o.gpu = "A100 80GB";
  o.gpus_per_node = 8;
  o.model = "llama-3.1-8b";
  return ImportJob(edited, yaml, o);
}

// LLaMA-Factory's llama3_full_sft_ds3.yaml sets `ddp_timeout: 180000000` (line 33): 180,000,000 s
// (about 5.7 years), the run's collective timeout. The import says the file's value with its
// line, not TrainingArguments' default of 1800 s. Before: "ddp_timeout = 1800 s:
// TrainingArguments' default" was printed, the file's value listed as unused.
TEST(LlamaFactoryLigerTest, TheFilesDdpTimeoutIsNotTheDefault) {
  auto r = LlamaFactoryWithLiger("sft");
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->yaml.find("ddp_timeout = 1800 s"), std::string::npos) << r->yaml;
  EXPECT_NE(r->yaml.find("ddp_timeout = 180000000 s (llama3_full_sft_ds3.yaml:33: ddp_timeout)"),
            std::string::npos)
      << r->yaml;
}

TEST(LlamaFactoryLigerTest, SftAndPtKeepLigersFusedLoss) {
  // hiyouga/LLaMA-Factory src/llamafactory/model/loader.py: apply_liger_kernel(...,
  // require_logits=(finetuning_args.stage not in ["pt", "sft"])); liger_kernel.py passes
  // fused_linear_cross_entropy=False only when require_logits. Liger's own default for it is
  // True, so sft and pt run the fused loss. The stages that need the logits (dpo, kto, rm, ppo)
  // are refused at import (llamafactory_launch_import_test.cc): strata does not price them.
  for (const char* stage : {"sft", "pt"}) {
    auto r = LlamaFactoryWithLiger(stage);
    ASSERT_TRUE(r.ok()) << stage << ": " << r.error().Format();
    EXPECT_EQ(Field(*r, "loss.cross_entropy"), "fused") << stage;
    EXPECT_EQ(Field(*r, "framework.liger_kernel"), "true") << stage;
    EXPECT_EQ(r->job.cross_entropy, CrossEntropyImpl::kFused) << stage;
  }
  auto dpo = LlamaFactoryWithLiger("dpo");
  ASSERT_FALSE(dpo.ok());
  EXPECT_EQ(dpo.error().field, "stage");
}

ImportOptions Options(const char* gpu) {
  ImportOptions o;
  o.gpu = gpu;
  o.model = "llama-3.1-8b";  // stands in for each recipe's model (SOURCES.md)
  return o;
}

TEST(TrlImportTest, RecipesGiveTheirFields) {
  struct Case {
    const char* file;
    std::vector<std::string> bundle;
    std::vector<std::pair<const char*, const char*>> expected;
  };
  const Case cases[] = {
      // accelerate launch --config_file zero3.yaml sft.py --config config_full.yaml.
      {"trl_handbook_full/train_sft_full.sh",
       {},
       {{"cluster.nodes", "1"},             // zero3.yaml num_machines 1
        {"cluster.gpus_per_node", "8"},     // num_processes 8 (the total) / 1 machine
        {"sharding.mode", "zero3"},         // deepspeed_config.zero_stage 3
        {"batch.micro_batch", "16"},        // per_device_train_batch_size: 16
        {"batch.global_batch", "128"},      // 16 x accumulation 1 x DP 8
        {"sequence.max_tokens", "2048"},    // max_seq_length: 2048
        {"recompute.granularity", "full"},  // gradient_checkpointing: true
        {"precision.params", "bf16"},       // bf16: true
        {"attention.kernel", "flash"},      // attn_implementation: flash_attention_2
        {"adapter.kind", "(not set)"}}},    // no use_peft: full fine-tuning
      // The QLoRA recipe on one GPU: --num_processes=1 wins over ddp.yaml's 8.
      {"trl_handbook_qlora/train_sft_qlora.sh",
       {},
       {{"cluster.gpus_per_node", "1"},
        {"sharding.mode", "none"},    // DDP: MULTI_GPU, no ZeRO
        {"batch.micro_batch", "4"},   // per_device_train_batch_size: 4
        {"batch.global_batch", "8"},  // 4 x gradient_accumulation_steps 2 x DP 1
        {"adapter.kind", "qlora"},    // use_peft with load_in_4bit (NF4)
        {"adapter.rank", "16"},       // lora_r: 16
        {"adapter.alpha", "16"},      // lora_alpha: 16 (not TRL's default 32)
        {"adapter.dropout", "0.05"},  // lora_dropout: 0.05
        {"adapter.targets", "[q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]"}}},
      // trl sft --config sft_config.yaml: only the model, the data and num_processes: 4 are
      // given; TRL's SFTConfig defaults apply (max_length 1024, checkpointing and bf16 on).
      {"trl_cli_sft_config/launch.sh",
       {"trl_cli_sft_config/sft_config.yaml"},
       {{"cluster.gpus_per_node", "4"},     // num_processes: 4, moved to accelerate launch
        {"batch.micro_batch", "8"},         // TrainingArguments' per_device_train_batch_size
        {"batch.global_batch", "32"},       // 8 x 1 x DP 4
        {"sequence.max_tokens", "1024"},    // SFTConfig.max_length
        {"recompute.granularity", "full"},  // SFTConfig.gradient_checkpointing = True
        {"precision.params", "bf16"}}},     // SFTConfig.bf16 = not fp16
  };
  for (const Case& c : cases) {
    ImportOptions o = Options("A100 80GB");
    for (const std::string& f : c.bundle) o.files.push_back(ImportGolden(f));
    auto r = ImportJobFile(ImportGolden(c.file), o);
    ASSERT_TRUE(r.ok()) << c.file << ": " << r.error().Format();
    for (const auto& [key, value] : c.expected) {
      EXPECT_EQ(Field(*r, key), value) << c.file << " " << key << " from " << SourceOf(*r, key);
    }
  }
}

TEST(TrlImportTest, LoraFlagsOnTheCommandLine) {
  // TRL's "LoRA Without Regret" page: trl/scripts/sft.py with --use_peft --lora_r 256
  // --lora_alpha 16 --lora_target_modules all-linear --packing, no length and no dropout given.
  ImportOptions o = Options("A100 80GB");
  o.model = "qwen3-32b";  // stands in for Qwen2.5-3B-Instruct
  o.gpus_per_node = 1;    // one process (uv run, no launcher)
  auto r = ImportJobFile(ImportGolden("trl_lora_without_regret/sft_lora.sh"), o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const std::vector<std::pair<const char*, const char*>> expected = {
      {"adapter.kind", "lora"},  // --use_peft, no load_in_4bit
      {"adapter.rank", "256"},   // --lora_r 256
      {"adapter.alpha", "16"},   // --lora_alpha 16
      {"adapter.targets", "[all-linear]"},
      {"adapter.dropout", "0.05"},      // ModelConfig.lora_dropout's default
      {"sequence.packing", "true"},     // --packing (a bare flag)
      {"sequence.max_tokens", "1024"},  // SFTConfig.max_length's default
      {"batch.micro_batch", "2"},       // --per_device_train_batch_size 2
      {"batch.global_batch", "32"},     // 2 x --gradient_accumulation_steps 16 x DP 1
      {"frozen", "[]"}};
  for (const auto& [key, value] : expected) {
    EXPECT_EQ(Field(*r, key), value) << key << " from " << SourceOf(*r, key);
  }
  EXPECT_EQ(SourceOf(*r, "frozen"),
            "default: no module frozen besides the base the adapters train on");
}

TEST(TrlImportTest, TheQloraRecipeIsAnAdapterJob) {
  auto r =
      ImportJobFile(ImportGolden("trl_handbook_qlora/train_sft_qlora.sh"), Options("A100 80GB"));
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const AdapterSpec& a = r->job.adapter;
  EXPECT_EQ(a.kind, AdapterKind::kQlora);
  EXPECT_EQ(a.rank, 16);
  EXPECT_NEAR(a.alpha, 16.0, 1e-12);
  EXPECT_NEAR(a.dropout, 0.05, 1e-12);
  EXPECT_EQ(a.targets.size(), 7u);
  EXPECT_EQ(SourceOf(*r, "adapter.kind"), "config_qlora.yaml:9: use_peft with load_in_4bit");
  // use_bnb_nested_quant is not set: TRL quantises without double quantisation, said in a note.
  bool noted = false;
  for (const std::string& n : r->notes) {
    noted = noted || n.find("without use_bnb_nested_quant") != std::string::npos;
  }
  EXPECT_TRUE(noted);
}

// The QLoRA recipe with one edit, as a user's copy would have it.
Result<ImportReport> QloraRecipeWith(const std::string& from, const std::string& to) {
  const std::string dir = ImportGolden("trl_handbook_qlora");
  auto text = ReadFile(dir + "/recipes/zephyr-7b-beta/sft/config_qlora.yaml");
  if (!text.ok()) return text.error();
  std::string recipe = *text;
  if (!from.empty()) {
    const size_t at = recipe.find(from);
    if (at == std::string::npos) return InvalidInput("edit not found: " + from);
    recipe =
        to == "<cut>" ? recipe.substr(0, at + from.size()) : recipe.replace(at, from.size(), to);
  }
  ImportOptions o = Options("A100 80GB");
  o.gpus_per_node = 1;  // a recipe alone does not say (the launch does)
  return ImportJob(recipe, dir + "/recipes/zephyr-7b-beta/sft/config_qlora.yaml", o);
}

TEST(TrlImportTest, BadRecipesAreErrorsNamingTheFileAndKey) {
  // The recipe alone imports (a TRL recipe YAML, SFTConfig defaults where it is silent).
  auto alone = QloraRecipeWith("", "");
  ASSERT_TRUE(alone.ok()) << alone.error().Format();
  EXPECT_EQ(alone->format, "TRL recipe YAML (HF Trainer)");
  struct Case {
    const char* name;
    const char* from;
    const char* to;
    const char* error;  // a part of the message
  };
  const Case cases[] = {
      // Cut inside the quoted chat template: the YAML never closes its string.
      {"truncated", "chat_template: \"{% for message", "<cut>",
       "config_qlora.yaml:23: malformed YAML: illegal EOF in scalar"},
      // Cut in the middle of the target list: "k_" is no layer strata knows.
      {"truncated list", "- q_proj\n- k_", "<cut>",
       "adapter target 'k_' (config_qlora.yaml:14: lora_target_modules): strata models adapters "
       "on the decoder's linear layers"},
      {"GPT-2 names", "- q_proj\n", "- c_attn\n",
       "adapter target 'c_attn' (config_qlora.yaml:14: lora_target_modules): strata models "
       "adapters on the decoder's linear layers q_proj, k_proj, v_proj, o_proj, gate_proj, "
       "up_proj, down_proj, gate, shared_expert_gate, in_proj_qkvz, in_proj_ba, out_proj, "
       "all-linear\n  hint: a model that names its layers otherwise (a fused "
       "c_attn, W_pack or query_key_value): give the Llama-style equivalent with --set "
       "adapter.targets=[q_proj, k_proj, v_proj]"},
      {"rank in words", "lora_r: 16", "lora_r: sixteen", "adapter.rank"},
  };
  for (const Case& c : cases) {
    auto r = QloraRecipeWith(c.from, c.to);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(r.error().Format().find(c.error), std::string::npos)
        << c.name << ": " << r.error().Format();
  }
}

TEST(TrlImportTest, TargetsTheModelNamesOtherwiseAreGivenWithSet) {
  // The error's hint, followed: --set adapter.targets replaces the recipe's c_attn.
  const std::string dir = ImportGolden("trl_handbook_qlora");
  auto text = ReadFile(dir + "/recipes/zephyr-7b-beta/sft/config_qlora.yaml");
  ASSERT_TRUE(text.ok());
  std::string recipe = *text;
  recipe.replace(recipe.find("- q_proj\n"), 9, "- c_attn\n");
  ImportOptions o = Options("A100 80GB");
  o.gpus_per_node = 1;
  o.overrides = {"adapter.targets=[q_proj, k_proj, v_proj]"};
  auto r = ImportJob(recipe, dir + "/recipes/zephyr-7b-beta/sft/config_qlora.yaml", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.adapter.targets, (std::vector<std::string>{"q_proj", "k_proj", "v_proj"}));
}

TEST(TrlImportTest, AMissingOrWrongConfigIsNamed) {
  // `trl sft --config` naming a file that is not there, and one that is an Accelerate config.
  ImportOptions o = Options("A100 80GB");
  auto missing = ImportJob("trl sft --config recipe.yaml\n", "run.sh", o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(
      missing.error().Format().find("--config (line 1) names 'recipe.yaml', which is not there"),
      std::string::npos)
      << missing.error().Format();
  o.files = {ImportGolden("trl_handbook_qlora/recipes/accelerate_configs/ddp.yaml")};
  auto wrong = ImportJob("trl sft --config ddp.yaml\n", "run.sh", o);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().Format().find("names an Accelerate config"), std::string::npos)
      << wrong.error().Format();
}

TEST(LlamaFactoryAdapterTest, LoraAndQloraExamplesAreAdapterJobs) {
  // hiyouga/LLaMA-Factory examples/train_lora/qwen3_lora_sft.yaml and
  // examples/train_qlora/qwen3_lora_sft_otfq.yaml: finetuning_type lora, lora_rank 8,
  // lora_target all; the second adds quantization_bit 4 with quantization_method bnb (NF4).
  // Unset: lora_alpha = 2 x rank = 16 and lora_dropout 0 (FinetuningArguments' defaults).
  struct Case {
    const char* file;
    AdapterKind kind;
    const char* kind_source;
  };
  const Case cases[] = {
      {"llamafactory_qwen3_lora/qwen3_lora_sft.yaml", AdapterKind::kLora,
       "qwen3_lora_sft.yaml:8: finetuning_type lora"},
      {"llamafactory_qwen3_lora/qwen3_lora_sft_otfq.yaml", AdapterKind::kQlora,
       "qwen3_lora_sft_otfq.yaml:10: finetuning_type lora with quantization_bit 4"},
  };
  for (const Case& c : cases) {
    ImportOptions o = Options("H100 SXM");
    o.model = "qwen3-32b";  // stands in for Qwen3-4B-Instruct-2507 (same layer kinds)
    o.gpus_per_node = 1;
    auto r = ImportJobFile(ImportGolden(c.file), o);
    ASSERT_TRUE(r.ok()) << c.file << ": " << r.error().Format();
    const AdapterSpec& a = r->job.adapter;
    EXPECT_EQ(a.kind, c.kind) << c.file;
    EXPECT_EQ(SourceOf(*r, "adapter.kind"), c.kind_source);
    EXPECT_EQ(a.rank, 8) << c.file;
    EXPECT_NEAR(a.alpha, 16.0, 1e-12) << c.file;
    EXPECT_NEAR(a.dropout, 0.0, 1e-12) << c.file;
    EXPECT_EQ(a.targets, std::vector<std::string>{"all-linear"}) << c.file;
    EXPECT_EQ(SourceOf(*r, "adapter.alpha"),
              "default: LLaMA-Factory's lora_alpha defaults to lora_rank x 2");
    // The adapter is modelled: the old "imported as full training" note is gone.
    for (const std::string& n : r->notes) {
      EXPECT_EQ(n.find("imported as full training"), std::string::npos) << n;
    }
  }
}

TEST(TitanFlavorTableTest, TheImporterReadsTheSharedTable) {
  // pytorch/torchtitan llama3_8b.toml with its [model] edited to the qwen3 32B flavor, which the
  // importer's own list lacked: data/models/torchtitan_flavors.yaml maps it (and the log analyser
  // reads the same table, tests/logs/titan_header_test.cc).
  auto text = ReadFile(ImportGolden("torchtitan_llama3_8b/llama3_8b.toml"));
  ASSERT_TRUE(text.ok());
  std::string toml = *text;
  toml.replace(toml.find("name = \"llama3\"\nflavor = \"8B\""), 29,
               "name = \"qwen3\"\nflavor = \"32B\"");
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.gpus_per_node = 8;
  o.nodes = 8;
  auto r = ImportJob(toml, "llama3_8b.toml", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.model, "qwen3-32b");
  toml.replace(toml.find("flavor = \"32B\""), 14, "flavor = \"debugmodel\"");
  auto debug = ImportJob(toml, "llama3_8b.toml", o);
  ASSERT_FALSE(debug.ok());
  EXPECT_EQ(debug.error().message,
            "torchtitan model 'qwen3/debugmodel' (llama3_8b.toml:19: model.name) has no strata "
            "catalog entry: torchtitan's test configuration, not a released model");
}

// dianaonutu/Megatron-LM-Snellius-venv train-gpt-venv.job: srun starts launch.sh (python3 -u
// "$@") once per task, --ntasks-per-node=4 on --nodes=4.
const char* kSnellius = "slurm_srun_per_gpu_megatron/train-gpt-venv.job";

Result<ImportReport> SnelliusWith(const std::string& from, const std::string& to) {
  auto text = ReadFile(ImportGolden(kSnellius));
  if (!text.ok()) return text.error();
  std::string script = *text;
  if (!from.empty()) script.replace(script.find(from), from.size(), to);
  // The script's own 1.7B GPT (24 layers, hidden 2048) with the vocabulary its gpt2 tokenizer
  // gives (50,257, the GPT-2 BPE): a stand-in --model would contradict its arguments.
  const std::string divisible = "--make-vocab-size-divisible-by 128";
  script.replace(script.find(divisible), divisible.size(), divisible + " --vocab-size 50257");
  ImportOptions o = Options("H100 SXM");
  o.model.clear();
  return ImportJob(script, ImportGolden(kSnellius), o);
}

TEST(SrunPerTaskTest, EachTaskIsOneRank) {
  auto r = SnelliusWith("", "");
  // Before: the arguments, joined into COMMAND="... "${MODEL_ARGS[@]}" ...", were lost (the
  // import asked for --micro-batch-size), and every `if` branch was read.
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.cluster.nodes, 4);          // --nodes=4
  EXPECT_EQ(r->job.cluster.gpus_per_node, 4);  // --ntasks-per-node=4: one rank per task
  EXPECT_EQ(SourceOf(*r, "cluster.gpus_per_node"),
            "train-gpt-venv.job:4: #SBATCH --ntasks-per-node=4 (srun starts the program once per "
            "task: one rank, one GPU each)");
  // 16 ranks / (TP 1 x PP 1 x CP 1) = DP 16; GLOBAL_BATCH_SIZE=64, MICRO_BATCH_SIZE=4.
  EXPECT_EQ(r->job.layout.dp, 16);
  EXPECT_EQ(r->job.global_batch, 64);
  EXPECT_EQ(r->job.micro_batch, 4);
  EXPECT_NEAR(r->job.sequence.max_tokens, 2048, 1e-9);  // SEQ_LENGTH=2048
  EXPECT_TRUE(r->job.optimizer.distributed);            // FSDP=0: the else branch's PARALLEL_ARGS
  EXPECT_TRUE(r->job.overlap.grad_reduce);
  // RECOMPUTATION=0: `if [ "$RECOMPUTATION" = "1" ]` is false, so no --recompute-granularity.
  EXPECT_EQ(r->job.recompute.granularity, RecomputeGranularity::kNone);
  EXPECT_EQ(Field(*r, "recompute.granularity"), "none");
}

TEST(SrunPerTaskTest, TheTasksGiveTheRanksWhateverTheGpusAsked) {
  // Without --gpus-per-node the header still says how many ranks a node runs.
  auto no_gpus = SnelliusWith("#SBATCH --gpus-per-node=4\n", "");
  ASSERT_TRUE(no_gpus.ok()) << no_gpus.error().Format();
  EXPECT_EQ(no_gpus->job.cluster.gpus_per_node, 4);
  // Eight GPUs asked for, four tasks started: four ranks run, and a note says so.
  auto more_gpus = SnelliusWith("#SBATCH --gpus-per-node=4\n", "#SBATCH --gpus-per-node=8\n");
  ASSERT_TRUE(more_gpus.ok()) << more_gpus.error().Format();
  EXPECT_EQ(more_gpus->job.cluster.gpus_per_node, 4);
  bool noted = false;
  for (const std::string& n : more_gpus->notes) {
    noted = noted ||
            n.find("gives 8 GPUs per node, but srun starts 4 tasks per node") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  // srun's own -N / --ntasks-per-node replace the header's, as inside an allocation.
  auto flags = SnelliusWith("srun --label", "srun -N 2 --ntasks-per-node=8 --label");
  ASSERT_TRUE(flags.ok()) << flags.error().Format();
  EXPECT_EQ(flags->job.cluster.nodes, 2);
  EXPECT_EQ(flags->job.cluster.gpus_per_node, 8);
  // torchrun under srun starts the ranks itself: its --nproc_per_node counts, not the tasks.
  auto torchrun =
      SnelliusWith("srun --label \"$LAUNCH_SCRIPT\"", "srun --label torchrun --nproc_per_node 2");
  ASSERT_TRUE(torchrun.ok()) << torchrun.error().Format();
  EXPECT_EQ(torchrun->job.cluster.gpus_per_node, 2);
}

}  // namespace
}  // namespace strata::trl_slurm_import_test

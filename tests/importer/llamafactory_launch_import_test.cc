// LLaMA-Factory's YAML however it is launched, and the preference / RL stages strata does not
// price (LLaMA-Factory's stage, ms-swift's rlhf). Inputs are real files
// (tests/golden/cli_import/SOURCES.md); each expected value is read off them by hand, with the
// framework's rule beside it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "importer/import_test_support.h"
#include "strata/core/file_io.h"
#include "strata/importer/import_job.h"

namespace strata {
namespace {

using testing::Field;
using testing::ImportGolden;

// LLaMA-Factory's examples/extras/fsdp_qlora/train.sh runs its YAML through
// `accelerate launch --config_file examples/accelerate/fsdp_config.yaml src/train.py
// examples/extras/fsdp_qlora/llama3_lora_sft.yaml`; src/train.py is LLaMA-Factory's run_exp(),
// which reads the YAML as it does under llamafactory-cli. So the fields are those of the YAML
// imported alone: finetuning_type lora + quantization_bit 4 (bitsandbytes, LLaMA-Factory's
// default quantization_method) is QLoRA, lora_rank 8, lora_target all; gradient checkpointing
// on (hparams/model_args.py disable_gradient_checkpointing defaults to False,
// model/model_utils/checkpointing.py enables it unless set). Before: full fine-tuning with a note
// "strata models full-parameter training", and recompute none ("gradient_checkpointing defaults
// to false", TrainingArguments' default).
TEST(LlamaFactoryLaunchImport, AccelerateLaunchReadsTheYamlAsLlamaFactorys) {
  const std::string script = ImportGolden("llamafactory_fsdp_qlora/train.sh");
  auto text = ReadFile(script);
  ASSERT_TRUE(text.ok());
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.model = "llama-3.1-8b";
  o.files = {ImportGolden("llamafactory_fsdp_qlora/fsdp_config.yaml"),
             ImportGolden("llamafactory_fsdp_qlora/llama3_lora_sft.yaml")};
  auto r = ImportJob(*text, script, o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(Field(*r, "adapter.kind"), "qlora");
  EXPECT_EQ(Field(*r, "adapter.rank"), "8");
  EXPECT_EQ(Field(*r, "adapter.alpha"), "16");  // LLaMA-Factory: lora_alpha = 2 x rank
  EXPECT_EQ(Field(*r, "recompute.granularity"), "full");
  EXPECT_EQ(r->job.adapter.kind, AdapterKind::kQlora);
  EXPECT_EQ(r->yaml.find("strata models full-parameter training"), std::string::npos) << r->yaml;
  // The launch's own fields stay: FSDP FULL_SHARD over num_processes 2 (fsdp_config.yaml).
  EXPECT_EQ(Field(*r, "cluster.gpus_per_node"), "2");
  EXPECT_EQ(Field(*r, "sharding.mode"), "fsdp2");

  // The YAML alone gives the same adapter and recompute.
  const std::string yaml = ImportGolden("llamafactory_fsdp_qlora/llama3_lora_sft.yaml");
  auto yaml_text = ReadFile(yaml);
  ASSERT_TRUE(yaml_text.ok());
  ImportOptions alone;
  alone.gpu = "H100 SXM";
  alone.model = "llama-3.1-8b";
  alone.gpus_per_node = 2;
  auto a = ImportJob(*yaml_text, yaml, alone);
  ASSERT_TRUE(a.ok()) << a.error().Format();
  for (const char* key : {"adapter.kind", "adapter.rank", "adapter.alpha", "adapter.targets",
                          "recompute.granularity"}) {
    EXPECT_EQ(Field(*r, key), Field(*a, key)) << key;
  }
}

// LLaMA-Factory's preference and RL stages run more than one sequence per sample and a
// reference or generation pass (hiyouga/LLaMA-Factory ff6d4d12 data/collator.py
// PairwiseDataCollatorWithPadding: "2 * n examples" for rm and dpo, chosen then rejected;
// hparams/finetuning_args.py use_ref_model = stage == "dpo" and pref_loss not in [orpo, simpo];
// train/dpo/trainer.py compute_reference_log_probs: a second forward of both sequences without
// grad). strata prices one sequence per sample and no reference pass, so a dpo job priced as SFT
// is 2.5x too fast (examples/train_lora/qwen3_lora_dpo.yaml: 1.32 s where the pair and the
// reference take ~3.3 s). Refused, naming the field, whether the YAML is the input or launched.
TEST(LlamaFactoryLaunchImport, PreferenceAndRlStagesAreRefusedNotPricedAsSft) {
  const std::string yaml = ImportGolden("llamafactory_qwen3_lora/qwen3_lora_sft.yaml");
  auto text = ReadFile(yaml);
  ASSERT_TRUE(text.ok());
  ASSERT_NE(text->find("stage: sft\n"), std::string::npos);
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.gpus_per_node = 1;
  o.model = "qwen3-32b";  // the golden's stand-in (SOURCES.md)
  for (const char* stage : {"dpo", "kto", "rm", "ppo"}) {
    std::string edited = *text;
    edited.replace(edited.find("stage: sft\n"), 11, std::string("stage: ") + stage + "\n");
    auto r = ImportJob(edited, yaml, o);
    ASSERT_FALSE(r.ok()) << stage;
    EXPECT_EQ(r.error().field, "stage") << stage;
    EXPECT_NE(r.error().Format().find(std::string("stage ") + stage), std::string::npos)
        << r.error().Format();
  }
  // pt and sft are what strata prices.
  std::string pt = *text;
  pt.replace(pt.find("stage: sft\n"), 11, "stage: pt\n");
  EXPECT_TRUE(ImportJob(pt, yaml, o).ok());
  EXPECT_TRUE(ImportJob(*text, yaml, o).ok());
}

// ms-swift's `rlhf` (RLHFArguments.rlhf_type, dpo by default; examples/megatron/rlhf/dpo/dense.sh
// runs `megatron rlhf --rlhf_type dpo`) was imported as SFT. Refused on the command line and in
// a saved args.json.
TEST(SwiftRlhfImport, RlhfIsRefusedNotPricedAsSft) {
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.gpus_per_node = 8;
  const std::pair<const char*, const char*> cases[] = {
      {"megatron rlhf --rlhf_type dpo --model Qwen/Qwen3-8B --micro_batch_size 1\n", "dpo"},
      {"swift rlhf --rlhf_type kto --model Qwen/Qwen3-8B\n", "kto"},
      {"swift rlhf --model Qwen/Qwen3-8B\n", "dpo"}};  // ms-swift's default rlhf_type
  for (const auto& [command, type] : cases) {
    auto r = ImportJob(command, "train.sh", o);
    ASSERT_FALSE(r.ok()) << command;
    EXPECT_EQ(r.error().field, "rlhf_type") << command;
    EXPECT_NE(r.error().Format().find(std::string("rlhf_type ") + type), std::string::npos)
        << r.error().Format();
  }
  auto saved = ImportJob(R"({"rlhf_type": "dpo", "model": "Qwen/Qwen3-8B"})", "args.json", o);
  ASSERT_FALSE(saved.ok());
  EXPECT_EQ(saved.error().field, "rlhf_type");
}

}  // namespace
}  // namespace strata

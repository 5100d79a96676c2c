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

}  // namespace
}  // namespace strata

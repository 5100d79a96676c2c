// The training dtype an HF-world launch imports with: the dtype the framework loads the model in
// decides the parameters, and a bf16-loaded model trained without DeepSpeed or FSDP keeps no
// fp32 copy anywhere.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "import_test_support.h"
#include "strata/importer/import_job.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

ImportOptions OneH100() {
  ImportOptions o;
  o.gpu = "H100";
  o.gpus_per_node = 1;
  return o;
}

// ms-swift's ModelArguments._init_torch_dtype: no --torch_dtype, --bf16 or --fp16 means the
// model's own dtype (Qwen3-32B is published in bfloat16), and TrainArguments then sets bf16
// mixed precision. Before, the HF Trainer's default (fp32 weights) was imported.
TEST(ImportPrecision, SwiftSftTrainsInTheModelsDtype) {
  auto r = ImportJob("swift sft --model Qwen/Qwen3-32B --train_type full --max_length 2048\n",
                     "train.sh", OneH100());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.param_dtype, DType::kBf16);
  // The catalog's configs carry no dtype: bf16, and the source says why.
  EXPECT_NE(testing::SourceOf(*r, "precision.params").find("config.json gives no dtype"),
            std::string::npos)
      << testing::SourceOf(*r, "precision.params");
}

// A config.json published in float16 keeps float16 (register.py get_default_torch_dtype keeps
// float16 and bfloat16 as the config gives them). transformers from 4.56 writes the key as
// "dtype", before as "torch_dtype": both are read.
TEST(ImportPrecision, SwiftSftKeepsAFloat16Checkpoint) {
  for (const char* key : {"torch_dtype", "dtype"}) {
    std::ifstream in(testing::TestPath("../data/models/qwen3-32b.json"));
    nlohmann::json config = nlohmann::json::parse(in);
    config[key] = "float16";
    const fs::path dir = fs::temp_directory_path() /
                         ("strata-fp16-" + std::to_string(getpid()) + "-" + std::string(key));
    fs::create_directories(dir);
    const fs::path file = dir / "config.json";
    std::ofstream(file) << config.dump();
    ImportOptions o = OneH100();
    o.model = file.string();
    auto r = ImportJob("swift sft --model my/model --train_type full --max_length 2048\n",
                       "train.sh", o);
    fs::remove_all(dir);
    ASSERT_TRUE(r.ok()) << key << ": " << r.error().Format();
    EXPECT_EQ(r->job.param_dtype, DType::kFp16) << key;
  }
}

// Loaded in bf16 and stepped by torch's AdamW without DeepSpeed: gradients, moments and the
// "master" copy are the bf16 parameters themselves (2 + 2 + 4 bytes a parameter, not the
// 2 + 4 + 4 + 8 of mixed precision with fp32 master weights). With a ZeRO stage DeepSpeed keeps
// its fp32 master weights and moments.
TEST(ImportPrecision, ABf16LoadedModelWithoutDeepSpeedKeepsNoFp32Copy) {
  const char* kSwift = "swift sft --model Qwen/Qwen3-32B --train_type full --max_length 2048";
  auto plain = ImportJob(std::string(kSwift) + "\n", "train.sh", OneH100());
  ASSERT_TRUE(plain.ok()) << plain.error().Format();
  EXPECT_EQ(plain->job.grad_dtype, DType::kBf16);
  EXPECT_EQ(plain->job.optimizer.master_dtype, DType::kBf16);
  EXPECT_EQ(plain->job.optimizer.moment_dtype, DType::kBf16);

  auto zero2 = ImportJob(std::string(kSwift) + " --deepspeed zero2\n", "train.sh", OneH100());
  ASSERT_TRUE(zero2.ok()) << zero2.error().Format();
  EXPECT_EQ(zero2->job.optimizer.master_dtype, DType::kFp32);
  EXPECT_EQ(zero2->job.optimizer.moment_dtype, DType::kFp32);

  // LoRA: PEFT casts the adapters to fp32, which stay the trained parameters.
  auto lora =
      ImportJob("swift sft --model Qwen/Qwen3-32B --max_length 2048\n", "train.sh", OneH100());
  ASSERT_TRUE(lora.ok()) << lora.error().Format();
  EXPECT_EQ(lora->job.optimizer.master_dtype, DType::kFp32);
}

// The HF Trainer loads in fp32 unless --torch_dtype says otherwise: --bf16 alone is autocast
// over fp32 parameters (an fp32 optimizer); --torch_dtype bfloat16 loads bf16 parameters that
// AdamW steps in bf16.
TEST(ImportPrecision, TheHfTrainerIsPureBf16OnlyWhenLoadedInBf16) {
  const char* kRun =
      "torchrun --nproc_per_node 1 run_clm.py --model_name_or_path meta-llama/Llama-3.1-8B "
      "--block_size 2048 --per_device_train_batch_size 1 --bf16";
  auto amp = ImportJob(std::string(kRun) + "\n", "train.sh", OneH100());
  ASSERT_TRUE(amp.ok()) << amp.error().Format();
  EXPECT_EQ(amp->job.optimizer.master_dtype, DType::kFp32);
  EXPECT_EQ(amp->job.optimizer.moment_dtype, DType::kFp32);

  auto bf16 = ImportJob(std::string(kRun) + " --torch_dtype bfloat16\n", "train.sh", OneH100());
  ASSERT_TRUE(bf16.ok()) << bf16.error().Format();
  EXPECT_EQ(bf16->job.optimizer.master_dtype, DType::kBf16);
  EXPECT_EQ(bf16->job.optimizer.moment_dtype, DType::kBf16);
  EXPECT_EQ(bf16->job.grad_dtype, DType::kBf16);
}

// TrainingArguments.optim: bitsandbytes' 8-bit AdamW is strata's adam8bit (it was dropped for
// "adamw"), and with a bf16-loaded model it steps the bf16 parameters too: no fp32 copy. No
// default applied for the master weights is left in the report when they are bf16.
TEST(ImportPrecision, TheHfOptimizerIsRead) {
  auto r = ImportJob(
      "swift sft --model Qwen/Qwen3-32B --train_type full --optim adamw_bnb_8bit --max_length "
      "2048\n",
      "train.sh", OneH100());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.optimizer.name, "adam8bit");
  EXPECT_EQ(r->job.optimizer.master_dtype, DType::kBf16);
  for (const std::string& d : r->defaults) {
    EXPECT_EQ(d.find("optimizer.master_weights = fp32"), std::string::npos) << d;
  }
}

}  // namespace
}  // namespace strata

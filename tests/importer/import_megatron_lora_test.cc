// `megatron sft`'s LoRA: Megatron-SWIFT's tuner arguments (its Command-line-parameters, Tuner
// Parameters) become the job's adapter on megatron-core's fused linears. Before, a
// `--tuner_type lora` launch was imported as full fine-tuning without a word, and
// `--train_type lora` with only a note.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "import_test_support.h"
#include "strata/importer/import_job.h"

namespace strata {
namespace {

ImportOptions TwoH100() {
  ImportOptions o;
  o.gpu = "H100";
  o.gpus_per_node = 2;
  return o;
}

// The script of ms-swift's docs/source_en/Megatron-SWIFT/LoRA-Training.md (Mcore-Bridge,
// modelscope/ms-swift@35884039), cut to the arguments that size the job; Qwen3-32B stands in
// for its Qwen2.5-7B-Instruct, which the catalog lacks.
const char* kDocScript =
    "megatron sft --model Qwen/Qwen3-32B --tuner_type lora --lora_rank 8 --lora_alpha 32 "
    "--target_modules all-linear --tensor_model_parallel_size 2 --sequence_parallel true "
    "--micro_batch_size 16 --global_batch_size 16 --recompute_granularity full "
    "--recompute_method uniform --recompute_num_layers 1 --max_length 2048";

TEST(ImportMegatronLora, TunerTypeLoraIsTheAdapterOnTheFusedLinears) {
  auto r = ImportJob(std::string(kDocScript) + "\n", "train.sh", TwoH100());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.adapter.kind, AdapterKind::kLora);
  EXPECT_EQ(r->job.adapter.rank, 8);
  EXPECT_DOUBLE_EQ(r->job.adapter.alpha, 32);
  EXPECT_DOUBLE_EQ(r->job.adapter.dropout, 0.05);  // Megatron-SWIFT's default
  // all-linear is resolved against the model with the job (ResolveAdapterTargets): the four
  // fused linears on Qwen3-32B.
  EXPECT_EQ(r->job.adapter.targets, std::vector<std::string>{"all-linear"});
}

TEST(ImportMegatronLora, DefaultsAndNamedLinears) {
  // train_type (3.x) and no target_modules: all-linear, resolved with the model.
  auto plain = ImportJob(
      "megatron sft --model Qwen/Qwen3-32B --train_type lora --tensor_model_parallel_size 2 "
      "--sequence_parallel true --micro_batch_size 1 --global_batch_size 8 --max_length 2048\n",
      "train.sh", TwoH100());
  ASSERT_TRUE(plain.ok()) << plain.error().Format();
  EXPECT_EQ(plain->job.adapter.targets, std::vector<std::string>{"all-linear"});
  EXPECT_EQ(plain->job.adapter.rank, 8);
  // A list of megatron names, as argparse takes it (nargs='+').
  auto two = ImportJob(std::string(kDocScript) + " --target_modules linear_qkv linear_proj\n",
                       "train.sh", TwoH100());
  ASSERT_TRUE(two.ok()) << two.error().Format();
  EXPECT_EQ(two->job.adapter.targets, (std::vector<std::string>{"linear_qkv", "linear_proj"}));
  // megatron sft trains everything unless told otherwise.
  auto full = ImportJob(
      "megatron sft --model Qwen/Qwen3-32B --tensor_model_parallel_size 2 --sequence_parallel "
      "true --micro_batch_size 1 --global_batch_size 8 --max_length 2048\n",
      "train.sh", TwoH100());
  ASSERT_TRUE(full.ok()) << full.error().Format();
  EXPECT_FALSE(full->job.adapter.on());
}

TEST(ImportMegatronLora, RefusesWhatItCannotCount) {
  // HF's names match no megatron-core module: a clear error with the names that would.
  auto hf =
      ImportJob(std::string(kDocScript) + " --target_modules q_proj\n", "train.sh", TwoH100());
  ASSERT_FALSE(hf.ok());
  EXPECT_NE(hf.error().Format().find("linear_qkv"), std::string::npos) << hf.error().Format();
  // A regular expression cannot be resolved to layers.
  auto regex =
      ImportJob(std::string(kDocScript) + " --target_regex '.*qkv'\n", "train.sh", TwoH100());
  ASSERT_FALSE(regex.ok());
  EXPECT_NE(regex.error().Format().find("target_regex"), std::string::npos);
  // all-embedding is not modelled.
  auto embedding = ImportJob(std::string(kDocScript) + " --target_modules all-embedding\n",
                             "train.sh", TwoH100());
  ASSERT_FALSE(embedding.ok());
  EXPECT_NE(embedding.error().Format().find("all-embedding"), std::string::npos)
      << embedding.error().Format();
}

// Adapters on routed experts: Megatron-SWIFT's all-linear reaches the grouped expert linears.
// Before, this import was refused ("strata does not model adapters on routed experts").
TEST(ImportMegatronLora, MoeModelAllLinearImports) {
  auto moe = ImportJob(
      "megatron sft --model Qwen/Qwen3-30B-A3B --tuner_type lora --expert_model_parallel_size 2 "
      "--micro_batch_size 1 --global_batch_size 8 --max_length 2048\n",
      "train.sh", TwoH100());
  ASSERT_TRUE(moe.ok()) << moe.error().Format();
  EXPECT_EQ(moe->job.adapter.targets, std::vector<std::string>{"all-linear"});
}

// argparse's nargs='+' lists: every word up to the next flag is the flag's value. Before, only
// the first word was kept, so `--target_modules q_proj v_proj` imported one adapter of two.
TEST(ImportMegatronLora, ArgparseListsKeepEveryWord) {
  ImportOptions o = TwoH100();
  o.gpus_per_node = 1;
  auto r = ImportJob(
      "swift sft --model Qwen/Qwen3-32B --target_modules q_proj v_proj --max_length 2048\n",
      "train.sh", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.adapter.targets, (std::vector<std::string>{"q_proj", "v_proj"}));
}

// Megatron-SWIFT's own args.json writes target_modules as a JSON list; every word is checked
// whatever its place (all-linear first used to hide an all-router after it).
TEST(ImportMegatronLora, SavedArgsListsAndEveryWordChecked) {
  const std::string args =
      R"({"model": "Qwen/Qwen3-32B", "train_type": "lora", "target_modules": ["linear_qkv",)"
      R"( "linear_proj"], "tensor_model_parallel_size": 2, "sequence_parallel": true,)"
      R"( "micro_batch_size": 1, "global_batch_size": 16, "max_length": 2048})";
  auto r = ImportJob(args, "args.json", TwoH100());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.adapter.targets, (std::vector<std::string>{"linear_qkv", "linear_proj"}));
  // all-router adds the TopKRouter beside all-linear, whatever the order.
  for (const char* list : {"all-linear all-router", "all-router all-linear"}) {
    auto both = ImportJob(std::string(kDocScript) + " --target_modules " + list + "\n", "train.sh",
                          TwoH100());
    ASSERT_TRUE(both.ok()) << list << ": " << both.error().Format();
    EXPECT_EQ(both->job.adapter.targets, (std::vector<std::string>{"all-linear", "router"}))
        << list;
  }
  for (const char* list : {"all-linear all-embedding", "all-embedding all-linear"}) {
    auto bad = ImportJob(std::string(kDocScript) + " --target_modules " + list + "\n", "train.sh",
                         TwoH100());
    ASSERT_FALSE(bad.ok()) << list;
    EXPECT_NE(bad.error().Format().find("all-embedding"), std::string::npos) << list;
  }
}

// What follows the training command on its line (a redirection, a pipe into tee, `&`, the
// script's own "$@") is not an argument: it was joined onto the last flag's value (or, before
// lists were read, taken as a bare flag's value: `--bf16 2>&1`).
TEST(ImportMegatronLora, RedirectionsPipesAndBackgroundAreNotArguments) {
  ImportOptions o = TwoH100();
  o.gpus_per_node = 1;
  for (const char* tail : {" 2>&1 | tee train.log", " > train.log 2>&1", " \"$@\"", " &",
                           " 2>/dev/null &", " &> out.log", " >>train.log"}) {
    auto r = ImportJob(
        std::string("swift sft --model Qwen/Qwen3-32B --train_type full --max_length 2048 "
                    "--bf16") +
            tail + "\n",
        "train.sh", o);
    ASSERT_TRUE(r.ok()) << tail << ": " << r.error().Format();
    EXPECT_EQ(r->job.sequence.max_tokens, 2048) << tail;
    EXPECT_EQ(r->job.param_dtype, DType::kBf16) << tail;
  }
}

// Megatron-SWIFT's padding_free (on unless told otherwise) concatenates a micro batch's samples
// unpadded, so its tokens are the samples' real lengths, which no launch states. The flag was
// listed as unused, and the job sized at max_length with no word that its figures are bounds.
TEST(ImportMegatronLora, PaddingFreeSaysTheFiguresAreBounds) {
  auto has_note = [](const ImportReport& r) {
    for (const std::string& n : r.notes)
      if (n.starts_with("padding_free on")) return true;
    return false;
  };
  auto unused = [](const ImportReport& r) {
    for (const std::string& u : r.unused)
      if (u.starts_with("padding_free")) return true;
    return false;
  };
  // Megatron-SWIFT, the flag unstated: its default (on) is named.
  auto plain = ImportJob(std::string(kDocScript) + "\n", "train.sh", TwoH100());
  ASSERT_TRUE(plain.ok()) << plain.error().Format();
  ASSERT_TRUE(has_note(*plain));
  for (const std::string& n : plain->notes) {
    if (n.starts_with("padding_free on")) {
      EXPECT_NE(n.find("Megatron-SWIFT's padding_free defaults to true"), std::string::npos) << n;
      EXPECT_NE(n.find("sequence.max_tokens 2048"), std::string::npos) << n;
    }
  }
  // Stated on: read, not listed as unused.
  auto on = ImportJob(std::string(kDocScript) + " --padding_free true\n", "train.sh", TwoH100());
  ASSERT_TRUE(on.ok()) << on.error().Format();
  EXPECT_TRUE(has_note(*on));
  EXPECT_FALSE(unused(*on));
  // Off (padded to the longest sample) and packed rows (max_length long): nothing to add.
  for (const char* tail : {" --padding_free false\n", " --packing true\n"}) {
    auto r = ImportJob(std::string(kDocScript) + tail, "train.sh", TwoH100());
    ASSERT_TRUE(r.ok()) << tail << r.error().Format();
    EXPECT_FALSE(has_note(*r)) << tail;
    EXPECT_FALSE(unused(*r)) << tail;
  }
  // `swift sft` defaults to off; on when stated.
  ImportOptions one = TwoH100();
  one.gpus_per_node = 1;
  const std::string swift =
      "swift sft --model Qwen/Qwen3-32B --train_type full --max_length 4096 --bf16 true";
  auto hf_off = ImportJob(swift + "\n", "train.sh", one);
  ASSERT_TRUE(hf_off.ok()) << hf_off.error().Format();
  EXPECT_FALSE(has_note(*hf_off));
  auto hf_on = ImportJob(swift + " --padding_free true\n", "train.sh", one);
  ASSERT_TRUE(hf_on.ok()) << hf_on.error().Format();
  EXPECT_TRUE(has_note(*hf_on));
  EXPECT_FALSE(unused(*hf_on));
}

}  // namespace
}  // namespace strata

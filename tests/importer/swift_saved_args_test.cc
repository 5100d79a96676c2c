// The argument files ms-swift saves in its output directory (importer/swift_saved_args.h): the
// 1.x sft_args.json with its training_args.json, and the 3.x args.json world size. The goldens
// are verbatim files of modelscope/ms-swift (tests/golden/cli_import/SOURCES.md); every expected
// value is read off them by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "importer/import_test_support.h"
#include "strata/core/file_io.h"
#include "strata/importer/import_job.h"
#include "support/golden.h"

namespace strata::swift_saved_args_test {
namespace {

std::string Golden(const std::string& file) { return testing::ImportGolden(file); }

using testing::SourceOf;

bool HasNote(const ImportReport& r, const std::string& fragment) {
  for (const auto& n : r.notes) {
    if (n.find(fragment) != std::string::npos) return true;
  }
  return false;
}

ImportOptions BaichuanOnA100() {
  ImportOptions o;
  o.gpu = "A100";
  o.model = Golden("swift_v1_sft_args/baichuan2-7b.json");
  // Baichuan's W_pack is its fused q, k and v projections.
  o.overrides = {"adapter.targets=[gate_proj, up_proj, q_proj, k_proj, v_proj, down_proj, o_proj]"};
  return o;
}

TEST(SwiftSavedArgsTest, V1SftArgsWithTheTrainingArgsSavedBesideIt) {
  auto r = ImportJobFile(Golden("swift_v1_sft_args/sft_args.json"), BaichuanOnA100());
  ASSERT_TRUE(r.ok()) << r.error().Format();
  // sft_args.json: batch_size 1, gradient_accumulation_steps 16, max_length 2048, bf16 true,
  // gradient_checkpointing false; training_args.json: "Num processes: 1" (one GPU, no DDP).
  EXPECT_EQ(r->job.micro_batch, 1);
  EXPECT_EQ(r->job.cluster.gpus_per_node, 1);
  EXPECT_EQ(r->job.cluster.nodes, 1);
  EXPECT_EQ(r->job.layout.dp, 1);
  EXPECT_EQ(r->job.global_batch, 16);  // 1 x 16 x DP 1
  EXPECT_EQ(r->job.sequence.max_tokens, 2048);
  EXPECT_EQ(r->job.param_dtype, DType::kBf16);
  EXPECT_EQ(r->job.recompute.granularity, RecomputeGranularity::kNone);
  EXPECT_EQ(SourceOf(*r, "batch.micro_batch"), "sft_args.json: batch_size");
  EXPECT_EQ(SourceOf(*r, "recompute.granularity"), "sft_args.json: gradient_checkpointing");
  EXPECT_NE(SourceOf(*r, "cluster.gpus_per_node").find("training_args.json: distributed_state"),
            std::string::npos);
  // QLoRA (sft_type lora with quantization_bit 4, bitsandbytes): the job's adapter, with the
  // file's lora_rank 8, lora_alpha 32 and lora_dropout_p 0 (1.x's names). It was imported as
  // full training with a note. Its targets name Baichuan's fused W_pack: without the
  // Llama-style equivalent given (BaichuanOnA100's --set) the import stops, naming it (below).
  EXPECT_EQ(r->job.adapter.kind, AdapterKind::kQlora);
  EXPECT_EQ(r->job.adapter.rank, 8);
  EXPECT_DOUBLE_EQ(r->job.adapter.alpha, 32);
  EXPECT_DOUBLE_EQ(r->job.adapter.dropout, 0);
  EXPECT_FALSE(HasNote(*r, "sft_type lora: strata models full-parameter training"));
  ImportOptions bare = BaichuanOnA100();
  bare.overrides.clear();
  auto fused = ImportJobFile(Golden("swift_v1_sft_args/sft_args.json"), bare);
  ASSERT_FALSE(fused.ok());
  EXPECT_NE(fused.error().Format().find("'W_pack'"), std::string::npos) << fused.error().Format();
}

TEST(SwiftSavedArgsTest, V1WithoutAConfigNamesTheRegistryId) {
  ImportOptions o;
  o.gpu = "A100";
  auto r = ImportJobFile(Golden("swift_v1_sft_args/sft_args.json"), o);
  ASSERT_FALSE(r.ok());
  const std::string e = r.error().Format();
  EXPECT_NE(e.find("registry id 'baichuan2-7b-chat'"), std::string::npos) << e;
  EXPECT_NE(e.find("--model"), std::string::npos) << e;
}

TEST(SwiftSavedArgsTest, V1AloneAsksForTheGpusItCannotSee) {
  auto text = ReadFile(Golden("swift_v1_sft_args/sft_args.json"));
  ASSERT_TRUE(text.ok());
  // No training_args.json beside it: the file gives no world size.
  auto alone = ImportJob(*text, "elsewhere/sft_args.json", BaichuanOnA100());
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.error().Format().find("--gpus-per-node"), std::string::npos)
      << alone.error().Format();
  ImportOptions o = BaichuanOnA100();
  o.gpus_per_node = 2;
  auto two = ImportJob(*text, "elsewhere/sft_args.json", o);
  ASSERT_TRUE(two.ok()) << two.error().Format();
  EXPECT_EQ(two->job.global_batch, 32);  // 1 x 16 x DP 2
}

TEST(SwiftSavedArgsTest, V3ArgsJsonCarriesTheWorldItRanOn) {
  // The keys ms-swift 3.x writes for a 2-node run of 8 GPUs each.
  const std::string args = R"({"model": "Qwen/Qwen2.5-7B", "train_type": "full",
    "per_device_train_batch_size": 2, "gradient_accumulation_steps": 4, "max_length": 4096,
    "torch_dtype": "bfloat16", "local_world_size": 8, "global_world_size": 16, "rank": 0})";
  ImportOptions o;
  o.gpu = "H100 SXM";
  o.model = "llama-3.1-8b";
  auto r = ImportJob(args, "out/v0-20250101/args.json", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.cluster.gpus_per_node, 8);
  EXPECT_EQ(r->job.cluster.nodes, 2);
  EXPECT_EQ(r->job.layout.dp, 16);
  EXPECT_EQ(r->job.global_batch, 128);  // 2 x 4 x 16
  EXPECT_FALSE(HasNote(*r, "strata models full-parameter training"));
  EXPECT_EQ(r->job.attention.kernel, AttentionKernel::kFlash);  // unnamed: transformers' sdpa
  // attn_impl eager: transformers' eager attention writes the S x S scores to HBM.
  std::string eager = args;
  eager.insert(eager.size() - 1, R"(, "attn_impl": "eager")");
  auto e = ImportJob(eager, "out/v0-20250101/args.json", o);
  ASSERT_TRUE(e.ok()) << e.error().Format();
  EXPECT_EQ(e->job.attention.kernel, AttentionKernel::kUnfused);
  EXPECT_EQ(SourceOf(*e, "attention.kernel"), "args.json: attn_impl eager");
  // --nodes and --gpus-per-node still win over the file.
  o.nodes = 4;
  o.gpus_per_node = 8;
  auto over = ImportJob(args, "out/v0-20250101/args.json", o);
  ASSERT_TRUE(over.ok()) << over.error().Format();
  EXPECT_EQ(over->job.layout.dp, 32);
}

TEST(SwiftSavedArgsTest, LaterV1FilesNameTheCheckpoint) {
  // Later 1.x sft_args.json carry model_id_or_path: it names the model, no --model needed.
  auto text = ReadFile(Golden("swift_v1_sft_args/sft_args.json"));
  ASSERT_TRUE(text.ok());
  std::string named = *text;
  named.insert(named.size() - 1, R"(, "model_id_or_path": "llama-3.1-8b")");
  ImportOptions o;
  o.gpu = "A100";
  o.gpus_per_node = 1;
  o.overrides = {"adapter.targets=[all-linear]"};  // the file's W_pack is Baichuan's
  auto r = ImportJob(named, "elsewhere/sft_args.json", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.model, "llama-3.1-8b");
}

TEST(SwiftSavedArgsTest, V2DeepSpeedPresetNames) {
  // ms-swift 2.x named its presets default-zero2 / default-zero3 (3.x: zero2, zero3).
  auto text = ReadFile(Golden("swift_v1_sft_args/sft_args.json"));
  ASSERT_TRUE(text.ok());
  std::string zero3 = *text;
  zero3.insert(zero3.size() - 1, R"(, "deepspeed": "default-zero3")");
  ImportOptions o = BaichuanOnA100();
  o.gpus_per_node = 8;
  auto r = ImportJob(zero3, "elsewhere/sft_args.json", o);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_EQ(r->job.sharding.mode, ShardingMode::kZero3);
}

TEST(SwiftSavedArgsTest, SamplingArgumentsAreNotATrainingJob) {
  ImportOptions o;
  o.gpu = "A100";
  auto r = ImportJobFile(Golden("swift_sample_args/args.json"), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Format().find("a sampling run, not a training job"), std::string::npos)
      << r.error().Format();
}

TEST(SwiftSavedArgsTest, TruncatedSftArgsIsMalformedJsonNamingTheFile) {
  auto text = ReadFile(Golden("swift_v1_sft_args/sft_args.json"));
  ASSERT_TRUE(text.ok());
  for (size_t cut : {text->size() / 3, text->size() - 2}) {
    auto r = ImportJob(text->substr(0, cut), "runs/sft_args.json", BaichuanOnA100());
    ASSERT_FALSE(r.ok()) << cut;
    EXPECT_NE(r.error().Format().find("malformed JSON"), std::string::npos) << cut;
    EXPECT_NE(r.error().Format().find("runs/sft_args.json"), std::string::npos) << cut;
  }
  // A non-numeric batch size is an error naming the key, not a guess.
  std::string bad = *text;
  bad.replace(bad.find("\"batch_size\": 1"), 15, "\"batch_size\": \"one\"");
  auto r = ImportJob(bad, "runs/sft_args.json", BaichuanOnA100());
  ASSERT_FALSE(r.ok());
  // The error names the key the file has, where it was read (the mapper's name is HF's).
  EXPECT_NE(r.error().Format().find("read from sft_args.json: batch_size"), std::string::npos)
      << r.error().Format();
}

}  // namespace
}  // namespace strata::swift_saved_args_test

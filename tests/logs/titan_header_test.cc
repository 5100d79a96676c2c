// torchtitan's log header on lines kept verbatim from public logs (sources beside each case):
// the model, GPU, peak, batch and mesh it names, and the job strata builds from them.
#include "strata/logs/titan_header.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/logs/log_job.h"

namespace strata::titan_header_test {
namespace {

TitanHeader Read(const std::vector<std::string>& lines) {
  TitanHeader h;
  int64_t n = 0;
  for (const std::string& line : lines) ParseTitanHeaderLine(line, ++n, h);
  return h;
}

// pytorch/torchtitan pull request #1625 (2025-08, turn 0): rank 4's model and GPU lines, rank
// 0's peak and batch lines, with their launcher prefixes removed as the analyser does.
const std::vector<std::string> kPr1625 = {
    "[titan] 2025-08-22 07:52:56,570 - root - INFO - Building llama3 8B with "
    "TransformerModelArgs(_enforced='This field is used to enforce all fields have defaults.', "
    "dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, vocab_size=128256, multiple_of=1024, "
    "ffn_dim_multiplier=1.3, norm_eps=1e-05, rope_theta=500000, max_seq_len=8192, "
    "depth_init=True, use_flex_attn=False, attn_mask_type='causal', eos_id=0)",
    "[titan] 2025-08-22 07:52:56,707 - root - INFO - CUDA capacity: NVIDIA H100 with 94.99GiB "
    "memory",
    "[titan] 2025-08-22 07:52:56,723 - root - INFO - Model llama3 8B size: 8,030,261,248 total "
    "parameters",
    "[titan] 2025-08-22 07:52:57,467 - root - INFO - Peak FLOPS used for computing MFU: 9.890e+14",
    "[titan] 2025-08-22 07:52:57,498 - root - INFO - Trainer is initialized with local batch size "
    "1, global batch size 8, gradient accumulation steps 1, sequence length 8192, total steps 10 "
    "(warmup 200)",
    "[titan] 2025-08-22 07:52:57,498 - root - INFO - Training starts at step 1"};

TEST(TitanHeaderTest, ReadsModelGpuPeakAndBatch) {
  const TitanHeader h = Read(kPr1625);
  EXPECT_EQ(h.model_name, "llama3");
  EXPECT_EQ(h.model_flavor, "8B");
  EXPECT_EQ(h.model_line, 1);
  ASSERT_TRUE(h.total_params.has_value());
  EXPECT_EQ(*h.total_params, 8030261248);
  EXPECT_EQ(h.device_name, "NVIDIA H100");
  EXPECT_NEAR(h.device_gib, 94.99, 1e-9);
  ASSERT_TRUE(h.peak_flop_per_s.has_value());
  EXPECT_NEAR(*h.peak_flop_per_s, 9.890e14, 1e3);
  EXPECT_EQ(h.local_batch, 1);
  EXPECT_EQ(h.global_batch, 8);
  EXPECT_EQ(h.accumulation, 1);
  EXPECT_EQ(h.seq_len, 8192);
  EXPECT_EQ(h.batch_line, 5);
}

TEST(TitanHeaderTest, ReadsTheMeshInBothSpellings) {
  struct Case {
    const char* line;
    std::vector<std::pair<std::string, int64_t>> mesh;
  };
  const Case cases[] = {
      // pytorch/torchtitan pull request #171 (2024-03, turn 0).
      {"2024-03-27 14:30:01,182 - root - INFO - Building 2-D device mesh with ['dp', 'tp'], [2, 2]",
       {{"dp", 2}, {"tp", 2}}},
      // pytorch/torchtitan pull request #1349 (2025-06, description).
      {"[titan] 2025-06-26 18:12:46,592 - root - INFO - Building 1-D device mesh with "
       "['dp_shard'], [8]",
       {{"dp_shard", 8}}},
      // pytorch/torchtitan issue #3336 (2026-06, comment by syed-ahmed).
      {"[titan] 2026-06-07 10:00:46,453 - root - INFO - Building device mesh with parallelism: "
       "pp=1, dp_replicate=1, dp_shard=256, cp=1, tp=1, ep=32",
       {{"pp", 1}, {"dp_replicate", 1}, {"dp_shard", 256}, {"cp", 1}, {"tp", 1}, {"ep", 32}}},
  };
  for (const Case& c : cases) {
    TitanHeader h;
    EXPECT_TRUE(ParseTitanHeaderLine(c.line, 7, h)) << c.line;
    EXPECT_EQ(h.mesh, c.mesh) << c.line;
    EXPECT_EQ(h.mesh_line, 7);
  }
}

TEST(TitanHeaderTest, JobFromTheHeader) {
  auto job = JobFromTitanHeader(Read(kPr1625));
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->model, "llama-3.1-8b");
  // No mesh line: GPUs = global 8 / (local 1 x accumulation 1) = 8, one node of 8.
  const std::vector<std::string> expected = {
      "cluster.gpu=H100 SXM", "cluster.gpus_per_node=8", "cluster.nodes=1", "parallel.tp=1",
      "parallel.pp=1",        "parallel.cp=1",           "parallel.dp=8",   "batch.micro_batch=1",
      "batch.global_batch=8", "sequence.max_tokens=8192"};
  EXPECT_EQ(job->sets, expected);
  EXPECT_NE(job->source.find("whose dense bf16 peak torchtitan also divides by (line 4)"),
            std::string::npos)
      << job->source;
}

TEST(TitanHeaderTest, TheModelTableIsTheImportersToo) {
  // PR #1625's header with its model line edited to torchtitan's qwen3 32B flavor: the name comes
  // from data/models/torchtitan_flavors.yaml, the table the TOML importer reads.
  std::vector<std::string> lines = kPr1625;
  lines[0] =
      "[titan] 2025-08-22 07:52:56,570 - root - INFO - Building qwen3 32B with Qwen3ModelArgs()";
  lines[2] = "";
  auto job = JobFromTitanHeader(Read(lines));
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->model, "qwen3-32b");
}

// A header cut off or garbled: what it still gives is used, what it lost is named.
TEST(TitanHeaderTest, TruncatedAndMalformedHeaders) {
  // Cut inside the batch line (the log of a job killed while writing it): no batch is read.
  std::vector<std::string> cut(kPr1625.begin(), kPr1625.begin() + 5);
  cut[4] = cut[4].substr(0, cut[4].find("global batch"));
  const TitanHeader h = Read(cut);
  EXPECT_EQ(h.model_line, 1);
  EXPECT_EQ(h.device_line, 2);
  EXPECT_EQ(h.batch_line, 5);
  EXPECT_EQ(h.local_batch, 1);
  EXPECT_FALSE(h.global_batch.has_value());
  auto job = JobFromTitanHeader(h);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().message,
            "the torchtitan log header does not give the batch and sequence length: its batch "
            "line (line 5) has no readable global batch size, sequence length");
  // A mesh line whose names and sizes disagree is not read as a mesh (no dimension guessed).
  TitanHeader mesh;
  EXPECT_TRUE(ParseTitanHeaderLine(
      "2024-03-27 14:30:01,182 - root - INFO - Building 2-D device mesh with ['dp', 'tp'], [2]", 3,
      mesh));
  EXPECT_TRUE(mesh.mesh.empty());
  EXPECT_EQ(mesh.mesh_line, 0);
  // Garbled numbers read as absent, not as zero.
  TitanHeader garbled;
  ParseTitanHeaderLine(
      "[titan] 2025-08-22 07:52:57,498 - root - INFO - Trainer is initialized with local batch "
      "size one, global batch size 8, gradient accumulation steps 1, sequence length 8192",
      9, garbled);
  EXPECT_FALSE(garbled.local_batch.has_value());
  EXPECT_EQ(garbled.global_batch, 8);
  ParseTitanHeaderLine(
      "[titan] 2025-08-22 07:52:57,467 - root - INFO - Peak FLOPS used for "
      "computing MFU: not-a-number",
      10, garbled);
  EXPECT_FALSE(garbled.peak_flop_per_s.has_value());
  EXPECT_EQ(garbled.peak_line, 0);
}

TEST(TitanHeaderTest, WhatTheHeaderLacksIsNamed) {
  // pytorch/torchtitan pull request #3393 (2026-05, turn 0): a debug model on a Tesla T4.
  const TitanHeader h =
      Read({"[titan] 2026-05-18 16:07:12,516 - root - INFO - CUDA capacity: Tesla T4 with "
            "14.56GiB memory",
            "[titan] 2026-05-18 16:07:12,518 - root - INFO - Model llama3 debugmodel size: "
            "6,163,712 total parameters"});
  auto job = JobFromTitanHeader(h);
  ASSERT_FALSE(job.ok());
  // data/models/torchtitan_flavors.yaml says why the catalog has none.
  EXPECT_EQ(job.error().message,
            "torchtitan model 'llama3/debugmodel' (line 2) has no strata catalog entry: "
            "torchtitan's test configuration (dim 256, 6 layers), not a released model");
  auto with_model = JobFromTitanHeader(h, "llama-3.1-8b");
  ASSERT_FALSE(with_model.ok());
  EXPECT_EQ(with_model.error().message,
            "the GPU the log names, 'Tesla T4' (line 1), is not in data/gpus.yaml");
  auto with_gpu = JobFromTitanHeader(h, "llama-3.1-8b", {"cluster.gpu=A100 80GB"});
  ASSERT_FALSE(with_gpu.ok());
  EXPECT_NE(with_gpu.error().message.find("does not give the batch and sequence length"),
            std::string::npos);
  // A truncated line reads nothing.
  TitanHeader cut;
  EXPECT_FALSE(
      ParseTitanHeaderLine("[titan] 2026-05-18 16:07:12,516 - root - INFO - CUDA capa", 1, cut));
  EXPECT_FALSE(cut.Any());
}

}  // namespace
}  // namespace strata::titan_header_test

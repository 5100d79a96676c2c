// megatron-core's rules and defaults, as megatron-core applies them:
//  - TransformerConfig raises "When using expert parallelism and tensor parallelism, sequence
//    parallelism must be used" (megatron/core/transformer/transformer_config.py);
//  - the gradient accumulation buffer is fp32 (--accumulate-allreduce-grads-in-fp32, the bf16
//    recipe's default) and the cross entropy unfused (--cross-entropy-loss-fusion off);
//  - FP8 is not weights at 1 byte (embedding and output layer stay bf16, Transformer Engine keeps
//    extra copies): rejected until modelled.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/job/job_spec.h"
#include "strata/job/job_validation.h"
#include "strata/job/resolved_job.h"

namespace strata {
namespace {

const std::vector<std::string> kNoFile = {"cluster=h20-5x8", "parallel.ep=8", "batch.micro_batch=1",
                                          "batch.global_batch=80", "sequence.max_tokens=8Ki"};

TEST(MegatronRules, TpWithEpRequiresSequenceParallel) {
  // Reference job at TP2: DP 20, EP 8 divides TP x CP x DP = 40; SP off in the file.
  auto bad = LoadJobSpec(kReferenceJobName, {"parallel.tp=2"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().field.find("parallel.sequence_parallel"), std::string::npos);
  EXPECT_NE(bad.error().message.find("TP 2 with EP 8 requires sequence parallelism"),
            std::string::npos)
      << bad.error().Format();
  EXPECT_NE(bad.error().hint.find("--set parallel.sequence_parallel=true"), std::string::npos);
  auto good = LoadJobSpec(kReferenceJobName, {"parallel.tp=2", "parallel.sequence_parallel=true"});
  EXPECT_TRUE(good.ok()) << good.error().Format();
  // TP with EP 1, or EP with TP 1, needs no SP.
  EXPECT_TRUE(LoadJobSpec(kReferenceJobName, {"parallel.tp=2", "parallel.ep=1"}).ok());
}

TEST(MegatronRules, DefaultsAreMegatronsWhenTheJobSaysNothing) {
  auto spec = BuildJobSpec("qwen3.6-35b-a3b", kNoFile);
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_EQ(spec->grad_dtype, DType::kFp32);
  EXPECT_EQ(spec->cross_entropy, CrossEntropyImpl::kNative);
  EXPECT_EQ(spec->recompute.granularity, RecomputeGranularity::kNone);
  EXPECT_FALSE(spec->layout.sequence_parallel);
}

TEST(MegatronRules, TheReferenceJobStatesItsOwn) {
  // data/jobs/qwen3.6-35b-a3b-sft-h20x40.yaml: bf16 gradient buffer (the course's fix) and the
  // fused cross entropy (assumed; the unfused one cannot fit).
  auto spec = LoadJobSpec(kReferenceJobName);
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_EQ(spec->grad_dtype, DType::kBf16);
  EXPECT_EQ(spec->cross_entropy, CrossEntropyImpl::kFused);
}

TEST(MegatronRules, Fp8IsRejectedWithTheReason) {
  auto spec = LoadJobSpec(kReferenceJobName, {"precision.params=fp8"});
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().field, "--set precision.params");
  EXPECT_NE(spec.error().message.find("FP8 training keeps bf16 parameters"), std::string::npos)
      << spec.error().Format();
  // FP8 is configured as a recipe (training-modes), which the hint names.
  EXPECT_NE(spec.error().hint.find("fp8: {recipe:"), std::string::npos);
}

TEST(MegatronRules, TheLayoutHeaderAlwaysStatesSequenceParallelism) {
  ParallelLayout l;
  l.tp = 4;
  l.ep = 8;
  l.dp = 16;
  l.sequence_parallel = true;
  EXPECT_EQ(LayoutHeader(l, true), "TP4 PP1 VPP1 CP1 EP8 ETP1 DP16 (expert-DP 8), SP on");
  l.sequence_parallel = false;
  l.tp = 1;
  EXPECT_EQ(LayoutHeader(l, true).substr(LayoutHeader(l, true).size() - 6), "SP off");
}

// An uneven pipeline says its split in the header (megatron's first/last stage layer counts).
TEST(MegatronRules, TheLayoutHeaderStatesAnUnevenPipeline) {
  ParallelLayout l;
  l.pp = 2;
  l.dp = 4;
  l.last_stage_layers = 11;
  EXPECT_EQ(LayoutHeader(l, true),
            "TP1 PP2 (last 11 layers) VPP1 CP1 EP1 ETP1 DP4 (expert-DP 4), SP off");
  l.first_stage_layers = 13;
  EXPECT_EQ(StageSplitSuffix(l), " (first 13, last 11 layers)");
  l.last_stage_layers = 0;
  EXPECT_EQ(StageSplitSuffix(l), " (first 13 layers)");
  l.first_stage_layers = 0;
  EXPECT_EQ(StageSplitSuffix(l), "");
}

TEST(TokenCounts, SequenceLengthsReadKAsBinary) {
  // "8K context" = 8,192 tokens; "128K" = 131,072; Ki/Mi say it outright.
  auto spec =
      BuildJobSpec("qwen3.6-35b-a3b", {"cluster=h20-5x8", "parallel.ep=8", "batch.micro_batch=1",
                                       "batch.global_batch=80", "sequence.max_tokens=8K"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_DOUBLE_EQ(spec->sequence.max_tokens, 8192.0);
  // Throughput counts stay decimal: 50K tokens/s = 50,000.
  auto rate = LoadJobSpec(kReferenceJobName, {"throughput.tokens_per_s=50K"});
  ASSERT_TRUE(rate.ok()) << rate.error().Format();
  EXPECT_DOUBLE_EQ(rate->throughput.tokens_per_s, 50000.0);
  // 4Mi is accepted like 48Ki: 4 x 1,048,576.
  auto mi = LoadJobSpec(kReferenceJobName,
                        {"throughput.tokens_per_step=4Mi", "throughput.step_time=100s"});
  ASSERT_TRUE(mi.ok()) << mi.error().Format();
  EXPECT_DOUBLE_EQ(mi->throughput.tokens_per_step, 4194304.0);
}

}  // namespace
}  // namespace strata

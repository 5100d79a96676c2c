#include "strata/job/job_validation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/golden.h"

namespace strata {
namespace {

// The reference job with one override each; every megatron-core layout rule gets a case.
// Qwen3.6-35B-A3B: 16 attention heads, 2 KV heads, linear attention 16 key / 32 value heads,
// 256 experts with FFN width 512, 40 layers (models/README.md).
struct RuleCase {
  const char* name;
  std::vector<std::string> sets;
  const char* expected;  // the full error text
};

Result<Job> ReferenceWith(const std::vector<std::string>& sets) {
  STRATA_ASSIGN_OR_RETURN(JobSpec spec, LoadJobSpec(kReferenceJobName, sets));
  return ResolveJob(spec);
}

constexpr const char* kFile = "data/jobs/qwen3.6-35b-a3b-sft-h20x40.yaml";

TEST(JobValidation, TheReferenceJobIsValid) {
  auto job = ReferenceWith({});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->gpu().name, "H20");
  EXPECT_EQ(job->model.layers.size(), 40u);
}

TEST(JobValidation, EachRuleHasAClearError) {
  const RuleCase cases[] = {
      // 40 GPUs / 3 is not whole; divisors of 40 work.
      {"world_not_divisible",
       {"parallel.tp=3"},
       "parallel: world size 40 (5 nodes x 8 GPUs) is not divisible by TP x PP x CP = 3 x 1 x 1 "
       "= 3\n  hint: TP values (at this PP and CP) that would work: 1, 2, 4, 5, 8, 10, 20, 40"},
      {"dp_mismatch",
       {"parallel.dp=20"},
       "--set parallel.dp: DP 20 does not match world / (TP x PP x CP) = 40 / 1 = 40\n  hint: DP "
       "that "
       "would work: 40"},
      // EP x ETP must divide TP x CP x DP = 40. The rule runs before the model is read, so its
      // values (the divisors of 40) need not divide the model's 256 experts: 5, 10, 20 and 40 do
      // not, and the hint says that the model's rule applies too (before it listed them as
      // values "that would work", which the next run then refused).
      {"ep_outside_tp_cp_dp",
       {"parallel.ep=16"},
       "--set parallel.ep: EP x ETP = 16 x 1 = 16 must divide TP x CP x DP = 40 (experts are laid "
       "out "
       "inside the TP x CP x DP ranks)\n  hint: EP values (at this ETP) that would work: 1, 2, 4, "
       "5, 8, 10, 20, 40; EP must also divide the model's number of experts"},
      {"vpp_without_pp",
       {"parallel.vpp=2"},
       "--set parallel.vpp: virtual pipeline stages (VPP 2) need PP > 1\n  hint: VPP that would "
       "work: 1"},
      // 80 is not a multiple of 3 x 40 = 120.
      {"global_batch",
       {"batch.micro_batch=3"},
       "batch.global_batch: global batch 80 is not a multiple of micro batch x DP = 3 x 40 = 120\n"
       "  hint: global batches that would work: 120, 240, 480"},
      // Rule errors caused by a --set value say so.
      // CP 2 cuts 49,153 tokens into 4 chunks: not whole.
      {"cp_chunks",
       {"parallel.cp=2", "sequence.max_tokens=49153"},
       "--set sequence.max_tokens: max_tokens 49153 is not divisible by 2 x CP = 4"},
      // 2 KV heads cannot split over TP 4 when ms-swift trains through DeepSpeed (zero3): whole
      // heads per rank; TP 1 and 2 divide 2 and 40. (Under zero1 it trains through
      // megatron-core, which runs TP 4 with one KV head per rank: TpAboveTheKvHeads below.)
      {"kv_heads",
       {"parallel.tp=4", "parallel.sequence_parallel=true", "sharding.mode=zero3"},
       "parallel.tp: KV heads (query groups) (2) must be divisible by TP (4)\n  hint: TP values "
       "that would work: 1, 2; ms-swift with sharding zero3 does not train through "
       "megatron-core, which alone runs TP above the KV heads (one per rank); the others split "
       "whole heads"},
      // 256 experts over EP 5: EP must divide 256 and 40 -> 1, 2, 4, 8.
      {"experts",
       {"parallel.ep=5"},
       "parallel.ep: 256 experts cannot be split evenly over EP 5\n  hint: EP values that would "
       "work: 1, 2, 4, 8"},
      // Expert FFN 512 over ETP 5: ETP must divide 512 and 40 / EP 8 = 5 -> 1.
      {"etp",
       {"parallel.ep=1", "parallel.etp=5"},
       "parallel.etp: the expert FFN width (512) must be divisible by ETP (5)\n  hint: ETP values "
       "that would work: 1, 2, 4, 8"},
      // 40 layers over PP 8 x VPP 2 = 16 chunks: not whole; PP values dividing 40/2 and 40, or
      // megatron-core's uneven stages (which work with VPP too).
      {"layers",
       {"parallel.pp=8", "parallel.vpp=2", "parallel.ep=1"},
       "parallel.pp: 40 layers cannot be split evenly into PP x VPP = 8 x 2 = 16 chunks\n  hint: "
       "PP values (at this VPP) that would work: 1, 2, 4, 5, 10, 20; or give the first/last stage "
       "their own layer counts (parallel.first_stage_layers, parallel.last_stage_layers)"},
      {"recompute_layers",
       {"recompute.num_layers=41"},
       "recompute.num_layers: recompute.num_layers 41 exceeds the 40 layers of one pipeline "
       "chunk\n  hint: num_layers values that would work: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
       "13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, "
       "35, 36, 37, 38, 39, 40"},
      {"frozen_name",
       {"frozen=[visoin]"},
       "frozen: unknown module kind 'visoin' in frozen\n  hint: did you mean 'vision'?"},
      {"unknown_gpu", {"cluster.gpu=H2O"}, nullptr},
      {"unknown_model", {"model=qwen3.6-35b"}, nullptr},
  };
  for (const auto& c : cases) {
    auto job = ReferenceWith(c.sets);
    ASSERT_FALSE(job.ok()) << c.name;
    if (c.expected == nullptr) {
      // Catalog misses: the message comes from the catalog's owner; it must list or suggest
      // names, and name the field.
      EXPECT_FALSE(job.error().hint.empty()) << c.name << ": " << job.error().Format();
      EXPECT_FALSE(job.error().field.empty()) << c.name << ": " << job.error().Format();
      continue;
    }
    EXPECT_EQ(job.error().Format(), std::string(kFile) + ": " + c.expected) << c.name;
  }
}

// megatron-core accepts query groups that are a multiple or a divisor of TP
// (NVIDIA/Megatron-LM d98e8a64, megatron/core/transformer/transformer_config.py): the reference
// job (ms-swift under zero1, so megatron-core) runs its 2 KV heads at TP 4 and 8 (2 and 4 ranks
// per KV head). What megatron-core refuses: QueryGroupsOverTp (tests/memory).
TEST(JobValidation, TpAboveTheKvHeads) {
  for (const char* tp : {"parallel.tp=4", "parallel.tp=8"}) {
    auto job = ReferenceWith({tp, "parallel.sequence_parallel=true"});
    ASSERT_TRUE(job.ok()) << tp << ": " << job.error().Format();
    EXPECT_EQ(job->query_groups(), QueryGroupSplit::kMultipleOrDivisor);
  }
}

TEST(JobValidation, HistogramLongerThanMaxTokens) {
  // The histogram's longest sample is 60,000 tokens; activations sized for 49,152 would lie.
  const std::string yaml =
      "model: qwen3.6-35b-a3b\n"
      "cluster: {gpu: H20, gpus_per_node: 8, nodes: 5}\n"
      "parallel: {ep: 8}\n"
      "batch: {micro_batch: 1, global_batch: 80}\n"
      "sequence: {max_tokens: 49152, histogram: " +
      testing::TestPath("job/data/long_tail_lengths.txt") + "}\n";
  auto spec = ParseJobSpec(yaml, "j.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_TRUE(spec->sequence.variable_length());
  auto job = ResolveJob(*spec);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().Format(),
            "j.yaml: sequence.histogram: the histogram's longest sample (60000 tokens) exceeds "
            "max_tokens (49152)\n  hint: set sequence.max_tokens to at least 60000");
}

TEST(JobValidation, PaddedVocab) {
  // megatron-core pads to a multiple of 128 x TP: 248,320 = 1,940 x 128 needs no padding at TP 1
  // or 2 (248,320 / 256 = 970); 32,000 at TP 8 -> ceil(32,000 / 1,024) x 1,024 = 32 x 1,024.
  EXPECT_EQ(PaddedVocab(248320, 1), 248320);
  EXPECT_EQ(PaddedVocab(248320, 2), 248320);
  EXPECT_EQ(PaddedVocab(32000, 8), 32768);
  EXPECT_EQ(PaddedVocab(50257, 1), 50304);  // GPT-2: the classic 50,304
}

}  // namespace
}  // namespace strata

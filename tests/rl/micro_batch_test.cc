// verl's dynamic batch (use_dynamic_bsz): how many micro batches a DP rank packs and how many
// tokens each holds, worked by hand from verl's rule (volcengine/verl@
// b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/seqlen_balancing.py:387,
// num_micro_batches = min(samples, ceildiv(total tokens, max_token_len)), and max_token_len =
// ppo_max_token_len_per_gpu x the SP / CP size, dp_actor.py:552, megatron_actor.py:806).
#include "strata/rl/micro_batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace strata {
namespace {

struct PackCase {
  const char* name;
  double samples;  // per DP rank
  double mean_tokens;
  int64_t budget;  // per GPU
  int64_t cp;
  int64_t micro_batches;
  double tokens;  // per micro batch
  int64_t divided_by = 1;
};

TEST(MicroBatchTest, PackedLikeVerl) {
  const PackCase kCases[] = {
      // run_qwen2-7b_seq_balance.sh: ppo_mini_batch_size 512 x n 1 over DP 8 = 64 samples of
      // 4,096 + 4,096 tokens, 24,000-token budget: 524,288 / 24,000 = 21.8 -> 22 micro batches
      // of 524,288 / 22 = 23,831.27 tokens (a fixed micro batch of 1 sample: 64 of 8,192).
      {"ppo_qwen2_7b_update", 64, 8192, 24000, 1, 22, 524288.0 / 22},
      // Its critic, 98,304 tokens: 524,288 / 98,304 = 5.3 -> 6 of 87,381.33.
      {"ppo_qwen2_7b_critic", 64, 8192, 98304, 1, 6, 524288.0 / 6},
      // Its log-prob passes over all 4,096 samples / DP 8 = 512 at 24,000 tokens:
      // 4,194,304 / 24,000 = 174.8 -> 175 of 23,967.45.
      {"ppo_qwen2_7b_log_prob", 512, 8192, 24000, 1, 175, 4194304.0 / 175},
      // run_qwen3moe-30b_megatron_96gb.sh: 128 x 16 / DP 8 = 256 samples of 10,240 tokens in a
      // budget of exactly one sample: 256 micro batches of 10,240 (its fixed micro batch of 2
      // would be 128 of 20,480).
      {"qwen3moe_one_sample_budget", 256, 10240, 10240, 1, 256, 10240},
      // Never more micro batches than samples: 4 samples of 1,000 tokens, 900-token budget:
      // ceil(4,000 / 900) = 5, capped at 4 of 1,000.
      {"capped_at_samples", 4, 1000, 900, 1, 4, 1000},
      // Fewer tokens than one budget: one micro batch of everything (4 x 100).
      {"one_micro_batch", 4, 100, 1000, 1, 1, 400},
      // CP 4 multiplies the budget: 8 x 8,192 = 65,536 over 8,192 x 4 = 32,768 -> 2 of 32,768.
      {"context_parallel", 8, 8192, 8192, 4, 2, 32768, 1},
      // Interleaved pipelining, PP 4: 22 micro batches round up to 24 (seqlen_balancing.py:396,
      // roundup_divisible by microbatch_group_size_per_vp_stage), 524,288 / 24 tokens each.
      {"interleaved_pp4", 64, 8192, 24000, 1, 24, 524288.0 / 24, 4},
  };
  for (const PackCase& c : kCases) {
    const PackedMicroBatches p =
        PackMicroBatches(c.samples, c.mean_tokens, c.budget, c.cp, c.divided_by);
    EXPECT_EQ(p.micro_batches, c.micro_batches) << c.name;
    EXPECT_NEAR(p.tokens_per_micro_batch, c.tokens, 1e-6) << c.name;
    EXPECT_EQ(p.budget_tokens, c.budget * c.cp) << c.name;
  }
}

TEST(MicroBatchTest, Describes) {
  // One sample a rank: "1 sample", not "1 samples" (5,120 tokens in one 16,384-token budget).
  EXPECT_EQ(DescribePacked(PackMicroBatches(1, 5120, 16384, 1)),
            "1 micro batch of 5,120 tokens (1 sample x 5,120 tokens in 16,384-token budgets)");
  EXPECT_EQ(DescribePacked(PackMicroBatches(64, 8192, 24000, 1)),
            "22 micro batches of 23,831 tokens (64 samples x 8,192 tokens in 24,000-token "
            "budgets)");
  // 8 samples of 5,120 tokens in 3 parts: 3 + 3 + 2 samples, the largest 15,360.
  EXPECT_EQ(DescribePacked(PackMicroBatches(8, 5120, 16384, 1, 1, std::vector<double>(8, 5120))),
            "3 micro batches of 13,653 tokens (8 samples x 5,120 tokens in 16,384-token "
            "budgets), the largest 15,360");
}

// verl's partition of a rank's samples (volcengine/verl@
// b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/seqlen_balancing.py, karmarkar_karp over
// calculate_workload's 24,576 L + L^2), traced by hand. Each state is k part sums, heaviest
// first; the heap pops the largest spread (heaviest - lightest part) first, and a merge adds
// the first popped state's i-th heaviest part to the second's (k - 1 - i)-th.
TEST(MicroBatchTest, PartitionIsVerlsDifferencingOfTheWorkloads) {
  struct PartitionCase {
    const char* name;
    std::vector<double> samples;
    int64_t parts;
    std::vector<double> tokens;  // each part's, heaviest workload first
  };
  const PartitionCase kCases[] = {
      // 1,000 ... 6,000 tokens in 3 (w = 24,576 L + L^2: 25.576M, 53.152M, 82.728M, 114.304M,
      // 147.88M, 183.456M). Pop 6,000 and 5,000: (6,000 | 5,000 | -), spread 183.456M; pop it
      // and 4,000: (6,000 | 5,000 | 4,000), spread 69.152M; pop 3,000 (82.728M) and it:
      // (3,000 + 4,000 | 6,000 | 5,000) = (197.032M | 183.456M | 147.88M), spread 49.152M;
      // pop 2,000 (53.152M) and it: (2,000 + 5,000 | 3,000 + 4,000 | 6,000) = (201.032M |
      // 197.032M | 183.456M), spread 17.576M; pop 1,000 (25.576M) and it: (1,000 + 6,000 |
      // 2,000 + 5,000 | 3,000 + 4,000) = (209.032M | 201.032M | 197.032M): 7,000 tokens each.
      // The spread bound it replaces: 7,000 + 2 / 3 x 6,000 = 11,000.
      {"six_samples_in_three", {1000, 2000, 3000, 4000, 5000, 6000}, 3, {7000, 7000, 7000}},
      // One 6,000-token sample (183.456M) and seven of 1,000 (25.576M each) in 2: the long
      // sample's state pops first each time (spread 183.456M - j x 25.576M above 25.576M for
      // j <= 6) and each short sample joins the other part, 7 x 25.576M = 179.032M: the short
      // part is the lighter workload but the larger micro batch, 7,000 tokens against 6,000.
      {"workload_not_tokens", {6000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, 2, {6000, 7000}},
      // Equal samples: whole samples, ceil(64 / 22) = 3 x 8,192 = 24,576 the largest.
      {"equal_samples", std::vector<double>(64, 8192), 22, {}},
      // One part holds everything; more parts than samples are clamped to the samples.
      {"one_part", {100, 200, 300}, 1, {600}},
      {"clamped", {100, 200}, 5, {200, 100}},
  };
  for (const PartitionCase& c : kCases) {
    const std::vector<double> got = PartitionTokens(c.samples, c.parts);
    if (c.tokens.empty()) {
      ASSERT_EQ(got.size(), 22u) << c.name;
      EXPECT_NEAR(*std::ranges::max_element(got), 24576, 1e-9) << c.name;
      continue;
    }
    ASSERT_EQ(got.size(), c.tokens.size()) << c.name;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], c.tokens[i], 1e-9) << c.name;
  }
}

// The memory's micro batch is the largest part of that partition, at least the balanced share.
// Before, it was the differencing method's spread bound, tokens / k + (k - 1) / k x the longest
// sample: 20,480 for the first case, 11,000 for the second.
TEST(MicroBatchTest, LargestMicroBatchIsTheLargestPartVerlForms) {
  // 8 samples of 5,120 (the reference RL job's mean, every sample at it) at 16,384 tokens:
  // k = ceil(40,960 / 16,384) = 3, share 13,653.33; parts of 3, 3 and 2 samples: 15,360.
  const PackedMicroBatches fixed =
      PackMicroBatches(8, 5120, 16384, 1, 1, std::vector<double>(8, 5120));
  EXPECT_EQ(fixed.micro_batches, 3);
  EXPECT_NEAR(fixed.largest_micro_batch_tokens, 15360, 1e-9);
  // The six samples above at an 8,000-token budget: k = ceil(21,000 / 8,000) = 3, 7,000 each,
  // the share.
  const PackedMicroBatches six =
      PackMicroBatches(6, 3500, 8000, 1, 1, {1000, 2000, 3000, 4000, 5000, 6000});
  EXPECT_EQ(six.micro_batches, 3);
  EXPECT_NEAR(six.largest_micro_batch_tokens, 7000, 1e-9);
  // No samples given: the balanced share.
  EXPECT_NEAR(PackMicroBatches(8, 5120, 16384, 1).largest_micro_batch_tokens, 40960.0 / 3, 1e-9);
}

}  // namespace
}  // namespace strata

// verl's dynamic batch (use_dynamic_bsz): how many micro batches a DP rank packs and how many
// tokens each holds, worked by hand from verl's rule (volcengine/verl@
// b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/seqlen_balancing.py:387,
// num_micro_batches = min(samples, ceildiv(total tokens, max_token_len)), and max_token_len =
// ppo_max_token_len_per_gpu x the SP / CP size, dp_actor.py:552, megatron_actor.py:806).
#include "strata/rl/micro_batch.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(DescribePacked(PackMicroBatches(8, 5120, 16384, 1, 1, 10240)),
            "3 micro batches of 13,653 tokens (8 samples x 5,120 tokens in 16,384-token "
            "budgets), the largest up to 20,480");
}

// The largest micro batch verl's partition can leave (it sets the pass's memory peak), worked
// from the Karmarkar-Karp spread bound: largest <= tokens / k + (k - 1) / k x the longest
// sample, at most all the rank's tokens and (samples - k + 1) longest samples (every other part
// holds one); with every sample at the cap, ceil(samples / k) samples. Before: every micro
// batch was priced at the balanced share, tokens / k.
TEST(MicroBatchTest, LargestMicroBatchIsUpToOneSampleAboveTheShare) {
  struct LargestCase {
    const char* name;
    double samples, mean, longest;
    int64_t budget;
    int64_t micro_batches;
    double largest;
  };
  const LargestCase kCases[] = {
      // The reference RL job's update at 16,384 tokens: 8 samples x 5,120 (cap 10,240) in 3:
      // 40,960 / 3 + 2 / 3 x 10,240 = 13,653.33 + 6,826.67 = 20,480.
      {"reference_update", 8, 5120, 10240, 16384, 3, 20480},
      // Its log-prob passes: 32 x 5,120 = 163,840 in 10: 16,384 + 0.9 x 10,240 = 25,600.
      {"reference_log_prob", 32, 5120, 10240, 16384, 10, 25600},
      // One micro batch holds everything: 4 x 100 = 400 (no spread to add).
      {"one_micro_batch", 4, 100, 300, 1000, 1, 400},
      // Others hold one sample each: 3 samples of mean 1,000, cap 1,500, budget 1,500 ->
      // k = 2; the spread bound 1,500 + 750 = 2,250 against (3 - 2 + 1) x 1,500 = 3,000 and
      // all 3,000 tokens: 2,250.
      {"spread_bound", 3, 1000, 1500, 1500, 2, 2250},
      // Every sample at the cap (means taken at the caps, as an import without a log does):
      // 64 x 8,192 in 22 parts of whole samples: ceil(64 / 22) = 3 x 8,192 = 24,576.
      {"all_at_the_cap", 64, 8192, 8192, 24000, 22, 24576},
      // A budget of one capped sample: one sample a micro batch, 10,240.
      {"one_sample_budget", 256, 10240, 10240, 10240, 256, 10240},
  };
  for (const LargestCase& c : kCases) {
    const PackedMicroBatches p = PackMicroBatches(c.samples, c.mean, c.budget, 1, 1, c.longest);
    EXPECT_EQ(p.micro_batches, c.micro_batches) << c.name;
    EXPECT_NEAR(p.largest_micro_batch_tokens, c.largest, 1e-6) << c.name;
  }
}

}  // namespace
}  // namespace strata

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
}

}  // namespace
}  // namespace strata

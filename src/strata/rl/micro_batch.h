// The actor's micro batches under verl's dynamic batch (`use_dynamic_bsz`): instead of a fixed
// count of samples (ppo_micro_batch_size_per_gpu), each DP rank packs its samples into as few
// micro batches as hold ppo_max_token_len_per_gpu tokens each, balanced among themselves.
// Sources (volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7): verl/utils/
// seqlen_balancing.py rearrange_micro_batches (lines 382-402), verl/workers/actor/dp_actor.py
// (lines 460, 552: the budget x the Ulysses SP size), verl/workers/actor/megatron_actor.py (lines
// 223, 806: x the context parallel size). Formulas with a worked case: docs/rl.md, "Dynamic batch".
#ifndef STRATA_RL_MICRO_BATCH_H_
#define STRATA_RL_MICRO_BATCH_H_

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

/// One pass's micro batches on one DP rank, packed to a token budget.
struct PackedMicroBatches {
  double samples_per_rank = 0;        // the samples one DP rank takes through the pass
  double mean_sample_tokens = 0;      // prompt + response, on average
  int64_t budget_tokens = 0;          // max_token_len_per_gpu x CP (one micro batch, all CP ranks)
  int64_t micro_batches = 0;          // per DP rank
  double tokens_per_micro_batch = 0;  // the balanced micro batch: all the rank's tokens / count
  /// The largest micro batch verl's partition forms of the rank's samples: it sets the pass's
  /// memory peak, while the time follows the rank's tokens (micro_batches x
  /// tokens_per_micro_batch).
  double largest_micro_batch_tokens = 0;
};

/// verl's count: ceil(samples x mean / budget), at most one micro batch per sample, rounded up
/// to a multiple of `divided_by` (the megatron actor under interleaved pipelining passes
/// microbatch_group_size_per_vp_stage, megatron_actor.py:437-442). The largest micro batch is
/// the largest part PartitionTokens forms of `sample_tokens` (the rank's samples, prompt +
/// response each), at least the balanced share; empty `sample_tokens` takes the balanced part as
/// the largest.
PackedMicroBatches PackMicroBatches(double samples_per_rank, double mean_sample_tokens,
                                    int64_t max_tokens_per_gpu, int64_t cp, int64_t divided_by = 1,
                                    const std::vector<double>& sample_tokens = {});

/// verl's partition of one rank's samples into `parts` micro batches, as
/// rearrange_micro_batches calls get_seqlen_balanced_partitions (equal_size=False): the
/// Karmarkar-Karp largest differencing method over each sample's workload 24,576 L + L^2
/// (calculate_workload), every part non-empty. Returns each part's tokens (the sum of its
/// samples' L), the heaviest workload first. `parts` is clamped to [1, samples].
std::vector<double> PartitionTokens(const std::vector<double>& sample_tokens, int64_t parts);

/// "22 micro batches of 23,831 tokens (64 samples x 8,192 tokens in 24,000-token budgets), the
/// largest 24,576".
std::string DescribePacked(const PackedMicroBatches& p);

}  // namespace strata

#endif  // STRATA_RL_MICRO_BATCH_H_

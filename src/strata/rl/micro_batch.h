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

namespace strata {

/// One pass's micro batches on one DP rank, packed to a token budget.
struct PackedMicroBatches {
  double samples_per_rank = 0;        // the samples one DP rank takes through the pass
  double mean_sample_tokens = 0;      // prompt + response, on average
  int64_t budget_tokens = 0;          // max_token_len_per_gpu x CP (one micro batch, all CP ranks)
  int64_t micro_batches = 0;          // per DP rank
  double tokens_per_micro_batch = 0;  // the balanced micro batch: all the rank's tokens / count
  /// The largest micro batch verl's partition can leave: it sets the pass's memory peak, while
  /// the time follows the rank's tokens (micro_batches x tokens_per_micro_batch).
  double largest_micro_batch_tokens = 0;
};

/// verl's count: ceil(samples x mean / budget), at most one micro batch per sample, rounded up
/// to a multiple of `divided_by` (the megatron actor under interleaved pipelining passes
/// microbatch_group_size_per_vp_stage, megatron_actor.py:437-442). The partition
/// (get_seqlen_balanced_partitions: Karmarkar-Karp into `count` non-empty parts) balances them
/// around the rank's tokens / count, and the largest part is at most
///   min(all the rank's tokens, tokens / count + (count - 1) / count x longest sample,
///       (samples - count + 1) x longest sample)
/// (the differencing method's spread, largest - smallest part, is at most the largest item;
/// every other part holds at least one sample); with every sample at the cap (mean = longest),
/// ceil(samples / count) samples. `longest_sample_tokens` is prompt_max + response_max; 0 takes
/// the balanced part as the largest.
PackedMicroBatches PackMicroBatches(double samples_per_rank, double mean_sample_tokens,
                                    int64_t max_tokens_per_gpu, int64_t cp, int64_t divided_by = 1,
                                    double longest_sample_tokens = 0);

/// "22 micro batches of 23,831 tokens (64 samples x 8,192 tokens in 24,000-token budgets), the
/// largest up to 31,823".
std::string DescribePacked(const PackedMicroBatches& p);

}  // namespace strata

#endif  // STRATA_RL_MICRO_BATCH_H_

#include "strata/rl/micro_batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "strata/core/strings.h"

namespace strata {

PackedMicroBatches PackMicroBatches(double samples_per_rank, double mean_sample_tokens,
                                    int64_t max_tokens_per_gpu, int64_t cp, int64_t divided_by,
                                    double longest_sample_tokens) {
  PackedMicroBatches p;
  p.samples_per_rank = samples_per_rank;
  p.mean_sample_tokens = mean_sample_tokens;
  p.budget_tokens = max_tokens_per_gpu * std::max<int64_t>(1, cp);
  const double tokens = samples_per_rank * mean_sample_tokens;
  // rearrange_micro_batches: num_micro_batches = min(len(seq_len_effective),
  // ceildiv(total_seqlen, max_token_len)).
  const auto by_tokens =
      static_cast<int64_t>(std::ceil(tokens / static_cast<double>(p.budget_tokens)));
  const auto samples = static_cast<int64_t>(std::ceil(samples_per_rank));
  p.micro_batches = std::max<int64_t>(1, std::min(samples, by_tokens));
  // roundup_divisible(num_micro_batches, num_batches_divided_by) (seqlen_balancing.py:396).
  const int64_t group = std::max<int64_t>(1, divided_by);
  p.micro_batches = (p.micro_batches + group - 1) / group * group;
  p.tokens_per_micro_batch = tokens / static_cast<double>(p.micro_batches);
  // Karmarkar-Karp's k-way differencing merges two k-tuples of part sums largest with smallest,
  // so a merged tuple's spread is at most the larger of the two spreads, and a single item's
  // tuple spreads by that item: the largest part is at most the mean part + (k - 1) / k x the
  // largest item (seqlen_balancing.py karmarkar_karp, equal_size=False). verl balances a
  // workload, 24,576 L + L^2 per sample (calculate_workload); strata takes the bound in tokens,
  // the linear term's, as the RL job has a mean and a cap and no distribution.
  p.largest_micro_batch_tokens = p.tokens_per_micro_batch;
  if (longest_sample_tokens > 0 && mean_sample_tokens >= longest_sample_tokens) {
    // Every sample at the cap: the parts are whole samples, ceil(samples / k) the largest.
    const int64_t most = (samples + p.micro_batches - 1) / p.micro_batches;
    p.largest_micro_batch_tokens = std::min(tokens, static_cast<double>(most) * mean_sample_tokens);
  } else if (longest_sample_tokens > 0) {
    const auto k = static_cast<double>(p.micro_batches);
    const double spread = p.tokens_per_micro_batch + (k - 1) / k * longest_sample_tokens;
    const double others_hold_one = (static_cast<double>(samples) - k + 1) * longest_sample_tokens;
    p.largest_micro_batch_tokens =
        std::max(p.tokens_per_micro_batch, std::min({tokens, spread, others_hold_one}));
  }
  return p;
}

std::string DescribePacked(const PackedMicroBatches& p) {
  const bool larger = p.largest_micro_batch_tokens > p.tokens_per_micro_batch + 0.5;
  return fmt::format(
      "{} micro batch{} of {} tokens ({} sample{} x {} tokens in {}-token budgets){}",
      p.micro_batches, p.micro_batches == 1 ? "" : "es",
      GroupDigits(std::round(p.tokens_per_micro_batch)), GroupDigits(p.samples_per_rank),
      p.samples_per_rank == 1 ? "" : "s", GroupDigits(p.mean_sample_tokens),
      GroupDigits(static_cast<double>(p.budget_tokens)),
      larger ? fmt::format(", the largest up to {}",
                           GroupDigits(std::round(p.largest_micro_batch_tokens)))
             : "");
}

}  // namespace strata

#include "strata/rl/micro_batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "strata/core/strings.h"

namespace strata {

PackedMicroBatches PackMicroBatches(double samples_per_rank, double mean_sample_tokens,
                                    int64_t max_tokens_per_gpu, int64_t cp, int64_t divided_by) {
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
  return p;
}

std::string DescribePacked(const PackedMicroBatches& p) {
  return fmt::format("{} micro batch{} of {} tokens ({} sample{} x {} tokens in {}-token budgets)",
                     p.micro_batches, p.micro_batches == 1 ? "" : "es",
                     GroupDigits(std::round(p.tokens_per_micro_batch)),
                     GroupDigits(p.samples_per_rank), p.samples_per_rank == 1 ? "" : "s",
                     GroupDigits(p.mean_sample_tokens),
                     GroupDigits(static_cast<double>(p.budget_tokens)));
}

}  // namespace strata

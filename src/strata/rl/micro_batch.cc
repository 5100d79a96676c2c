#include "strata/rl/micro_batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/core/strings.h"

namespace strata {
namespace {

// verl's estimate of a sample's compute, 24,576 L + L^2 (volcengine/verl@
// b178a3cd56f58b2d502255daba591e92833930a7:verl/utils/seqlen_balancing.py:27-46,
// calculate_workload): what its partition balances.
double Workload(double tokens) { return 24576.0 * tokens + tokens * tokens; }

struct Part {
  double workload = 0;
  double tokens = 0;
};

// One state of the differencing: its non-empty parts, heaviest first (the rest of the k are
// empty), and when it was made (ties pop in that order).
struct State {
  std::vector<Part> parts;
  int64_t made = 0;
};

}  // namespace

std::vector<double> PartitionTokens(const std::vector<double>& sample_tokens, int64_t parts) {
  const auto n = static_cast<int64_t>(sample_tokens.size());
  if (n == 0) return {};
  const int64_t k = std::clamp<int64_t>(parts, 1, n);
  auto spread = [k](const State& s) {
    const bool full = static_cast<int64_t>(s.parts.size()) == k;
    return s.parts.front().workload - (full ? s.parts.back().workload : 0.0);
  };
  // seqlen_balancing.py karmarkar_karp: a heap that pops the largest spread first, then the
  // state whose heaviest part is heavier. std::push_heap keeps the greatest on top, so `below`
  // says whether a pops after b.
  auto below = [&](const State& a, const State& b) {
    const double sa = spread(a), sb = spread(b);
    if (sa != sb) return sa < sb;
    const double ha = a.parts.front().workload, hb = b.parts.front().workload;
    if (ha != hb) return ha < hb;
    return a.made > b.made;
  };
  std::vector<double> sorted = sample_tokens;
  std::ranges::sort(sorted);
  std::vector<State> heap;
  heap.reserve(static_cast<size_t>(n));
  int64_t made = 0;
  for (const double tokens : sorted) {
    heap.push_back({{{Workload(tokens), tokens}}, made++});
    std::ranges::push_heap(heap, below);
  }
  auto pop = [&] {
    std::ranges::pop_heap(heap, below);
    State s = std::move(heap.back());
    heap.pop_back();
    return s;
  };
  while (heap.size() > 1) {
    const State a = pop();
    const State b = pop();
    // Part i of the merge is a's i-th heaviest with b's (k - 1 - i)-th: heaviest with lightest.
    // Only the indices where either has a part are visited: [0, |a|) and [k - |b|, k).
    const auto na = static_cast<int64_t>(a.parts.size());
    const auto nb = static_cast<int64_t>(b.parts.size());
    State merged;
    merged.made = made++;
    auto add = [&](int64_t i) {
      Part part = i < na ? a.parts[static_cast<size_t>(i)] : Part{};
      const int64_t j = k - 1 - i;
      if (j < nb) {
        part.workload += b.parts[static_cast<size_t>(j)].workload;
        part.tokens += b.parts[static_cast<size_t>(j)].tokens;
      }
      merged.parts.push_back(part);
    };
    for (int64_t i = 0; i < na; ++i) add(i);
    for (int64_t i = std::max(na, k - nb); i < k; ++i) add(i);
    std::ranges::stable_sort(merged.parts,
                             [](const Part& x, const Part& y) { return x.workload > y.workload; });
    heap.push_back(std::move(merged));
    std::ranges::push_heap(heap, below);
  }
  std::vector<double> out;
  for (const Part& part : heap.front().parts) out.push_back(part.tokens);
  return out;
}

PackedMicroBatches PackMicroBatches(double samples_per_rank, double mean_sample_tokens,
                                    int64_t max_tokens_per_gpu, int64_t cp, int64_t divided_by,
                                    const std::vector<double>& sample_tokens) {
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
  // The memory's micro batch: the largest part verl's partition forms of the rank's samples.
  p.largest_micro_batch_tokens = p.tokens_per_micro_batch;
  for (const double part : PartitionTokens(sample_tokens, p.micro_batches)) {
    p.largest_micro_batch_tokens = std::max(p.largest_micro_batch_tokens, part);
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
      larger
          ? fmt::format(", the largest {}", GroupDigits(std::round(p.largest_micro_batch_tokens)))
          : "");
}

}  // namespace strata

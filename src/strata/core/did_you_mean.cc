#include "strata/core/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace strata {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      const size_t next = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  // Allow about one edit per three characters, at least two: catches typos, not guesses.
  const size_t max_distance = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_distance = max_distance + 1;
  for (const auto& c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string DidYouMeanHint(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best = ClosestMatch(word, candidates);
  if (!best.empty()) return "did you mean '" + best + "'?";
  std::string all;
  for (const auto& c : candidates) {
    if (!all.empty()) all += ", ";
    all += c;
  }
  return "expected one of: " + all;
}

}  // namespace strata

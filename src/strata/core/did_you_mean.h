// Suggestions for misspelt names ("did you mean 'num_experts'?"), by edit distance.
#ifndef STRATA_CORE_DID_YOU_MEAN_H_
#define STRATA_CORE_DID_YOU_MEAN_H_

#include <string>
#include <string_view>
#include <vector>

namespace strata {

/// Levenshtein distance, case-insensitive.
size_t EditDistance(std::string_view a, std::string_view b);

/// The closest candidate within a distance that scales with the word's length, or "".
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

/// "did you mean 'x'?" or, with no close match, "expected one of: a, b, c".
std::string DidYouMeanHint(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace strata

#endif  // STRATA_CORE_DID_YOU_MEAN_H_

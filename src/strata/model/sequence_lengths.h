// How long the training sequences are. Attention work per token grows with the sequence the
// token sits in, so with variable-length samples it follows E[S^2]/E[S], not E[S]: a token is
// more likely to sit in a long sample. Formulas: docs/formulas.md, "Variable-length sequences".
#ifndef STRATA_MODEL_SEQUENCE_LENGTHS_H_
#define STRATA_MODEL_SEQUENCE_LENGTHS_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"

namespace strata {

struct HistogramBin {
  double length_tokens = 0;
  double count = 0;  // samples of that length (a weight; need not be an integer)
};

struct SequenceLengths {
  double mean_tokens = 0;         // E[S] over samples
  double mean_square_tokens = 0;  // E[S^2] over samples
  double max_tokens = 0;
  bool exact = true;  // false when only mean and max are known: E[S^2] is then bounded only
  std::vector<HistogramBin> bins;  // the histogram when the lengths came from one
  /// What was assumed to get these lengths, in words ("" = nothing): printed by every view.
  std::string assumption;

  /// The length a token's attention sees on average: E[S^2]/E[S].
  double AttentionTokens() const { return mean_square_tokens / mean_tokens; }

  static SequenceLengths Fixed(double tokens);
  /// Mean and max only: E[S^2]/E[S] lies between them; the lower bound is used as the value.
  static SequenceLengths MeanMax(double mean_tokens, double max_tokens);
};

Result<SequenceLengths> FromHistogram(const std::vector<HistogramBin>& bins);

/// Packed samples attend only within themselves (flash attention's variable-length form): the
/// length a token's attention sees is the samples' E[L^2]/E[L] = (mean^2 + std^2) / mean, at most
/// the packed length. mean and std as ms-swift prints them ("Dataset Token Length: m±s").
double PackedAttentionTokens(double mean_tokens, double std_tokens, double packed_tokens);

/// A histogram file: one "length count" pair per line, '#' comments, blank lines ignored.
Result<SequenceLengths> ParseSequenceHistogram(std::string_view text, const std::string& file);
Result<SequenceLengths> LoadSequenceHistogram(const std::string& path);

/// A count of tokens (per step, per second): "29000", "29K" (x 1,000), "2.31M" (x 1e6), "1G";
/// "48Ki" (x 1,024) and "4Mi" (x 1,048,576) are binary. K is decimal like GB.
Result<double> ParseTokenCount(std::string_view text);

/// A sequence length: as users write context lengths, K and M are binary here ("8K" = 8,192,
/// "128K" = 131,072, "1M" = 1,048,576); "Ki"/"Mi" say the same outright; plain numbers are exact.
Result<double> ParseSequenceLength(std::string_view text);

}  // namespace strata

#endif  // STRATA_MODEL_SEQUENCE_LENGTHS_H_

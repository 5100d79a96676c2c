#include "strata/model/sequence_lengths.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "strata/core/file_io.h"
#include "strata/core/text_scan.h"

namespace strata {

namespace {

constexpr double kMaxSequenceTokens = 1e9;
// Tokens to train on: 1e15 is 60 times the largest published pre-training run (15T).
constexpr double kMaxTokenCount = 1e15;

Result<double> ParseNumber(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return InvalidInput("expected a number, got '" + std::string(text) + "'");
  }
  return value;
}

}  // namespace

double PackedAttentionTokens(double mean_tokens, double std_tokens, double packed_tokens) {
  if (mean_tokens <= 0) return packed_tokens;
  return std::min(packed_tokens,
                  (mean_tokens * mean_tokens + std_tokens * std_tokens) / mean_tokens);
}

SequenceLengths SequenceLengths::Fixed(double tokens) {
  return SequenceLengths{tokens, tokens * tokens, tokens, true, {}, ""};
}

SequenceLengths SequenceLengths::MeanMax(double mean_tokens, double max_tokens) {
  return SequenceLengths{mean_tokens, mean_tokens * mean_tokens, max_tokens, false, {}, ""};
}

Result<SequenceLengths> FromHistogram(const std::vector<HistogramBin>& bins) {
  double n = 0;
  double sum = 0;
  double sum_sq = 0;
  double max = 0;
  for (const auto& b : bins) {
    n += b.count;
    sum += b.count * b.length_tokens;
    sum_sq += b.count * b.length_tokens * b.length_tokens;
    if (b.count > 0 && b.length_tokens > max) max = b.length_tokens;
  }
  if (n <= 0) return InvalidInput("the histogram has no samples (all counts are zero)");
  // Counts near the top of double range overflow the sums: refuse rather than print inf/NaN.
  if (!std::isfinite(n) || !std::isfinite(sum) || !std::isfinite(sum_sq)) {
    return InvalidInput(
        "the histogram's totals overflow (sum of count x length^2 is not finite): counts too "
        "large");
  }
  return SequenceLengths{sum / n, sum_sq / n, max, true, bins, ""};
}

Result<SequenceLengths> ParseSequenceHistogram(std::string_view text, const std::string& file) {
  std::vector<HistogramBin> bins;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = TrimSpace(line);
    if (line.empty()) continue;
    const size_t space = line.find_first_of(" \t,");
    if (space == std::string_view::npos) {
      return InvalidInput("expected 'length count' on each line, got '" + std::string(line) + "'")
          .InFile(file)
          .AtLine(line_no);
    }
    auto length = ParseNumber(TrimSpace(line.substr(0, space)));
    auto count = ParseNumber(TrimSpace(line.substr(space + 1)));
    if (!length.ok()) return Error(length.error()).InFile(file).AtLine(line_no).InField("length");
    if (!count.ok()) return Error(count.error()).InFile(file).AtLine(line_no).InField("count");
    if (*length <= 0) {
      return InvalidInput("a sequence length must be positive, got " +
                          std::string(TrimSpace(line.substr(0, space))))
          .InFile(file)
          .AtLine(line_no)
          .InField("length");
    }
    if (*length > kMaxSequenceTokens) {
      // Squared for E[S^2], 1e308 overflowed to inf (fuzz finding 11); no sample is this long.
      return InvalidInput("a sequence length must be at most 1e9 tokens, got " +
                          std::string(TrimSpace(line.substr(0, space))))
          .InFile(file)
          .AtLine(line_no)
          .InField("length");
    }
    if (*count < 0) {
      return InvalidInput("a count must be >= 0, got " +
                          std::string(TrimSpace(line.substr(space + 1))))
          .InFile(file)
          .AtLine(line_no)
          .InField("count");
    }
    bins.push_back({*length, *count});
    if (end == text.size()) break;
  }
  if (bins.empty()) {
    return InvalidInput("no 'length count' lines: the histogram is empty").InFile(file);
  }
  auto result = FromHistogram(bins);
  if (!result.ok()) return Error(result.error()).InFile(file);
  return result;
}

Result<SequenceLengths> LoadSequenceHistogram(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseSequenceHistogram(text, path);
}

namespace {

/// `binary_plain`: K and M mean 1,024 and 1,048,576 (sequence lengths), else 1e3 and 1e6.
Result<double> ParseTokens(std::string_view text, bool binary_plain) {
  std::string_view t = TrimSpace(text);
  struct Suffix {
    std::string_view text;
    double decimal;
    double binary;
  };
  // Longest suffixes first: "Mi" before "M"... "i" suffixes are binary in every field. B and T
  // (1e9, 1e12) are how training budgets are quoted ("100B tokens", "15T"): counts only, so
  // their binary value is 0 (no sequence length is written so).
  constexpr Suffix kSuffixes[] = {
      {"Ki", 1024.0, 1024.0},   {"ki", 1024.0, 1024.0}, {"Mi", 1048576.0, 1048576.0},
      {"K", 1e3, 1024.0},       {"k", 1e3, 1024.0},     {"M", 1e6, 1048576.0},
      {"G", 1e9, 1073741824.0}, {"B", 1e9, 0},          {"T", 1e12, 0}};
  double scale = 1;
  for (const Suffix& s : kSuffixes) {
    if (t.size() > s.text.size() && t.ends_with(s.text)) {
      scale = binary_plain ? s.binary : s.decimal;
      t.remove_suffix(s.text.size());
      break;
    }
  }
  auto value = ParseNumber(t);
  if (!value.ok() || *value <= 0 || scale <= 0) {
    return InvalidInput(
        std::string(binary_plain
                        ? "expected a positive sequence length such as 49152, 8K (= 8Ki = "
                          "8,192: sequence lengths count K as 1,024) or 1Mi"
                        : "expected a positive token count such as 29000, 29K (x1,000), 48Ki "
                          "(x1,024), 2.31M (x1e6), 4Mi (x1,048,576), 100B (x1e9) or 15T "
                          "(x1e12)") +
        ", got '" + std::string(text) + "'");
  }
  const double tokens = *value * scale;
  // A sequence longer than any model's context, or a count no run reaches, is a typo or a
  // corrupt file; the layout checks also convert lengths to integers, which must not overflow.
  const double limit = binary_plain ? kMaxSequenceTokens : kMaxTokenCount;
  if (!(tokens <= limit)) {
    return InvalidInput(fmt::format("{} must be at most {:g} tokens, got '{}'",
                                    binary_plain ? "a sequence length" : "a token count", limit,
                                    text));
  }
  return tokens;
}

}  // namespace

Result<double> ParseTokenCount(std::string_view text) { return ParseTokens(text, false); }

Result<double> ParseSequenceLength(std::string_view text) { return ParseTokens(text, true); }

}  // namespace strata

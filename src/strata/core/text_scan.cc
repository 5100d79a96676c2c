#include "strata/core/text_scan.h"

#include <charconv>

namespace strata {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// 18 decimal digits always fit in int64_t (max 9.2e18).
constexpr size_t kMaxDigits = 18;

}  // namespace

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> ParseInt64(std::string_view s) {
  s = TrimSpace(s);
  size_t consumed = 0;
  auto v = LeadingInt(s, &consumed);
  if (!v || consumed != s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> LeadingInt(std::string_view s, size_t* consumed) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  const size_t start = i;
  if (i < s.size() && s[i] == '-') ++i;
  const size_t digits_start = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i == digits_start || i - digits_start > kMaxDigits) return std::nullopt;
  int64_t value = 0;
  std::from_chars(s.data() + start, s.data() + i, value);
  if (consumed) *consumed = i;
  return value;
}

std::optional<int64_t> IntAfter(std::string_view s, std::string_view key) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  return LeadingInt(s.substr(at + key.size()));
}

std::optional<size_t> JsonTooDeepAt(std::string_view text, size_t max_depth) {
  bool deep = false;
  const size_t at = WalkJsonBrackets(text, 0, [&](size_t i, size_t depth) {
    deep = (text[i] == '{' || text[i] == '[') && depth > max_depth;
    return deep;
  });
  if (!deep) return std::nullopt;
  return at;
}

std::vector<TextLine> SplitLines(std::string_view text) {
  std::vector<TextLine> lines;
  ForEachLine(text, [&](const TextLine& line) { lines.push_back(line); });
  return lines;
}

std::vector<std::string_view> SplitWords(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

}  // namespace strata

#include "strata/logs/openrlhf_status_line.h"

#include "strata/core/text_scan.h"

namespace strata {

std::optional<int64_t> OpenRlhfStepAt(std::string_view text, size_t brace) {
  constexpr std::string_view kMark = "Global step ";
  if (brace >= text.size() || text[brace] != '{') return std::nullopt;
  std::string_view head = text.substr(0, brace);
  if (!head.ends_with(": ")) return std::nullopt;
  head.remove_suffix(2);
  size_t digits = head.size();
  while (digits > 0 && head[digits - 1] >= '0' && head[digits - 1] <= '9') --digits;
  if (digits == head.size() || !head.substr(0, digits).ends_with(kMark)) return std::nullopt;
  return ParseInt64(head.substr(digits));
}

size_t FindOpenRlhfDict(std::string_view text, int64_t& step, size_t from) {
  for (size_t brace = text.find('{', from); brace != std::string_view::npos;
       brace = text.find('{', brace + 1)) {
    if (const std::optional<int64_t> s = OpenRlhfStepAt(text, brace)) {
      step = *s;
      return brace;
    }
  }
  return std::string_view::npos;
}

size_t PythonValueEnd(std::string_view s, size_t i, bool whole_dict) {
  int depth = 0;
  char quote = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) return i;
      --depth;
    } else if (c == ',' && depth == 0 && !whole_dict) {
      return i;
    }
  }
  return i;
}

size_t OpenRlhfDictClose(std::string_view text, size_t brace) {
  const size_t close = PythonValueEnd(text, brace + 1, true);
  return close < text.size() ? close : std::string_view::npos;
}

}  // namespace strata

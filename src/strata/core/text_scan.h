// Small scanners shared by the text parsers (logs, RAS reports, histograms, unit strings): they
// never throw, never read past the view, and refuse numbers that could overflow.
#ifndef STRATA_CORE_TEXT_SCAN_H_
#define STRATA_CORE_TEXT_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace strata {

/// One line of a text: its 1-based number and its bytes without the '\n' (and a trailing '\r').
struct TextLine {
  int number = 0;
  std::string_view text;
};

/// Calls fn(const TextLine&) for every line of `text` in order; a last line without '\n' counts,
/// an empty text has no lines. The one line splitter of every "file:line"-reporting parser.
template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  size_t start = 0;
  int number = 1;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(TextLine{number++, line});
    start = end + 1;
  }
}

/// The lines of `text`, as ForEachLine visits them.
std::vector<TextLine> SplitLines(std::string_view text);

/// Splits on runs of spaces and tabs.
std::vector<std::string_view> SplitWords(std::string_view text);

/// Without leading and trailing spaces, tabs, CR and LF.
std::string_view TrimSpace(std::string_view s);

/// The whole (trimmed) view as a decimal integer; nullopt if anything else is there or it has
/// more than 18 digits (so it always fits in int64_t).
std::optional<int64_t> ParseInt64(std::string_view s);

/// The integer at the start of `s` after spaces, with an optional '-'; 18 digits at most.
/// `consumed`, when given, receives the offset just past the digits.
std::optional<int64_t> LeadingInt(std::string_view s, size_t* consumed = nullptr);

/// The integer right after the first occurrence of `key` (e.g. "SeqNum=").
std::optional<int64_t> IntAfter(std::string_view s, std::string_view key);

/// Walks the JSON brackets of `text` from `from`, skipping strings and their escapes: calls
/// fn(offset, depth) after each [ or { (depth counted from 1) and each ] or } (the depth left,
/// never below 0). Stops where fn returns true and gives that offset; npos at the end.
template <class Fn>
size_t WalkJsonBrackets(std::string_view text, size_t from, Fn&& fn) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (fn(i, ++depth)) return i;
    } else if (c == '}' || c == ']') {
      if (depth > 0) --depth;
      if (fn(i, depth)) return i;
    }
  }
  return std::string_view::npos;
}

/// The byte offset of the first [ or { (outside strings) nested deeper than `max_depth`, or
/// nullopt. Walking and destroying a parsed JSON value recurses, so parsers refuse hostile depths
/// with this before they parse.
std::optional<size_t> JsonTooDeepAt(std::string_view text, size_t max_depth);

}  // namespace strata

#endif  // STRATA_CORE_TEXT_SCAN_H_

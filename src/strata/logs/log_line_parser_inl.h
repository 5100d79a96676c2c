// Template definitions for log_line_parser.h.
#ifndef STRATA_LOGS_LOG_LINE_PARSER_INL_H_
#define STRATA_LOGS_LOG_LINE_PARSER_INL_H_

#include <cstring>
#include <string_view>

#include "strata/core/text_scan.h"

namespace strata {

/// TrimSpace (core/text_scan.h) inlined: the per-segment trims are on the hot path of a large log.
inline std::string_view TrimLogSpace(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  size_t begin = 0, end = s.size();
  while (begin < end && space(s[begin])) ++begin;
  while (end > begin && space(s[end - 1])) --end;
  return s.substr(begin, end - begin);
}

/// text.find(literal, pos), with memchr for the first byte: string_view::find compares byte by
/// byte, and glibc's memmem sets up a table on every call.
inline size_t FindLiteral(std::string_view text, std::string_view literal, size_t pos = 0) {
  if (literal.empty()) return pos <= text.size() ? pos : std::string_view::npos;
  while (pos + literal.size() <= text.size()) {
    const void* hit =
        std::memchr(text.data() + pos, literal[0], text.size() - literal.size() + 1 - pos);
    if (hit == nullptr) return std::string_view::npos;
    pos = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
    if (std::memcmp(text.data() + pos + 1, literal.data() + 1, literal.size() - 1) == 0) return pos;
    ++pos;
  }
  return std::string_view::npos;
}

template <class Fn>
void ForEachLabelled(std::string_view text, char separator, Fn&& fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(separator, pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view segment = text.substr(pos, end - pos);
    const size_t colon = segment.find(':');
    if (colon != std::string_view::npos) {
      fn(TrimLogSpace(segment.substr(0, colon)), TrimLogSpace(segment.substr(colon + 1)));
    }
    pos = end + 1;
  }
}

}  // namespace strata

#endif  // STRATA_LOGS_LOG_LINE_PARSER_INL_H_

// Template definitions for log_line_parser.h.
#ifndef STRATA_LOGS_LOG_LINE_PARSER_INL_H_
#define STRATA_LOGS_LOG_LINE_PARSER_INL_H_

#include "strata/core/text_scan.h"

namespace strata {

template <class Fn>
void ForEachLabelled(std::string_view text, char separator, Fn&& fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(separator, pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view segment = text.substr(pos, end - pos);
    const size_t colon = segment.find(':');
    if (colon != std::string_view::npos) {
      fn(TrimSpace(segment.substr(0, colon)), TrimSpace(segment.substr(colon + 1)));
    }
    pos = end + 1;
  }
}

}  // namespace strata

#endif  // STRATA_LOGS_LOG_LINE_PARSER_INL_H_

// Lines of a text file with their 1-based numbers, for parsers that report "file:line".
#ifndef STRATA_PREFLIGHT_TEXT_LINES_H_
#define STRATA_PREFLIGHT_TEXT_LINES_H_

#include <string_view>
#include <vector>

namespace strata::preflight {

struct Line {
  int number = 0;
  std::string_view text;  // without the '\n' (and a trailing '\r')
};

std::vector<Line> SplitLines(std::string_view text);

/// Splits on runs of spaces and tabs.
std::vector<std::string_view> SplitWords(std::string_view text);

}  // namespace strata::preflight

#endif  // STRATA_PREFLIGHT_TEXT_LINES_H_

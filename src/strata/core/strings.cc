#include "strata/core/strings.h"

#include <fmt/format.h>

#include <cmath>

namespace strata {

std::vector<std::string> SplitNul(std::string_view text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string GroupDigits(double value, int decimals) {
  std::string s = fmt::format("{:.{}f}", std::fabs(value), decimals);
  const size_t dot = s.find('.');
  const size_t int_end = dot == std::string::npos ? s.size() : dot;
  std::string out;
  for (size_t i = 0; i < int_end; ++i) {
    if (i > 0 && (int_end - i) % 3 == 0) out += ',';
    out += s[i];
  }
  out += s.substr(int_end);
  // "-0" is not a number anyone writes.
  const bool zero = s.find_first_not_of("0.") == std::string::npos;
  return value < 0 && !zero ? "-" + out : out;
}

}  // namespace strata

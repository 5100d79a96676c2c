#include "strata/core/strings.h"

#include <fmt/format.h>

#include <cmath>

namespace strata {

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

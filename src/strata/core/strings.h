// The string helpers every module used to copy: substring test and digit grouping. Prefixes and
// suffixes use the standard library (std::string_view::starts_with / ends_with).
#ifndef STRATA_CORE_STRINGS_H_
#define STRATA_CORE_STRINGS_H_

#include <string>
#include <string_view>

namespace strata {

/// `part` occurs in `text`.
inline bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

/// 2310000 -> "2,310,000"; 481.25 with decimals 2 -> "481.25"; negative values keep their sign.
std::string GroupDigits(double value, int decimals = 0);

}  // namespace strata

#endif  // STRATA_CORE_STRINGS_H_

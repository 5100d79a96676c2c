// The string functions every module used to copy: substring test, NUL-separated fields and digit
// grouping. Prefixes and suffixes use the standard library (std::string_view::starts_with /
// ends_with); scripts/check_single_copies keeps local copies of any of them out of the tree.
#ifndef STRATA_CORE_STRINGS_H_
#define STRATA_CORE_STRINGS_H_

#include <string>
#include <string_view>
#include <vector>

namespace strata {

/// `part` occurs in `text`.
inline bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

/// The fields of a NUL-separated record (/proc/<pid>/cmdline, /proc/<pid>/environ), empty ones
/// dropped. A last field without its NUL (a read cut at a size limit) is kept as it is.
std::vector<std::string> SplitNul(std::string_view text);

/// 2310000 -> "2,310,000"; 481.25 with decimals 2 -> "481.25"; negative values keep their sign.
std::string GroupDigits(double value, int decimals = 0);

}  // namespace strata

#endif  // STRATA_CORE_STRINGS_H_

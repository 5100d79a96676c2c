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

/// `text` with A-Z turned to a-z and every other byte as it is (no locale: names, keys and
/// log words are ASCII; UTF-8 bytes pass through unchanged).
std::string AsciiLower(std::string_view text);

/// The fields of a NUL-separated record (/proc/<pid>/cmdline, /proc/<pid>/environ), empty ones
/// dropped. A last field without its NUL (a read cut at a size limit) is kept as it is.
std::vector<std::string> SplitNul(std::string_view text);

/// `line` without its ANSI escape sequences (colour codes that terminals, tmux pastes and rich
/// loggers leave in logs): ESC '[' parameter bytes (0x30-0x3f), intermediate bytes (0x20-0x2f)
/// and one final byte (0x40-0x7e), or ESC, intermediate bytes and one final byte ("ESC ( B"); an
/// escape cut off at the end of the line is dropped. Returns `line` itself when it holds no ESC,
/// else a view of `buffer`.
std::string_view StripAnsiEscapes(std::string_view line, std::string& buffer);

/// 2310000 -> "2,310,000"; 481.25 with decimals 2 -> "481.25"; negative values keep their sign.
std::string GroupDigits(double value, int decimals = 0);

}  // namespace strata

#endif  // STRATA_CORE_STRINGS_H_

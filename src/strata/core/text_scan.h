// Small scanners shared by the text parsers (logs, RAS reports, histograms, unit strings): they
// never throw, never read past the view, and refuse numbers that could overflow.
#ifndef STRATA_CORE_TEXT_SCAN_H_
#define STRATA_CORE_TEXT_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace strata {

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

/// The byte offset of the first [ or { (outside strings) nested deeper than `max_depth`, or
/// nullopt. Walking and destroying a parsed JSON value recurses, so parsers refuse hostile depths
/// with this before they parse.
std::optional<size_t> JsonTooDeepAt(std::string_view text, size_t max_depth);

}  // namespace strata

#endif  // STRATA_CORE_TEXT_SCAN_H_

// UTF-8 validation and repair for text that comes from inputs strata does not control (logs
// with binary debris, py-spy frame names, host names): JSON output must be valid UTF-8, and
// text output should not pass raw garbage to a terminal.
#ifndef STRATA_CORE_UTF8_H_
#define STRATA_CORE_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace strata {

/// The length (1 to 4) of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there
/// are not one: a stray continuation byte, a truncated sequence, an overlong form, a UTF-16
/// surrogate (U+D800..U+DFFF) or a code point above U+10FFFF.
size_t Utf8SequenceLength(std::string_view s, size_t i);

bool IsValidUtf8(std::string_view s);

/// The characters of `s` as a terminal counts them: its UTF-8 code points, not its bytes (a
/// progress bar's block U+2588 is 3 bytes, one column). Each byte that does not continue a
/// sequence (not 0b10xxxxxx) starts one: a lone lead byte counts as one character, a stray
/// continuation byte as none.
size_t Utf8CodePoints(std::string_view s);

/// `s` with each byte that starts no valid sequence replaced by U+FFFD, so the damage stays
/// visible (never dropped silently) and the result is valid UTF-8. Valid input is returned as is.
std::string SanitizeUtf8(std::string_view s);

}  // namespace strata

#endif  // STRATA_CORE_UTF8_H_

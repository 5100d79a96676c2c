// Parsing untrusted JSON (dumps, reports): depth bounded before parsing, errors with the byte
// offset and what was expected, never an exception escaping.
#ifndef STRATA_CORE_JSON_INPUT_H_
#define STRATA_CORE_JSON_INPUT_H_

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "strata/core/result.h"

namespace strata {

/// The one nesting limit for JSON that strata reads: config.json files nest 3-4 levels, dumps and
/// reports fewer than 10; 64 leaves room and keeps the recursion of walking a value shallow.
inline constexpr size_t kJsonMaxDepth = 64;

/// `text` as JSON. Nesting deeper than `max_depth` is refused before parsing (walking and
/// destroying a value recurses); errors read "byte N: ..." and name `expected` (e.g. "a Flight
/// Recorder dump") and the file.
Result<nlohmann::json> ParseUntrustedJson(std::string_view text, const std::string& file,
                                          size_t max_depth, std::string_view expected);

/// `value` as compact JSON text for an error message, cut to about `max_chars` ("..." marks the
/// cut). Built piece by piece: showing one field of a 100 MB dump must not serialise the dump,
/// and invalid UTF-8 in a string shows as U+FFFD instead of throwing.
std::string JsonPreview(const nlohmann::json& value, size_t max_chars = 60);

}  // namespace strata

#endif  // STRATA_CORE_JSON_INPUT_H_

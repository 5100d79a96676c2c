#include "strata/core/json_input.h"

#include <fmt/format.h>

#include "strata/core/text_scan.h"

namespace strata {

Result<nlohmann::json> ParseUntrustedJson(std::string_view text, const std::string& file,
                                          size_t max_depth, std::string_view expected) {
  if (auto at = JsonTooDeepAt(text, max_depth)) {
    return InvalidInput(fmt::format("byte {}: JSON nested deeper than {} levels, expected {}", *at,
                                    max_depth, expected))
        .InFile(file);
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 9: ..."; keep
    // the part after the location, which says what was expected.
    std::string what = e.what();
    const size_t colon = what.find(": ", what.find("column"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    return InvalidInput(
               fmt::format("byte {}: not valid JSON: {}", e.byte > 0 ? e.byte - 1 : 0, what))
        .InFile(file);
  } catch (const nlohmann::json::exception& e) {
    // A number beyond double range ("1e400") is an out_of_range error after the syntax check,
    // with no position: say what it was.
    std::string what = e.what();
    if (const size_t pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    return InvalidInput(fmt::format("not valid JSON: {}, expected {}", what, expected)).InFile(file);
  }
}

}  // namespace strata

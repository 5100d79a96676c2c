#include "strata/core/json_input.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

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
    return InvalidInput(fmt::format("not valid JSON: {}, expected {}", what, expected))
        .InFile(file);
  }
}

namespace {

// Appends to `out` until it is longer than `limit`; each level adds at least one character, so
// the recursion is at most `limit` deep whatever the value's depth.
void AppendPreview(const nlohmann::json& value, size_t limit, std::string& out) {
  if (out.size() > limit) return;
  if (value.is_array() || value.is_object()) {
    const bool object = value.is_object();
    out += object ? '{' : '[';
    bool first = true;
    for (auto it = value.begin(); it != value.end() && out.size() <= limit; ++it) {
      if (!first) out += ",";
      first = false;
      if (object) {
        AppendPreview(nlohmann::json(it.key()), limit, out);
        out += ":";
      }
      AppendPreview(*it, limit, out);
    }
    out += object ? '}' : ']';
    return;
  }
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    const nlohmann::json head(text.substr(0, limit + 1));  // enough to fill the preview
    out += head.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out += value.dump();  // a number, a boolean or null: short
}

}  // namespace

std::string JsonPreview(const nlohmann::json& value, size_t max_chars) {
  std::string out;
  AppendPreview(value, max_chars, out);
  if (out.size() > max_chars) {
    size_t cut = max_chars > 3 ? max_chars - 3 : 0;
    // Do not split a UTF-8 sequence: back up over continuation bytes.
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out = out.substr(0, cut) + "...";
  }
  return out;
}

}  // namespace strata

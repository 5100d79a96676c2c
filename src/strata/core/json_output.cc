#include "strata/core/json_output.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace strata {

Json JsonDocument(const std::string& kind) {
  Json j;
  j["schema_version"] = kSchemaVersion;
  j["kind"] = kind;
  return j;
}

double RoundSig(double value, int significant) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double magnitude = std::floor(std::log10(std::fabs(value)));
  const double scale = std::pow(10.0, significant - 1 - magnitude);
  return std::round(value * scale) / scale;
}

Json JsonNumber(double value) {
  // 2^53: beyond it not every integer is a double, and the double is already what it is.
  constexpr double kExactIntegers = 9007199254740992.0;
  if (std::isfinite(value) && std::fabs(value) < kExactIntegers && value == std::trunc(value)) {
    return static_cast<int64_t>(value);
  }
  return value;
}

Json JsonBytes(Bytes bytes) {
  const double b = bytes.count();
  if (!std::isfinite(b) || std::fabs(b) >= 9007199254740992.0) return b;
  return static_cast<int64_t>(std::llround(b));
}

// Strings from inputs may hold bytes that are not UTF-8 (py-spy frame names, log lines, host
// names); the strict dump would throw. Replace them with U+FFFD: visible, never an abort.
std::string DumpJson(const Json& json) {
  return json.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace strata

// JSON output for scripts: stable key order, a schema_version, exact numbers (integers as
// integers, doubles with every digit a round trip needs).
#ifndef STRATA_CORE_JSON_OUTPUT_H_
#define STRATA_CORE_JSON_OUTPUT_H_

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "strata/core/units.h"

namespace strata {

/// Bumped when a field changes meaning or disappears; adding fields does not bump it.
inline constexpr int kSchemaVersion = 1;

using Json = nlohmann::ordered_json;

/// {"schema_version": 1, "kind": kind} to which a command adds its fields.
Json JsonDocument(const std::string& kind);

/// A double rounded to `significant` significant digits (for text, never for JSON).
double RoundSig(double value, int significant = 6);

/// A number for JSON: an integral value (a parameter, byte or FLOP count held in a double) as
/// an integer, anything else as the double itself (printed with full round-trip precision).
Json JsonNumber(double value);

/// A byte count as an integer, rounded to the nearest byte: every view of the same ledger
/// (memory, plan, compare, step, map, checkpoint) prints the same integer for the same bytes.
Json JsonBytes(Bytes bytes);

/// Two-space indented, newline-terminated, valid UTF-8 (invalid bytes become U+FFFD).
std::string DumpJson(const Json& json);

}  // namespace strata

#endif  // STRATA_CORE_JSON_OUTPUT_H_

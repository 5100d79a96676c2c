// Flight Recorder dumps (pickle and JSON) and the unpickler alone.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "entries/fuzz_entries.h"
#include "strata/hang/parsers/flight_recorder.h"
#include "strata/hang/parsers/pickle_reader.h"

namespace strata::fuzz {

using namespace strata::hang;

void FlightRecorder(std::string_view input) {
  auto first = ParseFlightRecorder(input, "fuzz_rank_0");
  if (!first.ok()) return;
  const std::string text = CheckJsonOutput(ToJson(*first));
  auto second = ParseFlightRecorder(input, "fuzz_rank_0");
  Require(second.ok(), "flight recorder: a second parse succeeds");
  RequireSame(text, CheckJsonOutput(ToJson(*second)),
              "flight recorder: parsing twice gives one result");
}

// What the decoded value costs as the reader counts it: 16 bytes per value (and per dict key)
// plus the text of every string and key.
static size_t DecodedBytes(const nlohmann::json& value) {
  size_t bytes = 16;
  if (value.is_string()) bytes += value.get_ref<const std::string&>().size();
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it)
      bytes += 16 + it.key().size() + DecodedBytes(*it);
  } else if (value.is_array()) {
    for (const auto& item : value) bytes += DecodedBytes(item);
  }
  return bytes;
}

void Pickle(std::string_view input) {
  const PickleLimits limits;
  auto text = ReadPickle(input, "fuzz.pkl", limits);
  if (!text.ok()) return;
  // ReadPickle returns the value as JSON text: it must parse back, and strings are checked UTF-8
  // when read, so the strict dump must not throw.
  const nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, false);
  Require(!parsed.is_discarded(), "pickle: the JSON text parses back");
  const nlohmann::json* value = &parsed;
  static_cast<void>(value->dump(-1, ' ', false, nlohmann::json::error_handler_t::strict));
  // Work and memory stay linear in the input: what was built fits the byte budget.
  const size_t budget =
      std::min(limits.max_decoded_bytes,
               std::max(limits.min_decoded_bytes, input.size() * limits.max_expansion));
  Require(DecodedBytes(*value) <= budget, "pickle: the decoded value fits the byte budget");
  auto again = ReadPickle(input, "fuzz.pkl", limits);
  Require(again.ok() && *again == *text, "pickle: decoding twice gives one result");
}

}  // namespace strata::fuzz

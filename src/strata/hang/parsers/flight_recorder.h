// PyTorch NCCL Flight Recorder dumps: the pickle that torch writes on a watchdog timeout (or on
// demand) and the JSON variant its APIs return. Format versions "2.3" to "2.10" are read; the
// differences between them (key names, string-typed numbers in JSON, optional keys) are absorbed
// here so the analysis sees one FrDump.
#ifndef STRATA_HANG_PARSERS_FLIGHT_RECORDER_H_
#define STRATA_HANG_PARSERS_FLIGHT_RECORDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "strata/core/json_output.h"
#include "strata/core/result.h"
#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

/// The oldest and newest dump format versions this reader knows.
inline constexpr int kFrMinMinorVersion = 3;   // "2.3"
inline constexpr int kFrMaxMinorVersion = 10;  // "2.10"

/// Parses one dump. Sniffs the first byte: 0x80 is a pickle, '{' is JSON. The rank comes from
/// the content when it has one, else from the trailing integer of `file`'s name (torch names
/// dumps <prefix><global rank>). Errors name the file and the byte offset or the field.
Result<FrDump> ParseFlightRecorder(std::string_view bytes, const std::string& file);

/// The trailing integer of a file name ("nccl_trace_rank_17" -> 17; directories and a ".pkl",
/// ".pickle" or ".json" extension are ignored), or nullopt when the name ends in no digits.
std::optional<int64_t> RankFromFileName(std::string_view name);

/// Canonical JSON of a dump (stable key order, units in key names). The CLI embeds it in a
/// JsonDocument; the golden tests compare it.
Json ToJson(const FrDump& dump);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_FLIGHT_RECORDER_H_

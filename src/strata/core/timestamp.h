// Wall-clock stamps as logs print them ("2024-04-06 02:55:45,338", torchrun's record time
// "2024-08-20_11:37:36"). One parser for every module: training logs (logs/) and the hang
// analysis (torchrun's failure records, the watchdog's glog headers) read their times with it.
#ifndef STRATA_CORE_TIMESTAMP_H_
#define STRATA_CORE_TIMESTAMP_H_

#include <optional>
#include <string_view>

namespace strata {

/// "2024-04-06 02:55:45", "2024-04-06T02:55:45" or "2024-08-20_11:37:36" (torchrun's record
/// time), with ".123456" or ",338" fractions: seconds since 1970-01-01 on the log's own clock (no
/// time zone is known, so only differences mean anything).
std::optional<double> ParseLogTimestamp(std::string_view text);

/// A timestamp anywhere in the first 64 bytes of a line ("[2024-04-06 02:55:45]",
/// "[titan] 2026-05-18 16:04:46,338 - ..."), or nullopt.
std::optional<double> FindLeadingTimestamp(std::string_view line);

}  // namespace strata

#endif  // STRATA_CORE_TIMESTAMP_H_

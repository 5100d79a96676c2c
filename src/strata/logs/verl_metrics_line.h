// verl's console metrics line ("step:N - key:value - key:value ..."), which a terminal or a
// paste often breaks mid-field: where one starts and whether a line carries on the one before.
// `strata logs` and `strata rl --log` join the pieces through one joiner (wrapped_record.h).
#ifndef STRATA_LOGS_VERL_METRICS_LINE_H_
#define STRATA_LOGS_VERL_METRICS_LINE_H_

#include <string_view>

namespace strata {

/// "step:34 - ...": the start of a metrics record (the launcher's prefix already stripped).
bool StartsVerlMetricsLine(std::string_view text);

/// A piece of a metrics record wrapped mid-field: more "key:value - key:value" with a '/' in a
/// key. Any other line (a Ray prefix, a progress bar, a warning, an indented trace) ends it.
bool ContinuesVerlMetricsLine(std::string_view raw);

}  // namespace strata

#endif  // STRATA_LOGS_VERL_METRICS_LINE_H_

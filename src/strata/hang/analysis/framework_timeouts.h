// Framework defaults for the collective timeout (data/hang/framework_timeouts.yaml): incident 2's
// "the hang surfaced only after an hour" is the watchdog waiting for a timeout nobody set.
#ifndef STRATA_HANG_ANALYSIS_FRAMEWORK_TIMEOUTS_H_
#define STRATA_HANG_ANALYSIS_FRAMEWORK_TIMEOUTS_H_

#include <optional>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"

namespace strata::hang {

struct FrameworkTimeout {
  std::string name;                // "ms-swift"
  std::vector<std::string> match;  // command-line substrings; "" matches anything
  std::string flag;                // "--ddp_timeout"; "" when none overrides it
  Seconds flag_unit;               // one unit of the flag's value
  Seconds default_timeout;
  std::string source;
};

/// data/hang/framework_timeouts.yaml (or `path`), strictly: unknown keys are errors.
Result<std::vector<FrameworkTimeout>> LoadFrameworkTimeouts(const std::string& path = "");

/// The first framework whose `match` occurs in `cmdline`.
const FrameworkTimeout* FindFramework(const std::vector<FrameworkTimeout>& table,
                                      const std::string& cmdline);

/// The longest timeout taken from a command line: about 31.7 years. ms-swift's default
/// ddp_timeout is 18,000,000 s (208 days); a larger figure (1e300, inf) is a misread, and would
/// not survive the conversion to milliseconds in an int64.
inline constexpr double kMaxTimeoutS = 1e9;

/// The value of `--flag N` or `--flag=N` in `cmdline`, times `flag_unit`; none when it is not a
/// positive number up to kMaxTimeoutS seconds.
std::optional<Seconds> TimeoutFromCommandLine(const FrameworkTimeout& framework,
                                              const std::string& cmdline);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_FRAMEWORK_TIMEOUTS_H_

// Facts about the machine strata runs on, for the bundles its collectors write.
#ifndef STRATA_CORE_SYSTEM_INFO_H_
#define STRATA_CORE_SYSTEM_INFO_H_

#include <string>

namespace strata {

/// The current time in UTC, ISO 8601 to the second: "2026-11-30T18:17:14Z".
std::string NowUtc();

/// This host's name (gethostname), or "unknown-host" when it cannot be read.
std::string HostName();

}  // namespace strata

#endif  // STRATA_CORE_SYSTEM_INFO_H_

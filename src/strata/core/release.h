// Framework and library releases written as dotted numbers ("0.16", "v0.2.2", "0.8.0rc1"), for
// the choices that change from one release on (data/frameworks.yaml, data/memory_overheads.yaml).
#ifndef STRATA_CORE_RELEASE_H_
#define STRATA_CORE_RELEASE_H_

#include <string>

namespace strata {

/// Whether release `version` is at least `from`, number by number ("0.10" > "0.9"; "0.8.0rc1"
/// reads as 0.8.0). Text that is not dotted numbers (a commit hash) compares as below every
/// release.
bool ReleaseAtLeast(const std::string& version, const std::string& from);

}  // namespace strata

#endif  // STRATA_CORE_RELEASE_H_

// `strata profile`'s library entry: trace files (or directories of them), one rank each, read
// and broken down, with the job-level checks: missing and duplicate ranks, clock skew.
#ifndef STRATA_PROFILE_PROFILE_H_
#define STRATA_PROFILE_PROFILE_H_

#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/profile/breakdown.h"
#include "strata/profile/kernel_rules.h"

namespace strata::profile {

struct ProfileReport {
  std::vector<RankProfile> ranks;  // by rank (unknown ranks last, in file order)
  std::vector<std::string> warnings;
  std::string rules_file;
};

/// The trace files of `paths`: a file is taken as given, a directory contributes its *.json and
/// *.json.gz files (sorted). Errors: a path that does not exist, a directory without traces.
Result<std::vector<std::string>> ExpandTracePaths(const std::vector<std::string>& paths);

/// Reads and analyses every file. A file that is not a trace is an error (naming it); a cut
/// file is read as far as it goes and noted in the rank and in `warnings`.
Result<ProfileReport> ProfileTraces(const std::vector<std::string>& files,
                                    KernelClassifier& classifier);

/// The job-level warnings for already analysed ranks (exposed for tests).
std::vector<std::string> JobWarnings(const std::vector<RankProfile>& ranks);

}  // namespace strata::profile

#endif  // STRATA_PROFILE_PROFILE_H_

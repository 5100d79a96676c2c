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

/// One step across the ranks that recorded it: the slowest and fastest rank by span, and the part
/// of a step where the slowest one spends the most extra time. The parts partition the span:
/// GPU idle + exposed NCCL + exposed other communication + compute (the rest of GPU busy).
struct StepSpread {
  int64_t step = 0;
  size_t ranks = 0;    // how many ranks recorded the step
  size_t slowest = 0;  // index into ProfileReport::ranks
  size_t fastest = 0;
  int64_t slowest_span_ns = 0;
  int64_t fastest_span_ns = 0;
  std::string largest_part;     // "idle_s", "nccl_exposed_s", "comm_other_exposed_s", "compute_s"
  int64_t largest_part_ns = 0;  // slowest minus fastest in that part
};

/// The spread of every step that two or more ranks recorded, by step number.
std::vector<StepSpread> SpreadAcrossRanks(const std::vector<RankProfile>& ranks);

struct ProfileReport {
  std::vector<RankProfile> ranks;  // by rank (unknown ranks last, in file order)
  std::vector<StepSpread> spread;
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

// `strata profile`'s library entry: trace files (or directories of them), one rank each, read
// and broken down, with the job-level checks: missing and duplicate ranks, clock skew.
#ifndef STRATA_PROFILE_PROFILE_H_
#define STRATA_PROFILE_PROFILE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strata/core/result.h"
#include "strata/profile/breakdown.h"
#include "strata/profile/kernel_rules.h"

namespace strata::profile {

/// How much one rank's figures move from step to step: the range (largest minus smallest) of its
/// exposed communication (NCCL + other) and of its span over its steps with GPU work that another
/// rank recorded too. Unset for a rank with fewer than two such steps.
struct StepSwing {
  std::optional<int64_t> wait_ns;
  std::optional<int64_t> span_ns;
  size_t steps = 0;
};
/// One per rank of `ranks`, in order.
std::vector<StepSwing> StepSwings(const std::vector<RankProfile>& ranks);

/// Whether the straggler's lead is more than noise. Its lead is how far its figure (exposed
/// communication, or span without communication) is from the next rank's; the noise is how far
/// the same ranks' figure moves from one step to the next (the largest StepSwing among them). A
/// straggler is named only when its lead exceeds that swing: a smaller lead is one that the next
/// step may reverse. With one step recorded there is no swing to weigh the lead against, and no
/// straggler is named either.
struct StragglerMargin {
  size_t runner_up = 0;             // the next rank by the same figure: an index into ranks
  int64_t straggler_ns = 0;         // the straggler's figure
  int64_t runner_up_ns = 0;         // the next rank's
  int64_t lead_ns = 0;              // |runner_up_ns - straggler_ns|
  std::optional<int64_t> noise_ns;  // the largest step-to-step swing; unset: one step
  size_t noise_index = 0;           // the rank with that swing
  size_t noise_steps = 0;           // over how many steps it swung
  bool clear = false;               // lead_ns > *noise_ns
};

/// Which rank held the others up, among several ranks' figures for one step (or their mean
/// step): the one definition the cross-rank view (SpreadAcrossRanks) and `profile --job`'s
/// slowest rank (calibrate::CompareWithJob) both use. With exposed communication on some rank, the
/// straggler is the rank with the least of it (exposed NCCL + other communication) and the
/// reference the rank with the most (it waited longest); without, the straggler is the rank with
/// the longest span and the reference the one with the shortest. Ties go to the earlier entry.
/// Ranks that meet in blocking collectives leave the step's last collective together, so the rank
/// the others waited for - the straggler, in Holistic Trace Analysis' words
/// (hta/analyzers/straggler.py, which takes the rank whose last long communication kernel starts
/// latest) - spent the least time waiting in collectives; the longest span belongs to the
/// opposite rank, the one that arrived first and waited longest.
struct StragglerPick {
  size_t straggler = 0;  // the pair's first member: an index into ProfileReport::ranks
  size_t reference = 0;
  bool communication = false;
  StragglerMargin margin;  // its lead against the step-to-step noise
};
/// `figures`: (index, figures) of two or more ranks; `swings`: StepSwings of the ranks the
/// indices point into (empty: no swing known, no straggler clear).
StragglerPick PickStraggler(const std::vector<std::pair<size_t, const Figures*>>& figures,
                            const std::vector<StepSwing>& swings);

/// One step across the ranks that recorded it (with GPU work in it): the straggler candidate
/// (PickStraggler), named only when `margin.clear`, and why it would be late.
struct StepSpread {
  int64_t step = 0;
  size_t ranks = 0;            // how many ranks recorded the step with GPU work in it
  bool identical = false;      // every rank's span, busy time and exposed communication are equal
  bool communication = false;  // some rank has exposed communication in the step
  size_t straggler = 0;        // the candidate: index into ProfileReport::ranks
  StragglerMargin margin;      // whether it is named (margin.clear)
  size_t waited_most = 0;      // the rank with the most exposed communication
  int64_t straggler_wait_ns = 0;  // exposed NCCL + other communication
  int64_t most_wait_ns = 0;
  int64_t straggler_compute_ns = 0;  // GPU busy minus exposed communication
  int64_t compute_min_ns = 0;        // over all the step's ranks
  int64_t compute_max_ns = 0;
  size_t longest = 0;  // by span
  size_t shortest = 0;
  int64_t longest_span_ns = 0;
  int64_t shortest_span_ns = 0;
  /// Why the straggler is late, against the rank that waited most: "compute" (its kernels take
  /// longer), "idle" (its GPU idles longer inside the step), "late start" (neither: its step's
  /// GPU work began late - host, data loading, the previous step); without communication: the
  /// part of the span that differs most between the longest and the shortest rank ("idle_s",
  /// "compute_s").
  std::string reason;
  int64_t reason_ns = 0;  // the straggler's extra time in that part
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
/// file is read as far as it goes and noted in the rank and in `warnings`; among two or more
/// files, one cut before its first event is left out with a warning (a missing rank), and only
/// when every file is so is it an error.
Result<ProfileReport> ProfileTraces(const std::vector<std::string>& files,
                                    KernelClassifier& classifier);

/// The job-level warnings for already analysed ranks (exposed for tests).
std::vector<std::string> JobWarnings(const std::vector<RankProfile>& ranks);

}  // namespace strata::profile

#endif  // STRATA_PROFILE_PROFILE_H_

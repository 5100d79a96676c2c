// Horovod's stall inspector: the warning rank 0 (the coordinator) prints when tensors submitted
// by some ranks have waited longer than HOROVOD_STALL_CHECK_TIME_SECONDS (60 s) for the rest.
// Every format Horovod has printed, oldest first:
//   "Stalled ops:" then "name [ready ranks: 5, 6, 3, 1, 4, 0], "   the READY ranks (to 0.13)
//   "Stalled ops:" then "name [missing ranks: 0, 3]"              one line per tensor (to 0.16)
//   "Stalled ranks:" / "Missing ranks:" then "3: [t1, t2 ...]"   one line per missing rank
//     (stall_inspector.cc), "3!: [" for a rank past HOROVOD_STALL_SHUTDOWN_TIME_SECONDS, then
//     "One or more rank (marked by "!") is stalled for longer than N seconds. Will shutdown."
// Lines may carry Open MPI's "[1,0]<stderr>:" tag, torn into the middle of a line when ranks
// write at once; the tags are dropped before reading.
#ifndef STRATA_HANG_PARSERS_HOROVOD_STALL_H_
#define STRATA_HANG_PARSERS_HOROVOD_STALL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "strata/hang/parsers/failure_log.h"

namespace strata::hang {

/// `line` without Open MPI's --tag-output tags "[<job>,<rank>]<stdout|stderr>:", wherever they
/// are in it.
std::string StripMpiTags(std::string_view line);

/// The rank of Open MPI's tag "[<job>,<rank>]<stdout|stderr>:" that opens `line`, if it does.
std::optional<int64_t> MpiTagRank(std::string_view line);

/// Reads a log one line at a time and gathers each stall warning into one kHorovodStall signal
/// whose `ranks` are the ranks that had not submitted (for the ready-ranks format: the ranks
/// below the highest ready one that are not listed; ranks above it cannot be known). When the
/// ready-ranks lists split the ranks into disjoint groups, every rank ready on some tensor and
/// no rank on all, the ranks are at different tensors: the signal is marked `split` and its
/// `ranks` are the smallest group, if one group is smaller than every other. When a "Stalled
/// ranks:" list names two or more ranks and the tensors of each name a collective missing on no
/// other listed rank (one never entered the broadcasts, another the allreduces), the ranks wait
/// in different collectives: the signal is `split`, with no rank named.
class HorovodStallReader {
 public:
  explicit HorovodStallReader(const std::string& file) : file_(file) {}

  /// True when the line belongs to a stall warning (the caller reads it no further). A warning
  /// that ends is returned through Take().
  bool Line(std::string_view cleaned, int number);

  /// The warnings completed so far (the last one closed), in order.
  std::vector<FailureSignal> Take();

 private:
  void Flush();
  void Add(std::string_view line, int number, const std::set<int64_t>& ranks);
  // The rank lists of one line; false when it holds none.
  bool RankLists(std::string_view line, int number);

  const std::string& file_;
  bool header_ = false;  // the warning's first sentence was seen
  bool list_ = false;    // inside "Missing ranks:" / "Stalled ranks:"
  bool shutdown_ = false;
  bool ready_format_ = false;
  std::set<int64_t> ranks_;
  std::vector<std::set<int64_t>> ready_;  // each "[ready ranks: ...]" list, as listed
  // per rank of a "Stalled ranks:" list, the collectives its unsubmitted tensors name
  std::map<int64_t, std::set<std::string>> missing_ops_;
  std::optional<FailureSignal> current_;
  std::vector<FailureSignal> done_;
};

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_HOROVOD_STALL_H_

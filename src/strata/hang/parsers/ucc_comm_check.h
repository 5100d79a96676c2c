// torch_ucc's comm check (ProcessGroupUCC, facebookresearch/torch_ucc#53): when a rank's progress
// queue has stayed empty past the timeout, the ranks exchange their collective counters and the
// rank that aborts prints, under "[Rank 1][ProcessGroupUCC-1][COMM_CHECK]":
//   Aborting comms #12 (op=ALLTOALL_BASE) due to the problematic ranks: [ 0 ]
//           Ranks [0] are 'Collective wasn't posted'
//   Comms status of other ranks:
//           Ranks [0] are last known progressing comms #11 (op=ALLTOALL_BASE)
//           Ranks [1 2 3 ... 15] are last known progressing comms #12 (op=ALLTOALL_BASE)
// A problematic rank whose collective "wasn't posted" never issued #12 while the others wait in
// it: it is behind.
#ifndef STRATA_HANG_PARSERS_UCC_COMM_CHECK_H_
#define STRATA_HANG_PARSERS_UCC_COMM_CHECK_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "strata/hang/parsers/failure_log.h"

namespace strata::hang {

/// Reads a log one line at a time and gathers each comm-check report into one kUccNotPosted
/// signal: the aborted collective's number and operation, and the problematic ranks the report
/// says never posted it. A report whose problematic ranks are in another state gives no signal.
class UccCommCheckReader {
 public:
  explicit UccCommCheckReader(const std::string& file) : file_(file) {}

  /// True when the line belongs to a report (the caller reads it no further).
  bool Line(std::string_view cleaned, int number);

  /// The reports completed so far (the last one closed), in order.
  std::vector<FailureSignal> Take();

 private:
  void Flush();

  const std::string& file_;
  std::optional<FailureSignal> current_;
  std::set<int64_t> problematic_;
  std::set<int64_t> not_posted_;
  std::vector<FailureSignal> done_;
};

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_UCC_COMM_CHECK_H_

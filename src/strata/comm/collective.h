// The collectives and nccl-tests' bandwidth conventions, so our numbers can be held against a
// user's own nccl-tests run (NVIDIA/nccl-tests doc/PERFORMANCE.md):
//
//   algbw = size / time, where size is nccl-tests' "size" column: the buffer of one rank for
//           all-reduce, broadcast, reduce and send/recv, and the whole gathered (or scattered)
//           buffer, n chunks, for all-gather, reduce-scatter and all-to-all.
//   busbw = algbw x factor, the factor turning algbw into what each rank's link carries:
//           all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n;
//           broadcast, reduce, send/recv 1.
#ifndef STRATA_COMM_COLLECTIVE_H_
#define STRATA_COMM_COLLECTIVE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/core/units.h"

namespace strata {

enum class CollectiveOp {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kSendRecv,
};

std::string ToString(CollectiveOp op);  // "all_reduce", "all_gather", ...
/// "all_reduce", "allreduce" and "all-reduce" are one op; "did you mean" on a miss.
Result<CollectiveOp> ParseCollectiveOp(std::string_view text);
const std::vector<CollectiveOp>& AllCollectiveOps();

/// busbw / algbw for `ranks` ranks (nccl-tests). ranks must be >= 1; 1 rank gives 0 for the
/// (n-1)/n kinds, as nccl-tests prints.
double BusBwFactor(CollectiveOp op, int64_t ranks);

/// size / time.
BytesPerSecond AlgBw(Bytes size, Seconds time);
/// AlgBw x BusBwFactor.
BytesPerSecond BusBw(CollectiveOp op, int64_t ranks, Bytes size, Seconds time);

}  // namespace strata

#endif  // STRATA_COMM_COLLECTIVE_H_

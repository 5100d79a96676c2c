#include "strata/comm/collective.h"

#include <fmt/format.h>

#include <cctype>

#include "strata/core/did_you_mean.h"

namespace strata {

const std::vector<CollectiveOp>& AllCollectiveOps() {
  static const std::vector<CollectiveOp> kOps = {
      CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
      CollectiveOp::kAllToAll,  CollectiveOp::kBroadcast, CollectiveOp::kReduce,
      CollectiveOp::kSendRecv};
  return kOps;
}

std::string ToString(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "all_reduce";
    case CollectiveOp::kAllGather:
      return "all_gather";
    case CollectiveOp::kReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::kAllToAll:
      return "all_to_all";
    case CollectiveOp::kBroadcast:
      return "broadcast";
    case CollectiveOp::kReduce:
      return "reduce";
    case CollectiveOp::kSendRecv:
      return "send_recv";
  }
  return "?";
}

Result<CollectiveOp> ParseCollectiveOp(std::string_view text) {
  // Compare with separators removed so "all-reduce", "allreduce" and "all_reduce" agree, and
  // accept nccl-tests' binary names ("alltoall", "sendrecv").
  auto squash = [](std::string_view s) {
    std::string out;
    for (char c : s) {
      if (c == '_' || c == '-' || c == ' ') continue;
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
  };
  std::vector<std::string> names;
  for (CollectiveOp op : AllCollectiveOps()) {
    if (squash(ToString(op)) == squash(text)) return op;
    names.push_back(ToString(op));
  }
  return InvalidInput(fmt::format("unknown collective '{}'", text))
      .InField("op")
      .WithHint(DidYouMeanHint(text, names));
}

double BusBwFactor(CollectiveOp op, int64_t ranks) {
  const double n = static_cast<double>(ranks);
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll:
      return (n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
    case CollectiveOp::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

BytesPerSecond AlgBw(Bytes size, Seconds time) { return size / time; }

BytesPerSecond BusBw(CollectiveOp op, int64_t ranks, Bytes size, Seconds time) {
  return AlgBw(size, time) * BusBwFactor(op, ranks);
}

}  // namespace strata

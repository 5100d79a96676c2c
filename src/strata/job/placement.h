// Where each parallel group's ranks sit on the nodes, from megatron-core's rank order.
//
// megatron-core numbers ranks by an order string, first dimension fastest ("tp-cp-ep-dp-pp":
// TP neighbours are consecutive ranks). Dense groups (tp, cp, dp, pp) come from the order with
// ep dropped; expert groups (etp, ep, expert_dp, pp) from the same order with tp -> etp,
// dp -> expert_dp and cp folded into expert_dp. Ranks fill nodes in order (rank / gpus_per_node),
// as torchrun assigns them. On the reference cluster (8 GPUs per node) EP8 therefore lands on
// the 8 GPUs of one node and DP40 spans all 5 nodes:
//
//   node 0: ranks 0-7   = one EP group      node 1: ranks 8-15 = the next EP group ...
//   DP group 0 = {0, 1, ..., 39}: every rank, 8 per node, crossing RoCE
//   expert-DP group 0 = {0, 8, 16, 24, 32}: one rank per node, crossing RoCE
#ifndef STRATA_JOB_PLACEMENT_H_
#define STRATA_JOB_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"
#include "strata/job/parallel_layout.h"

namespace strata {

/// megatron-core's default (--rank-order is not a flag there; it is the RankGenerator default).
inline constexpr const char* kDefaultRankOrder = "tp-cp-ep-dp-pp";

/// The five names "tp", "cp", "ep", "dp", "pp", each once, joined by '-'.
Result<std::vector<std::string>> ParseRankOrder(std::string_view order);

/// kDpCp is the group gradients of non-expert parameters are reduced over (DP x CP).
enum class GroupKind { kTp, kCp, kDp, kDpCp, kPp, kEp, kEtp, kExpertDp };
std::string ToString(GroupKind kind);  // "tp", "cp", "dp", "dp_cp", "pp", "ep", "etp", "expert_dp"

struct GroupPlacement {
  GroupKind kind = GroupKind::kTp;
  int64_t size = 1;                  // ranks in one group
  int64_t count = 0;                 // groups of this kind
  std::vector<int64_t> first_group;  // the ranks of the group holding rank 0
  int64_t nodes_spanned = 1;         // the most nodes any group touches
  int64_t ranks_per_node = 1;        // the fewest of a group's ranks on one of its nodes
  bool intra_node() const { return nodes_spanned == 1; }
};

/// Every group kind of the layout (size-1 kinds included, so callers can look any up).
/// Fails when the world does not fill whole nodes' worth of ranks consistently, or when
/// ep * etp does not divide tp * cp * dp.
Result<std::vector<GroupPlacement>> PlaceGroups(const ParallelLayout& layout, int64_t gpus_per_node,
                                                std::string_view rank_order = kDefaultRankOrder);

/// The groups of one kind as rank lists (for tests and --explain).
Result<std::vector<std::vector<int64_t>>> GroupRanks(
    const ParallelLayout& layout, GroupKind kind, std::string_view rank_order = kDefaultRankOrder);

const GroupPlacement* FindGroup(const std::vector<GroupPlacement>& groups, GroupKind kind);

}  // namespace strata

#endif  // STRATA_JOB_PLACEMENT_H_

#include "strata/sim/step_placement.h"

#include <algorithm>

namespace strata {
namespace {

// A group whose members are base + i x stride, i < size, on nodes of g consecutive ranks.
// Returns false when the members do not fall on nodes in a regular way.
bool Shape(int64_t stride, int64_t size, int64_t g, GroupPlacement& p) {
  p.size = size;
  if (size == 1) {
    p.nodes_spanned = 1;
    p.ranks_per_node = 1;
    return true;
  }
  if (stride >= g) {
    if (stride % g != 0) return false;
    p.nodes_spanned = size;  // consecutive members are a whole number of nodes apart
    p.ranks_per_node = 1;
    return true;
  }
  if (g % stride != 0) return false;
  const int64_t per_node = g / stride;  // members one node can hold
  if (size <= per_node) {
    if (per_node % size != 0) return false;  // a group must not straddle a node boundary
    p.nodes_spanned = 1;
    p.ranks_per_node = size;
    return true;
  }
  if (size % per_node != 0) return false;
  p.nodes_spanned = size / per_node;
  p.ranks_per_node = per_node;
  return true;
}

}  // namespace

std::optional<std::vector<GroupPlacement>> AlignedGroupShapes(const ParallelLayout& l, int64_t g) {
  if (g < 1 || l.tp < 1 || l.pp < 1 || l.cp < 1 || l.dp < 1 || l.ep < 1 || l.etp < 1) {
    return std::nullopt;
  }
  const int64_t expert_world = l.tp * l.cp * l.dp;
  if (expert_world % (l.ep * l.etp) != 0) return std::nullopt;
  const int64_t world = l.world();
  const int64_t edp = expert_world / (l.ep * l.etp);
  // megatron-core's default order, first fastest: dense tp-cp-dp-pp (ep dropped), expert
  // etp-ep-expert_dp-pp (cp folded into expert_dp).
  struct Spec {
    GroupKind kind;
    int64_t stride, size;
  };
  const Spec specs[] = {{GroupKind::kTp, 1, l.tp},
                        {GroupKind::kCp, l.tp, l.cp},
                        {GroupKind::kDp, l.tp * l.cp, l.dp},
                        {GroupKind::kDpCp, l.tp, l.cp * l.dp},
                        {GroupKind::kPp, expert_world, l.pp},
                        {GroupKind::kEp, l.etp, l.ep},
                        {GroupKind::kEtp, 1, l.etp},
                        {GroupKind::kExpertDp, l.etp * l.ep, edp}};
  std::vector<GroupPlacement> out;
  out.reserve(std::size(specs));
  for (const Spec& s : specs) {
    GroupPlacement p;
    p.kind = s.kind;
    p.count = world / s.size;
    if (!Shape(s.stride, s.size, g, p)) return std::nullopt;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace strata

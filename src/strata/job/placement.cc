#include "strata/job/placement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "strata/core/did_you_mean.h"

namespace strata {
namespace {

const std::vector<std::string> kOrderNames = {"tp", "cp", "ep", "dp", "pp"};

struct Dim {
  std::string name;
  int64_t size;
};

// The dimensions of one of megatron-core's two rank generators, in rank order (fastest first).
std::vector<Dim> GeneratorDims(const ParallelLayout& l, const std::vector<std::string>& order,
                               bool expert) {
  std::vector<Dim> dims;
  for (const auto& name : order) {
    int64_t size = 1;
    if (name == "tp") size = expert ? l.etp : l.tp;
    if (name == "cp") size = expert ? 1 : l.cp;
    if (name == "ep") size = expert ? l.ep : 1;
    if (name == "dp") size = expert ? l.expert_dp() : l.dp;
    if (name == "pp") size = l.pp;
    dims.push_back({name, size});
  }
  return dims;
}

// All groups along `dim` (and `dim2` when given): ranks that agree on every other dimension.
// The other dimensions' indices, read as a mixed-radix number, name the group; ranks arrive in
// increasing order, so every group comes out sorted, and groups are ordered by their first rank.
std::vector<std::vector<int64_t>> OrthogonalGroups(const std::vector<Dim>& dims,
                                                   const std::string& dim,
                                                   const std::string& dim2) {
  int64_t world = 1;
  int64_t group_count = 1;
  for (const auto& d : dims) {
    world *= d.size;
    if (d.name != dim && d.name != dim2) group_count *= d.size;
  }
  std::vector<int64_t> order_of_key(static_cast<size_t>(group_count), -1);
  std::vector<std::vector<int64_t>> out;
  for (int64_t rank = 0; rank < world; ++rank) {
    int64_t key = 0;
    int64_t radix = 1;
    int64_t rest = rank;
    for (const auto& d : dims) {
      const int64_t index = rest % d.size;
      rest /= d.size;
      if (d.name == dim || d.name == dim2) continue;
      key += index * radix;
      radix *= d.size;
    }
    int64_t& slot = order_of_key[static_cast<size_t>(key)];
    if (slot < 0) {
      slot = static_cast<int64_t>(out.size());
      out.emplace_back();
    }
    out[static_cast<size_t>(slot)].push_back(rank);
  }
  return out;
}

struct KindInfo {
  GroupKind kind;
  const char* dim;   // the dimension's name in the order string
  const char* dim2;  // a second dimension the group also spans ("" for none)
  bool expert;       // from the expert generator
};
const KindInfo kKinds[] = {
    {GroupKind::kTp, "tp", "", false}, {GroupKind::kCp, "cp", "", false},
    {GroupKind::kDp, "dp", "", false}, {GroupKind::kDpCp, "dp", "cp", false},
    {GroupKind::kPp, "pp", "", false}, {GroupKind::kEp, "ep", "", true},
    {GroupKind::kEtp, "tp", "", true}, {GroupKind::kExpertDp, "dp", "", true}};

Status CheckLayout(const ParallelLayout& l) {
  for (auto [name, v] : {std::pair{"tp", l.tp},
                         {"pp", l.pp},
                         {"cp", l.cp},
                         {"ep", l.ep},
                         {"etp", l.etp},
                         {"dp", l.dp}}) {
    if (v < 1)
      return InvalidInput(fmt::format("{} must be at least 1, got {}", name, v)).InField(name);
  }
  if ((l.tp * l.cp * l.dp) % (l.ep * l.etp) != 0) {
    return InvalidInput(fmt::format("ep x etp = {} x {} = {} must divide tp x cp x dp = {}", l.ep,
                                    l.etp, l.ep * l.etp, l.tp * l.cp * l.dp))
        .InField("ep")
        .WithHint("megatron-core carves expert parallelism out of TP x CP x DP");
  }
  return OkStatus();
}

}  // namespace

std::string ToString(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTp:
      return "tp";
    case GroupKind::kCp:
      return "cp";
    case GroupKind::kDp:
      return "dp";
    case GroupKind::kDpCp:
      return "dp_cp";
    case GroupKind::kPp:
      return "pp";
    case GroupKind::kEp:
      return "ep";
    case GroupKind::kEtp:
      return "etp";
    case GroupKind::kExpertDp:
      return "expert_dp";
  }
  return "?";
}

Result<std::vector<std::string>> ParseRankOrder(std::string_view order) {
  if (order.empty()) {
    return InvalidInput("the rank order is empty")
        .InField("rank_order")
        .WithHint(fmt::format("megatron-core's default is '{}'", kDefaultRankOrder));
  }
  std::vector<std::string> names;
  size_t start = 0;
  const std::string text(order);
  while (start <= text.size()) {
    const size_t dash = text.find('-', start);
    names.push_back(
        text.substr(start, dash == std::string::npos ? std::string::npos : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (std::find(kOrderNames.begin(), kOrderNames.end(), n) == kOrderNames.end()) {
      return InvalidInput(fmt::format("unknown dimension '{}' in rank order '{}'", n, order))
          .InField("rank_order")
          .WithHint(DidYouMeanHint(n, kOrderNames));
    }
    if (!seen.insert(n).second) {
      return InvalidInput(fmt::format("dimension '{}' appears twice in rank order '{}'", n, order))
          .InField("rank_order");
    }
  }
  if (names.size() != kOrderNames.size()) {
    return InvalidInput(
               fmt::format("rank order '{}' must name each of tp, cp, ep, dp, pp once", order))
        .InField("rank_order")
        .WithHint(fmt::format("megatron-core's default is '{}'", kDefaultRankOrder));
  }
  return names;
}

Result<std::vector<std::vector<int64_t>>> GroupRanks(const ParallelLayout& layout, GroupKind kind,
                                                     std::string_view rank_order) {
  STRATA_RETURN_IF_ERROR(CheckLayout(layout));
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> order, ParseRankOrder(rank_order));
  for (const auto& k : kKinds) {
    if (k.kind == kind)
      return OrthogonalGroups(GeneratorDims(layout, order, k.expert), k.dim, k.dim2);
  }
  Error e = InvalidInput("unknown group kind");
  e.code = ErrorCode::kInternal;
  return e;
}

Result<std::vector<GroupPlacement>> PlaceGroups(const ParallelLayout& layout, int64_t gpus_per_node,
                                                std::string_view rank_order) {
  if (gpus_per_node < 1) {
    return InvalidInput(fmt::format("gpus_per_node must be at least 1, got {}", gpus_per_node));
  }
  std::vector<GroupPlacement> out;
  for (const auto& k : kKinds) {
    STRATA_ASSIGN_OR_RETURN(auto groups, GroupRanks(layout, k.kind, rank_order));
    GroupPlacement p;
    p.kind = k.kind;
    p.size = static_cast<int64_t>(groups.front().size());
    p.count = static_cast<int64_t>(groups.size());
    p.first_group = groups.front();
    p.nodes_spanned = 0;
    p.ranks_per_node = p.size;
    for (const auto& g : groups) {
      // A group's ranks are sorted, so its ranks on one node form one run.
      int64_t nodes = 0;
      for (size_t i = 0; i < g.size();) {
        const int64_t node = g[i] / gpus_per_node;
        size_t j = i;
        while (j < g.size() && g[j] / gpus_per_node == node) ++j;
        ++nodes;
        p.ranks_per_node = std::min(p.ranks_per_node, static_cast<int64_t>(j - i));
        i = j;
      }
      p.nodes_spanned = std::max(p.nodes_spanned, nodes);
    }
    out.push_back(std::move(p));
  }
  return out;
}

const GroupPlacement* FindGroup(const std::vector<GroupPlacement>& groups, GroupKind kind) {
  for (const auto& g : groups) {
    if (g.kind == kind) return &g;
  }
  return nullptr;
}

}  // namespace strata

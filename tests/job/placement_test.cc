#include "strata/job/placement.h"

#include <gtest/gtest.h>

namespace strata::placement_test {
namespace {

ParallelLayout Reference() {
  ParallelLayout l;
  l.ep = 8;
  l.dp = 40;  // TP1 PP1 CP1 ETP1: expert-DP = 40 / 8 = 5
  return l;
}

// The reference layout on 8-GPU nodes, derived by hand from megatron-core's rank order
// "tp-cp-ep-dp-pp" (first fastest): EP8 takes 8 consecutive ranks = one node; DP40 is every
// rank; expert-DP joins the ranks with the same EP index: stride 8, one per node.
TEST(Placement, ReferenceLayoutEp8InsideNodesDp40AcrossThem) {
  auto groups = PlaceGroups(Reference(), 8);
  ASSERT_TRUE(groups.ok()) << groups.error().Format();
  struct Expect {
    GroupKind kind;
    int64_t size, count, nodes_spanned, ranks_per_node;
    std::vector<int64_t> first;
  };
  const Expect expected[] = {
      {GroupKind::kEp, 8, 5, 1, 8, {0, 1, 2, 3, 4, 5, 6, 7}},
      {GroupKind::kExpertDp, 5, 8, 5, 1, {0, 8, 16, 24, 32}},
      {GroupKind::kTp, 1, 40, 1, 1, {0}},
      {GroupKind::kPp, 1, 40, 1, 1, {0}},
      {GroupKind::kEtp, 1, 40, 1, 1, {0}},
  };
  for (const auto& e : expected) {
    SCOPED_TRACE(ToString(e.kind));
    const GroupPlacement* g = FindGroup(*groups, e.kind);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->size, e.size);
    EXPECT_EQ(g->count, e.count);
    EXPECT_EQ(g->nodes_spanned, e.nodes_spanned);
    EXPECT_EQ(g->ranks_per_node, e.ranks_per_node);
    EXPECT_EQ(g->first_group, e.first);
  }
  const GroupPlacement* dp = FindGroup(*groups, GroupKind::kDp);
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ(dp->size, 40);
  EXPECT_EQ(dp->nodes_spanned, 5);
  EXPECT_EQ(dp->ranks_per_node, 8);
  EXPECT_FALSE(dp->intra_node());
  EXPECT_TRUE(FindGroup(*groups, GroupKind::kEp)->intra_node());
}

TEST(Placement, EveryEpGroupIsOneNode) {
  auto ep = GroupRanks(Reference(), GroupKind::kEp);
  ASSERT_TRUE(ep.ok());
  ASSERT_EQ(ep->size(), 5u);
  for (size_t node = 0; node < ep->size(); ++node) {
    for (int64_t r : (*ep)[node]) EXPECT_EQ(r / 8, static_cast<int64_t>(node));
  }
}

TEST(Placement, Tp2Pp2ByHand) {
  // TP2 PP2 DP4 on 16 GPUs, order tp-cp-ep-dp-pp: rank = tp + 2 x (dp + 4 x pp).
  // TP groups {0,1},{2,3}...; DP group of rank 0: tp=0, pp=0, dp=0..3 -> {0,2,4,6};
  // PP group of rank 0: {0, 8}: the two stages sit on different nodes of 8.
  ParallelLayout l;
  l.tp = 2;
  l.pp = 2;
  l.dp = 4;
  auto groups = PlaceGroups(l, 8);
  ASSERT_TRUE(groups.ok());
  EXPECT_EQ(FindGroup(*groups, GroupKind::kTp)->first_group, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(FindGroup(*groups, GroupKind::kDp)->first_group, (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(FindGroup(*groups, GroupKind::kPp)->first_group, (std::vector<int64_t>{0, 8}));
  EXPECT_EQ(FindGroup(*groups, GroupKind::kPp)->nodes_spanned, 2);
  EXPECT_TRUE(FindGroup(*groups, GroupKind::kDp)->intra_node());
}

TEST(Placement, RankOrderChangesWhoIsNeighbour) {
  // With "dp-tp-cp-ep-pp" DP varies fastest: the 40 DP ranks are still everyone, but EP groups
  // now take ranks 0,5,10,...: EP8 strides over the nodes instead of filling one.
  ParallelLayout l = Reference();
  auto groups = PlaceGroups(l, 8, "dp-tp-cp-ep-pp");
  ASSERT_TRUE(groups.ok());
  const GroupPlacement* ep = FindGroup(*groups, GroupKind::kEp);
  EXPECT_EQ(ep->first_group, (std::vector<int64_t>{0, 5, 10, 15, 20, 25, 30, 35}));
  EXPECT_EQ(ep->nodes_spanned, 5);
}

TEST(Placement, ContextParallelJoinsDpForGradients) {
  // TP1 CP2 DP4 on 8 GPUs: rank = cp + 2 x dp. DP x CP group = all 8 ranks.
  ParallelLayout l;
  l.cp = 2;
  l.dp = 4;
  auto groups = PlaceGroups(l, 8);
  ASSERT_TRUE(groups.ok());
  EXPECT_EQ(FindGroup(*groups, GroupKind::kCp)->first_group, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(FindGroup(*groups, GroupKind::kDp)->first_group, (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(FindGroup(*groups, GroupKind::kDpCp)->size, 8);
}

struct BadCase {
  const char* name;
  ParallelLayout layout;
  const char* order;
  const char* expected;
};

TEST(Placement, BadInputsAreErrors) {
  ParallelLayout bad_ep = Reference();
  bad_ep.ep = 3;
  ParallelLayout zero = Reference();
  zero.tp = 0;
  const BadCase cases[] = {
      {"ep does not divide", bad_ep, kDefaultRankOrder,
       "ep: ep x etp = 3 x 1 = 3 must divide tp x cp x dp = 40\n  hint: megatron-core carves "
       "expert parallelism out of TP x CP x DP"},
      {"zero tp", zero, kDefaultRankOrder, "tp: tp must be at least 1, got 0"},
      {"unknown dim", Reference(), "tp-cp-ep-dq-pp",
       "rank_order: unknown dimension 'dq' in rank order 'tp-cp-ep-dq-pp'\n  hint: did you mean "
       "'dp'?"},
      {"repeated dim", Reference(), "tp-tp-ep-dp-pp",
       "rank_order: dimension 'tp' appears twice in rank order 'tp-tp-ep-dp-pp'"},
      {"missing dim", Reference(), "tp-cp-ep-dp",
       "rank_order: rank order 'tp-cp-ep-dp' must name each of tp, cp, ep, dp, pp once\n  hint: "
       "megatron-core's default is 'tp-cp-ep-dp-pp'"},
      {"empty order", Reference(), "",
       "rank_order: the rank order is empty\n  hint: megatron-core's default is "
       "'tp-cp-ep-dp-pp'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto groups = PlaceGroups(c.layout, 8, c.order);
    ASSERT_FALSE(groups.ok());
    EXPECT_EQ(groups.error().Format(), c.expected);
  }
  EXPECT_FALSE(PlaceGroups(Reference(), 0).ok());
}

}  // namespace
}  // namespace strata::placement_test

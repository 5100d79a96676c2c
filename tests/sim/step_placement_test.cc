// The hot path's group shapes must equal what enumerating every rank (job/placement.h) gives,
// on every node-aligned layout of a grid; the others must be declined, never guessed.
#include "strata/sim/step_placement.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(StepPlacement, AlignedShapesEqualPlaceGroups) {
  int checked = 0;
  for (int64_t g : {4, 8}) {
    for (int64_t tp : {1, 2, 4, 8}) {
      for (int64_t cp : {1, 2}) {
        for (int64_t pp : {1, 2, 3}) {
          for (int64_t dp : {1, 2, 3, 4, 5, 8, 16}) {
            for (int64_t ep : {1, 2, 4, 8, 16}) {
              for (int64_t etp : {1, 2}) {
                ParallelLayout l;
                l.tp = tp, l.cp = cp, l.pp = pp, l.dp = dp, l.ep = ep, l.etp = etp;
                if (l.world() % g != 0 && l.world() > g) continue;
                auto ref = PlaceGroups(l, g);
                auto fast = AlignedGroupShapes(l, g);
                if (!ref.ok()) {
                  EXPECT_FALSE(fast.has_value()) << "accepted an invalid layout";
                  continue;
                }
                if (!fast) continue;  // declined: the caller enumerates
                ++checked;
                for (const GroupPlacement& f : *fast) {
                  const GroupPlacement* r = FindGroup(*ref, f.kind);
                  ASSERT_NE(r, nullptr);
                  const std::string where =
                      ToString(f.kind) + " tp" + std::to_string(tp) + " cp" + std::to_string(cp) +
                      " pp" + std::to_string(pp) + " dp" + std::to_string(dp) + " ep" +
                      std::to_string(ep) + " etp" + std::to_string(etp) + " g" + std::to_string(g);
                  EXPECT_EQ(r->size, f.size) << where;
                  EXPECT_EQ(r->count, f.count) << where;
                  EXPECT_EQ(r->nodes_spanned, f.nodes_spanned) << where;
                  EXPECT_EQ(r->ranks_per_node, f.ranks_per_node) << where;
                }
              }
            }
          }
        }
      }
    }
  }
  // Most of the grid is node-aligned (2,187 layouts when this was written; 53 declined).
  EXPECT_GT(checked, 2000);
}

// The reference layout (TP1 PP1 EP8 DP40 on 8-GPU nodes): DP spans 5 nodes with 8 ranks on
// each, EP stays in one node, expert-DP has one rank per node.
TEST(StepPlacement, ReferenceLayout) {
  ParallelLayout l;
  l.ep = 8;
  l.dp = 40;
  auto shapes = AlignedGroupShapes(l, 8);
  ASSERT_TRUE(shapes.has_value());
  const GroupPlacement* dp = FindGroup(*shapes, GroupKind::kDp);
  const GroupPlacement* ep = FindGroup(*shapes, GroupKind::kEp);
  const GroupPlacement* edp = FindGroup(*shapes, GroupKind::kExpertDp);
  ASSERT_TRUE(dp && ep && edp);
  EXPECT_EQ(dp->nodes_spanned, 5);
  EXPECT_EQ(dp->ranks_per_node, 8);
  EXPECT_EQ(ep->nodes_spanned, 1);
  EXPECT_EQ(edp->nodes_spanned, 5);
  EXPECT_EQ(edp->ranks_per_node, 1);
}

}  // namespace
}  // namespace strata

// The planner checks layouts against the memory the counters reach on the card (the ledger's
// UsableCapacity), the figure `strata memory` checks against, not the datasheet's "80 GB".
#include <gtest/gtest.h>

#include "plan/plan_test_support.h"

namespace strata::plan {
namespace {

// The reference job on 5 nodes of H800 (TP1 EP8): an H800 is an H100 SXM's HBM3 80GB with
// NVLink cut, nvidia-smi memory.total 81,559 MiB; less the driver's 613.3 MiB
// (data/memory_overheads.yaml, device_capacity): 85,520,809,984 - 643,121,152 =
// 84,877,688,832 B. Every ranked layout, the job's own too, is checked against that. Before,
// the planner's floor and the layouts its up-front selection kept used the datasheet's 80e9 B,
// and the H800 had no card entry at all (80e9 B everywhere): a layout whose peak lies between
// 80 and 84.88 GB was dropped on H800 and kept on H100 SXM.
TEST(PlanUsableCapacity, EveryLayoutIsCheckedAgainstWhatTheCountersReach) {
  const testing::Planned p =
      testing::PlanJob("qwen3.6-35b-a3b-sft-h20x40", {"cluster.gpu=H800"}, {});
  ASSERT_TRUE(p.ok);
  ASSERT_FALSE(p.result.top.empty());
  for (const RankedLayout& r : p.result.top) {
    EXPECT_NEAR(r.capacity.count(), 84877688832.0, 1.0);
  }
  EXPECT_NEAR(p.result.current.capacity.count(), 84877688832.0, 1.0);
  // The winner (TP1 PP5 VPP8 DP8) peaks at 83.91 GB: over the datasheet's 80 GB, under what the
  // card gives.
  EXPECT_GT(p.result.top.front().peak.count(), 80e9);
  EXPECT_TRUE(p.result.top.front().fits);
}

}  // namespace
}  // namespace strata::plan

// The splits verl can place (split_shape.h), against its one-step-off-policy recipe
// (verl-project/verl@1dda039b9c6311889a9c9a26040677e1254814f9:verl/experimental/
// one_step_off_policy/README.md, "Resource Configuration Strategies"; its scripts
// grpo_0.6b_gsm8k_fsdp2_2_6.sh: trainer.n_gpus_per_node 6 + rollout.n_gpus_per_node 2 of one
// 8-GPU node, and dapo_7b_math_megatron_4_12.sh: 2 + 6 of each of 2 nodes).
#include "strata/rl/split_shape.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

std::vector<int64_t> RolloutCounts(const std::vector<SplitShape>& shapes) {
  std::vector<int64_t> out;
  for (const SplitShape& s : shapes) out.push_back(s.rollout_gpus());
  return out;
}

// One 8-GPU node, rollout TP 2: the rollout takes 2, 4 or 6 GPUs (whole TP-2 instances), the
// trainer the other 6, 4 or 2; no whole-node split exists. Before, splits were whole nodes only:
// none at all on one node.
TEST(SplitShapeTest, OneNodeSplitsByTheRolloutsTp) {
  const std::vector<SplitShape> shapes = SplitShapes(1, 8, 2);
  ASSERT_EQ(RolloutCounts(shapes), (std::vector<int64_t>{2, 4, 6}));
  for (const SplitShape& s : shapes) {
    EXPECT_TRUE(s.shared_nodes);
    EXPECT_TRUE(s.one_node());
    EXPECT_EQ(s.train_gpus(), 8 - s.rollout_gpus());
  }
}

// 2 nodes of 8, TP 2: whole nodes give 8 + 8; the same share of both nodes gives 2 x 2, 2 x 4
// and 2 x 6 = 4, 8, 12 (4 + 12 is the recipe's published run). 8 comes both ways, whole nodes
// first.
TEST(SplitShapeTest, TwoNodesWholeAndShared) {
  const std::vector<SplitShape> shapes = SplitShapes(2, 8, 2);
  ASSERT_EQ(RolloutCounts(shapes), (std::vector<int64_t>{4, 8, 8, 12}));
  EXPECT_FALSE(shapes[1].shared_nodes);
  EXPECT_TRUE(shapes[2].shared_nodes);
  EXPECT_EQ(shapes[3].rollout_per_node, 6);
  EXPECT_EQ(shapes[3].train_per_node, 2);
  EXPECT_FALSE(shapes[0].one_node());  // its rollout GPUs are on both nodes
}

TEST(SplitShapeTest, CountsThatArePlacedAreNotRefused) {
  EXPECT_EQ(SplitRefusal(4, 1, 8, 2), "");
  EXPECT_EQ(SplitRefusal(4, 2, 8, 2), "");
  EXPECT_EQ(SplitRefusal(8, 2, 8, 2), "");
}

// 3 GPUs cannot hold whole TP-2 instances.
TEST(SplitShapeTest, RolloutGpusNotAMultipleOfTheTpAreRefusedNamingIt) {
  EXPECT_EQ(SplitRefusal(3, 1, 8, 2),
            "placement.rollout_gpus 3 is not a multiple of the rollout's TP 2 (each vLLM "
            "instance takes 2 GPUs of one node)");
}

// 5 nodes of 8 at TP 2: 6 is a multiple of the TP but neither whole nodes (8, 16, ...) nor the
// same share of all 5 nodes (10, 20, 30).
TEST(SplitShapeTest, CountThatVerlCannotPlaceNamesBothForms) {
  EXPECT_EQ(SplitRefusal(6, 5, 8, 2),
            "placement.rollout_gpus 6 is neither whole 8-GPU nodes nor the same share of each of "
            "the 5 nodes: it must be a multiple of 8 (whole nodes) or of 10 (5 nodes x the "
            "rollout's TP 2) below 40");
  EXPECT_EQ(SplitRefusal(8, 1, 8, 2),
            "placement.rollout_gpus 8 leaves none of the 8 GPUs to train");
}

}  // namespace
}  // namespace strata

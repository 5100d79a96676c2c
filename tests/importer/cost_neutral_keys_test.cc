// Which imported keys have no effect on a step (data/import_cost_neutral_keys.yaml). Each
// expectation is read off the key's meaning in verl's config
// (verl/trainer/config/_generated_ppo_trainer.yaml at volcengine/verl@b178a3cd).
#include "strata/importer/cost_neutral_keys.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::cost_neutral_keys_test {
namespace {

std::string GroupOf(const CostNeutralKeys& keys, const std::string& key) {
  const CostNeutralGroup* g = keys.Match(key);
  return g == nullptr ? "" : g->name;
}

TEST(CostNeutralKeys, LearningRatesAndLoggingCostNothingOffloadAndTokenBudgetsMayCostAStep) {
  auto keys = LoadCostNeutralKeys();
  ASSERT_TRUE(keys.ok()) << keys.error().Format();
  // The learning rate and the critic's: the values the optimiser writes, not its work.
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.actor.optim.lr"), "optimiser schedule");
  EXPECT_EQ(GroupOf(*keys, "critic.optim.lr"), "optimiser schedule");
  // `*` spans dots: the clip ratios of the actor and the KL controller's nested keys.
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.actor.clip_ratio_high"),
            "loss and algorithm coefficients");
  EXPECT_EQ(GroupOf(*keys, "algorithm.kl_ctrl.kl_coef"), "loss and algorithm coefficients");
  EXPECT_EQ(GroupOf(*keys, "trainer.logger"), "paths, names and logging");
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.rollout.val_kwargs.top_p"), "validation");
  // The reference model's offload moves its weights over PCIe every step, the rollout's token
  // budget sets vLLM's batch, ignore_eos runs every response to the cap: each may change a
  // step, so none is in a group.
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.ref.fsdp_config.param_offload"), "");
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.rollout.max_num_batched_tokens"), "");
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.rollout.ignore_eos"), "");
  // A pattern is the whole key: "*.optim.lr" does not take the warm-up ratio by prefix (that
  // has its own pattern), nor a key that only ends like it.
  EXPECT_EQ(GroupOf(*keys, "actor_rollout_ref.actor.optim.lr_scheduler_custom"), "");
}

}  // namespace
}  // namespace strata::cost_neutral_keys_test

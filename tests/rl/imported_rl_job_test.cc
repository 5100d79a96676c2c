// RL jobs imported from public verl launches (`strata import`, tests/golden/rl_import/; the
// scripts and their sources in tests/golden/cli_import/SOURCES.md) run through the RL model end
// to end: each reads back as the script says and evaluates without error. Their `strata rl`
// output is pinned by tests/golden/cli_rl/imported_*.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/rl/rl_step.h"
#include "support/golden.h"

namespace strata {
namespace {

struct ImportedCase {
  const char* name;
  RlAlgorithm algorithm;
  int64_t samples;  // data.train_batch_size x rollout.n
  int64_t mini_batches;
  int64_t rollout_tp;
  double gpu_memory_utilization;
  bool enforce_eager;
  bool reference;
  bool offload_trainer;
  int64_t gpus;  // trainer.n_gpus_per_node x trainer.nnodes (or the options' counts)
};

TEST(ImportedRlJobTest, PublicVerlLaunchesRunEndToEnd) {
  const ImportedCase kCases[] = {
      // 512 prompts x 16 = 8,192 samples, 512 / 128 = 4 mini batches, 1 node x 8 H20.
      {"verl_qwen3moe_megatron", RlAlgorithm::kGrpo, 8192, 4, 4, 0.7, true, false, true, 8},
      // 4,096 prompts x 1 (PPO), 4,096 / 512 = 8 mini batches, 1 x 8.
      {"verl_rl_ppo_qwen2_7b_critic", RlAlgorithm::kPpo, 4096, 8, 2, 0.5, true, false, false, 8},
      // 1,024 prompts x 5 = 5,120, 1,024 / 256 = 4, 1 x 16.
      {"verl_rl_grpo_qwen2_5_7b_fsdp", RlAlgorithm::kGrpo, 5120, 4, 2, 0.6, true, true, false, 16},
      // verl's ppo_trainer.yaml: 1,024 x 1, 1,024 / 256 = 4, 1 x 8 (--nodes / --gpus-per-node).
      {"verl_ppo_trainer_fsdp", RlAlgorithm::kPpo, 1024, 4, 2, 0.5, true, false, false, 8},
      // DAPO's recipe (recipe.dapo.main_dapo): 512 x 16 = 8,192, 512 / 32 = 16, rollout TP1
      // at 0.85 (enforce_eager: verl's default True), 4 nodes x 8.
      {"verl_recipe_dapo", RlAlgorithm::kGrpo, 8192, 16, 1, 0.85, true, false, false, 32},
  };
  const auto workspace = Workspace::Load();
  ASSERT_TRUE(workspace.ok()) << workspace.error().Format();
  for (const ImportedCase& c : kCases) {
    auto spec =
        LoadRlSpec(testing::TestPath(std::string("golden/rl_import/") + c.name + "/rl.yaml"));
    ASSERT_TRUE(spec.ok()) << c.name << ": " << spec.error().Format();
    EXPECT_EQ(spec->algorithm, c.algorithm) << c.name;
    EXPECT_EQ(spec->samples(), c.samples) << c.name;
    EXPECT_EQ(spec->mini_batches, c.mini_batches) << c.name;
    EXPECT_EQ(spec->epochs, 1) << c.name;
    EXPECT_EQ(spec->rollout.tp, c.rollout_tp) << c.name;
    EXPECT_NEAR(spec->rollout.gpu_memory_utilization, c.gpu_memory_utilization, 1e-12) << c.name;
    EXPECT_EQ(spec->rollout.enforce_eager, c.enforce_eager) << c.name;
    EXPECT_EQ(spec->reference_model, c.reference) << c.name;
    EXPECT_EQ(spec->placement, RlPlacement::kColocated) << c.name;
    EXPECT_EQ(spec->offload_trainer, c.offload_trainer) << c.name;
    auto eval = EvaluateRl(*workspace, *spec);
    ASSERT_TRUE(eval.ok()) << c.name << ": " << eval.error().Format();
    EXPECT_EQ(eval->actor.cluster.world_size(), c.gpus) << c.name;
    EXPECT_GT(eval->colocated.times.step.value(), 0) << c.name;
  }
}

// The fixtures that set verl's use_dynamic_bsz, packed as verl packs them (micro_batch_test
// derives each count): the PPO script's update 22 micro batches of 23,831 tokens a rank (64
// samples x 8,192 at 24,000), its log-prob passes 175 (512 samples), its critic 6 at 98,304
// and the critic's values 43 (4,194,304 / 98,304 = 42.7); the megatron Qwen3 MoE script one
// sample per micro batch (256 of 10,240 tokens); DAPO's
// recipe one sample per micro batch too (32 x 16 / DP 32 = 16 samples of 4,096 at 4,096).
TEST(ImportedRlJobTest, DynamicBatchFixturesPackAsVerl) {
  struct Pass {
    const char* pass;
    int64_t micro_batches;
    double tokens;
  };
  struct Case {
    const char* name;
    int64_t fixed_micro_batch;
    std::vector<Pass> passes;
  };
  const Case kCases[] = {
      {"verl_rl_ppo_qwen2_7b_critic",
       1,
       {{"actor update", 22, 524288.0 / 22},
        {"log-prob passes", 175, 4194304.0 / 175},
        {"critic update", 6, 524288.0 / 6},
        {"critic values", 43, 4194304.0 / 43}}},
      // Its launch's ppo_micro_batch_size_per_gpu 2 is not used under use_dynamic_bsz (as in
      // verl): the imported actor job packs one sample per micro batch.
      {"verl_qwen3moe_megatron",
       1,
       {{"actor update", 256, 10240}, {"log-prob passes", 1024, 10240}}},
      {"verl_recipe_dapo", 1, {{"actor update", 16, 4096}, {"log-prob passes", 256, 4096}}},
  };
  const auto workspace = Workspace::Load();
  ASSERT_TRUE(workspace.ok()) << workspace.error().Format();
  for (const Case& c : kCases) {
    auto spec =
        LoadRlSpec(testing::TestPath(std::string("golden/rl_import/") + c.name + "/rl.yaml"));
    ASSERT_TRUE(spec.ok()) << c.name << ": " << spec.error().Format();
    auto e = EvaluateRl(*workspace, *spec);
    ASSERT_TRUE(e.ok()) << c.name << ": " << e.error().Format();
    EXPECT_EQ(e->fixed_micro_batch, c.fixed_micro_batch) << c.name;
    ASSERT_EQ(e->micro_batches.size(), c.passes.size()) << c.name;
    for (size_t i = 0; i < c.passes.size(); ++i) {
      EXPECT_EQ(e->micro_batches[i].pass, c.passes[i].pass) << c.name;
      EXPECT_EQ(e->micro_batches[i].packed.micro_batches, c.passes[i].micro_batches)
          << c.name << ": " << c.passes[i].pass;
      EXPECT_NEAR(e->micro_batches[i].packed.tokens_per_micro_batch, c.passes[i].tokens, 1e-6)
          << c.name << ": " << c.passes[i].pass;
    }
  }
}

}  // namespace
}  // namespace strata

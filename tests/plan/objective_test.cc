#include "strata/plan/objective.h"

#include <gtest/gtest.h>

#include <string>

#include "strata/plan/planner.h"

namespace strata::plan {
namespace {

StepSetup ReferenceSetup() {
  auto spec = LoadJobSpec(kReferenceJobName);
  EXPECT_TRUE(spec.ok());
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok());
  auto setup = PrepareStep(*job);
  EXPECT_TRUE(setup.ok());
  return *setup;
}

TEST(PlanObjective, NamesRoundTripAndTyposAreCaught) {
  for (Objective o : {Objective::kTime, Objective::kCost, Objective::kTokensPerJoule}) {
    auto parsed = ParseObjective(ObjectiveName(o));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, o);
  }
  auto typo = ParseObjective("tokens-per-jule");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().field, "--objective");
  EXPECT_NE(typo.error().hint.find("tokens-per-joule"), std::string::npos);
}

TEST(PlanObjective, ShardingChoices) {
  auto job = ParseShardingChoice("job");
  ASSERT_TRUE(job.ok());
  EXPECT_TRUE(job->empty());  // the job's own mode
  auto any = ParseShardingChoice("any");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(*any, (std::vector<ShardingMode>{ShardingMode::kZero1, ShardingMode::kZero3,
                                             ShardingMode::kFsdp2}));
  auto megatron = ParseShardingChoice("megatron");
  ASSERT_TRUE(megatron.ok());
  EXPECT_EQ(*megatron, std::vector<ShardingMode>{ShardingMode::kZero1});
  auto typo = ParseShardingChoice("fsdp");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().field, "--sharding");
  EXPECT_NE(typo.error().hint.find("fsdp2"), std::string::npos) << typo.error().Format();
}

TEST(PlanObjective, EconomyOfTheReferenceStepByHand) {
  // The reference job: 40 H20 (data/gpus.yaml: tdp_watts 400), global batch 80 of 29,000 tokens
  // on average = 2,320,000 tokens per step. At the course's measured 120 s per step:
  //   energy   = 400 W x 40 x 120 s = 1,920,000 J (every GPU at TDP: an upper bound)
  //   tokens/J = 2,320,000 / 1,920,000 = 1.208333...
  //   GPU-h per 1M tokens = 40 x 120 s / 3600 s/h / 2.32 = 0.574713...
  const StepSetup setup = ReferenceSetup();
  StepResult step;
  step.step = Seconds::Of(120);
  const StepEconomy e = EconomyOf(setup, step);
  EXPECT_DOUBLE_EQ(e.tokens_per_step, 2'320'000);
  ASSERT_TRUE(e.energy_per_step_j.has_value());
  EXPECT_DOUBLE_EQ(*e.energy_per_step_j, 1'920'000);
  ASSERT_TRUE(e.tokens_per_joule.has_value());
  EXPECT_NEAR(*e.tokens_per_joule, 1.2083333, 1e-6);
  EXPECT_NEAR(e.gpu_hours_per_million_tokens, 0.5747126, 1e-6);
}

TEST(PlanObjective, TokensPerJouleNeedsAPower) {
  StepSetup setup = ReferenceSetup();
  EXPECT_TRUE(CheckObjective(setup, Objective::kTokensPerJoule).ok());
  setup.job.cluster.gpu.tdp_watts = 0;
  const Status st = CheckObjective(setup, Objective::kTokensPerJoule);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().field, "--objective");
  EXPECT_TRUE(CheckObjective(setup, Objective::kTime).ok());
  EXPECT_TRUE(CheckObjective(setup, Objective::kCost).ok());
  EXPECT_FALSE(EconomyOf(setup, StepResult{}).tokens_per_joule.has_value());
}

TEST(PlanObjective, ResizeJobKeepsTheClusterFilesNetwork) {
  // The reference job on 10 nodes of h20-5x8: the NICs of the cluster file stay (the step model
  // prices DP traffic on them) and DP follows the world: 80 / (TP 1 x PP 1 x CP 1) = 80.
  auto spec = LoadJobSpec(kReferenceJobName);
  ASSERT_TRUE(spec.ok());
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok());
  const size_t nic_groups = job->cluster.nics.size();
  ASSERT_GT(nic_groups, 0u);
  ASSERT_TRUE(ResizeJob(*job, 10).ok());
  EXPECT_EQ(job->cluster.nodes, 10);
  EXPECT_EQ(job->cluster.world_size(), 80);
  EXPECT_EQ(job->layout().dp, 80);
  EXPECT_EQ(job->cluster.nics.size(), nic_groups);
  EXPECT_EQ(job->cluster.name, "h20-5x8");
  // 20 nodes: DP 160 does not divide the global batch of 80; the rule says so.
  EXPECT_FALSE(ResizeJob(*job, 20).ok());
}

}  // namespace
}  // namespace strata::plan

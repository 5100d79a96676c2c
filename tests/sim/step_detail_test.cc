// The planner's step evaluation (Detail::kNumbersOnly: no purposes, level names or caveats) must
// give the numbers `strata step` prints, on every path the step model has: pipeline (even,
// uneven, VPP), recompute modes, activation offload, ZeRO-2/3, FSDP2 with and without
// resharding, HSDP, optimizer offload, FP8 and EP/ETP. Compared: every part's total and exposed
// time, the step, the throughput and every priced collective's time and size.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/job/placement.h"
#include "strata/sim/step_model.h"

namespace strata::step_detail_test {
namespace {

void ExpectSameNumbers(const std::vector<std::string>& sets) {
  SCOPED_TRACE(::testing::PrintToString(sets));
  const auto ref = testing::LoadReferenceStep(sets);
  const StepLayout& layout = ref.setup.layout;
  auto groups = PlaceGroups(layout.layout, ref.setup.job.cluster.gpus_per_node);
  ASSERT_TRUE(groups.ok()) << groups.error().Format();
  auto explained = EvaluateStepOn(ref.setup.tables, layout, *ref.comm, *groups, Detail::kExplained);
  auto numbers = EvaluateStepOn(ref.setup.tables, layout, *ref.comm, *groups, Detail::kNumbersOnly);
  ASSERT_TRUE(explained.ok()) << explained.error().Format();
  ASSERT_TRUE(numbers.ok()) << numbers.error().Format();
  // The explained result has its text; the numbers-only one none.
  ASSERT_FALSE(explained->traffic.empty());
  EXPECT_FALSE(explained->traffic.front().item.purpose.empty());
  EXPECT_TRUE(numbers->traffic.front().item.purpose.empty());
  EXPECT_TRUE(numbers->caveats.empty());

  for (size_t p = 0; p < kStepPartCount; ++p) {
    EXPECT_EQ(numbers->parts[p].total.value(), explained->parts[p].total.value()) << p;
    EXPECT_EQ(numbers->parts[p].exposed.value(), explained->parts[p].exposed.value()) << p;
  }
  EXPECT_EQ(numbers->step.value(), explained->step.value());
  EXPECT_EQ(numbers->micro_batch.value(), explained->micro_batch.value());
  EXPECT_EQ(numbers->tokens_per_s_per_gpu, explained->tokens_per_s_per_gpu);
  EXPECT_EQ(numbers->mfu, explained->mfu);
  EXPECT_EQ(numbers->hfu, explained->hfu);
  ASSERT_EQ(numbers->traffic.size(), explained->traffic.size());
  for (size_t i = 0; i < explained->traffic.size(); ++i) {
    EXPECT_EQ(numbers->traffic[i].time_per_step.value(),
              explained->traffic[i].time_per_step.value())
        << explained->traffic[i].item.purpose;
    EXPECT_EQ(numbers->traffic[i].size_per_step.value(),
              explained->traffic[i].size_per_step.value());
    EXPECT_EQ(numbers->traffic[i].cost.algorithm, explained->traffic[i].cost.algorithm);
  }
  ASSERT_EQ(numbers->host_traffic.size(), explained->host_traffic.size());
}

TEST(StepDetail, NumbersOnlyGivesTheExplainedStepsNumbers) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"parallel.pp=2", "parallel.dp=20", "parallel.ep=4"},
      {"parallel.pp=2", "parallel.dp=20", "parallel.ep=4", "parallel.first_stage_layers=24"},
      {"parallel.pp=2", "parallel.dp=20", "parallel.ep=4", "parallel.vpp=2",
       "recompute.granularity=full"},
      {"parallel.tp=2", "parallel.dp=20", "parallel.ep=8", "parallel.sequence_parallel=true"},
      {"recompute.granularity=selective", "recompute.modules=[layernorm, mlp]"},
      {"recompute.granularity=none", "activation_offload.num_layers=8"},
      {"sharding.mode=zero2", "precision.grads=bf16"},
      {"sharding.mode=zero3"},
      {"sharding.mode=fsdp2", "sharding.reshard_after_forward=false"},
      {"sharding.mode=fsdp2", "sharding.replicate=5"},
      {"sharding.mode=zero3", "sharding.offload_optimizer=cpu"},
      {"fp8.recipe=blockwise", "fp8.param_gather=true"},
  };
  for (const auto& sets : cases) ExpectSameNumbers(sets);
}

}  // namespace
}  // namespace strata::step_detail_test

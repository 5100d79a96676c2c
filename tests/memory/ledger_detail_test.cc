// The planner's ledger (Detail::kNumbersOnly: no items, no text) must give the numbers of
// the ledger `strata memory` prints, on every path the ledger has: pipeline stages (even and
// uneven), VPP, every recompute mode (megatron full/selective, torchtitan every-N and op SAC),
// activation offload, ZeRO-2/3, FSDP2 with and without resharding, HSDP, offload, FP8 recipes
// and native cross entropy. Compared: every phase's bytes, both peaks, the floor, the verdict.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/ledger.h"
#include "strata/memory/ledger_statics.h"
#include "strata/memory/static_memory.h"
#include "support/golden.h"

namespace strata::ledger_detail_test {
namespace {

using testing::Constants;
using testing::ReferenceJob;

void ExpectSameNumbers(const Job& job) {
  const MemoryConstants c = Constants();
  Bytes floor_explained, floor_numbers;
  const MemoryLedger explained =
      ComputeLedger(job, c, ComputeStageStatics(job), floor_explained, Detail::kExplained);
  const MemoryLedger numbers =
      ComputeLedger(job, c, ComputeStageStatics(job, CountParams(job.model), Detail::kNumbersOnly),
                    floor_numbers, Detail::kNumbersOnly);
  // The explained ledger has its text and items; the numbers-only one none (or it saved nothing).
  EXPECT_FALSE(explained.items.empty());
  EXPECT_FALSE(explained.PhaseOf(Phase::kForwardPeak).formula.empty());
  EXPECT_TRUE(numbers.items.empty());
  EXPECT_TRUE(numbers.PhaseOf(Phase::kForwardPeak).formula.empty());

  EXPECT_EQ(numbers.stage, explained.stage);
  ASSERT_EQ(numbers.phases.size(), explained.phases.size());
  for (size_t i = 0; i < explained.phases.size(); ++i) {
    EXPECT_EQ(numbers.phases[i].bytes.value(), explained.phases[i].bytes.value())
        << PhaseName(explained.phases[i].phase);
  }
  EXPECT_EQ(numbers.peak_before_step1.value(), explained.peak_before_step1.value());
  EXPECT_EQ(numbers.peak_after_step1.value(), explained.peak_after_step1.value());
  EXPECT_EQ(floor_numbers.value(), floor_explained.value());
  EXPECT_EQ(numbers.fits, explained.fits);
  EXPECT_EQ(numbers.verdict, explained.verdict);
  EXPECT_EQ(numbers.params_per_gpu, explained.params_per_gpu);

  // The planner's stage-by-stage check: the same answer; when the job fits, the same ledger and
  // floor; when it does not, a lower bound of both (it may stop at the first stage over).
  LazyStageStatics lazy;
  Bytes floor_lazy;
  bool complete = false;
  const MemoryLedger until =
      ComputeLedgerUntilOver(job, c, CountParams(job.model), lazy, floor_lazy, complete);
  EXPECT_EQ(until.fits, explained.fits);
  if (explained.fits) {
    EXPECT_TRUE(complete);
    EXPECT_EQ(until.stage, explained.stage);
    EXPECT_EQ(until.Peak().value(), explained.Peak().value());
    EXPECT_EQ(until.verdict, explained.verdict);
    EXPECT_EQ(floor_lazy.value(), floor_explained.value());
  } else {
    EXPECT_GT(until.Peak().value(), until.capacity.value());
    EXPECT_LE(until.Peak().value(), explained.Peak().value());
    EXPECT_LE(floor_lazy.value(), floor_explained.value());
  }
}

TEST(Detail, NumbersOnlyGivesTheExplainedLedgersNumbers) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"parallel.pp=2", "parallel.dp=20", "parallel.ep=4"},
      {"parallel.pp=2", "parallel.dp=20", "parallel.ep=4", "parallel.first_stage_layers=24"},
      {"parallel.pp=2", "parallel.dp=20", "parallel.ep=4", "parallel.vpp=2",
       "recompute.granularity=full"},
      {"recompute.granularity=selective", "recompute.modules=[layernorm, mlp]"},
      {"recompute.granularity=none", "activation_offload.num_layers=8"},
      {"recompute.granularity=selective", "recompute.selective_ac_option=2"},
      {"sharding.mode=zero2", "precision.grads=bf16"},
      {"sharding.mode=zero3", "sharding.prefetch_layers=0.0047"},
      {"sharding.mode=fsdp2", "sharding.reshard_after_forward=false"},
      {"sharding.mode=fsdp2", "sharding.replicate=5"},
      {"sharding.mode=zero3", "sharding.offload_optimizer=cpu", "sharding.offload_param=cpu"},
      {"fp8.recipe=blockwise", "fp8.param_gather=true"},
      {"fp8.recipe=delayed"},
      {"sharding.mode=fsdp2", "fp8.recipe=torchao_tensorwise", "fp8.param_gather=true"},
      {"loss.cross_entropy=native", "precision.grads=fp32"},
      // Four and more stages: middle stages alike (PP 5: 8 layers each, two periods of the
      // model's 3 linear-attention + 1 full-attention pattern) and not (PP 4: 10 layers each,
      // stage 1 starts mid-period).
      {"parallel.pp=5", "parallel.dp=8", "parallel.ep=8"},
      {"parallel.pp=4", "parallel.dp=10", "parallel.ep=2"},
      {"parallel.pp=5", "parallel.dp=8", "parallel.ep=8", "recompute.granularity=none"},
  };
  for (const auto& sets : cases) {
    SCOPED_TRACE(::testing::PrintToString(sets));
    ExpectSameNumbers(ReferenceJob(sets));
  }
  // torchtitan's op-level SAC needs softmax-attention blocks: the dense Qwen3-14B row (MS-06).
  auto spec = LoadJobSpec(testing::TestPath("memory/validation/ms-06.yaml"),
                          {"recompute.granularity=selective", "recompute.selective_ac_option=op"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  ExpectSameNumbers(*job);
}

// Stage 1 stands for the middle stages when they hold alike layers in the same order. The
// reference model alternates 3 Gated DeltaNet layers and 1 full-attention layer (period 4) over
// 40 layers: PP 5 gives stages of 8 layers, each two whole periods (alike); PP 4 gives 10, and
// stage 1 (layers 10-19) starts at position 2 of a period while stage 2 (20-29) starts at 0.
// PP 8 with 5 layers a stage: stage 1 starts at position 1, stage 2 at 2 (not alike).
TEST(Detail, MiddleStagesAlikeFollowTheLayerPattern) {
  const ParamBreakdown params = CountParams(ReferenceJob({}).model);
  auto alike = [&](const std::vector<std::string>& sets) {
    LazyStageStatics lazy;
    return lazy.MiddleStagesAlike(ReferenceJob(sets), params);
  };
  EXPECT_TRUE(alike({"parallel.pp=5", "parallel.dp=8", "parallel.ep=8"}));
  EXPECT_FALSE(alike({"parallel.pp=4", "parallel.dp=10", "parallel.ep=2"}));
  EXPECT_FALSE(alike({"parallel.pp=8", "parallel.dp=5", "parallel.ep=1"}));
  // PP 20: 2 layers a stage, stage 1 at position 2 (linear, full), stage 2 at 0 (linear, linear).
  EXPECT_FALSE(alike({"parallel.pp=20", "parallel.dp=2", "parallel.ep=2"}));
}

// The stage-by-stage check stops at the first stage over the card, and stage 0 comes first: on
// the reference model with PP 4 and no recompute (stage 0 holds 4 micro batches of 49,152-token
// activations), stage 0 alone decides, and the floor it leaves is at most the whole ledger's.
TEST(Detail, StageByStageCheckStopsAtTheFirstStageOver) {
  const Job job = ReferenceJob({"parallel.pp=4", "parallel.dp=10", "parallel.ep=2",
                                "recompute.granularity=none", "batch.micro_batch=2"});
  const MemoryConstants c = Constants();
  Bytes floor_full;
  const MemoryLedger full = ComputeLedger(job, c, floor_full);
  ASSERT_FALSE(full.fits);
  LazyStageStatics lazy;
  Bytes floor_lazy;
  bool complete = true;
  const MemoryLedger until =
      ComputeLedgerUntilOver(job, c, CountParams(job.model), lazy, floor_lazy, complete);
  EXPECT_FALSE(until.fits);
  EXPECT_FALSE(complete);
  EXPECT_EQ(until.stage, 0);
  EXPECT_EQ(until.Peak().value(), ComputeStageLedger(job, c, 0).Peak().value());
  EXPECT_LE(floor_lazy.value(), floor_full.value());
}

// The layers a stage holds, without a list (the planner's hot path), against the rule written
// out by hand for the reference model's 40 layers.
TEST(StageLayers, EvenVppAndUnevenSplits) {
  auto list = [](const StageLayers& layers) {
    std::vector<int64_t> v;
    for (int64_t i : layers) v.push_back(i);
    return v;
  };
  auto range = [](int64_t from, int64_t to) {  // [from, to)
    std::vector<int64_t> v;
    for (int64_t i = from; i < to; ++i) v.push_back(i);
    return v;
  };
  // PP 2: stage 1 holds the second half, 20..39.
  EXPECT_EQ(list(StageLayerIndices(
                ReferenceJob({"parallel.pp=2", "parallel.dp=20", "parallel.ep=4"}), 1)),
            range(20, 40));
  // PP 2, VPP 2: chunk c of stage s holds [(c x 2 + s) x 10, + 10): stage 1 has 10..19, 30..39.
  const Job vpp =
      ReferenceJob({"parallel.pp=2", "parallel.dp=20", "parallel.ep=4", "parallel.vpp=2"});
  std::vector<int64_t> stage1 = range(10, 20);
  for (int64_t i : range(30, 40)) stage1.push_back(i);
  EXPECT_EQ(list(StageLayerIndices(vpp, 1)), stage1);
  EXPECT_EQ(StageLayerIndices(vpp, 0)[10], 20);  // the first layer of stage 0's second chunk
  // Uneven: 24 layers on stage 0, the other 16 on stage 1.
  const Job uneven = ReferenceJob(
      {"parallel.pp=2", "parallel.dp=20", "parallel.ep=4", "parallel.first_stage_layers=24"});
  EXPECT_EQ(list(StageLayerIndices(uneven, 0)), range(0, 24));
  EXPECT_EQ(list(StageLayerIndices(uneven, 1)), range(24, 40));
}

}  // namespace
}  // namespace strata::ledger_detail_test

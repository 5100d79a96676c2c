// HFU counts the forward work recompute runs again: under megatron-core's block method (and
// torchtitan's every N-th block) only some layers re-run, as the step model already prices.
#include "strata/sim/recompute_share.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/step_test_support.h"
#include "strata/job/job_spec.h"
#include "strata/sim/mfu_job.h"

namespace strata {
namespace {

// Llama-3.1-8B on 64 H100 (DDP), 8K tokens, megatron-core; the audit's job with
// --recompute-granularity full --recompute-method block --recompute-num-layers 2.
const std::string kBlockJob =
    "model: llama-3.1-8b\n"
    "cluster: h100-8x8-ib400\n"
    "parallel: {tp: 1, pp: 1, dp: 64}\n"
    "batch: {micro_batch: 1, global_batch: 64}\n"
    "sequence: {max_tokens: 8192}\n"
    "precision: {params: bf16, grads: fp32}\n"
    "optimizer: {name: adam, master_weights: fp32, moments: fp32}\n"
    "sharding: {mode: none}\n"
    "framework: {name: megatron-core}\n"
    "recompute: {granularity: full, method: block, num_layers: 2}\n";

// Block method: the first num_layers of each virtual stage re-run their forward
// (transformer_block.py, _checkpointed_forward): 2 of 32 layers = 0.0625. At PP 2 VPP 2 a
// virtual stage holds 8 layers: 2 / 8 = 0.25. torchtitan's selective "4" on 32 layers of one
// rank: floor(32 / 4) = 8 blocks in full AC = 0.25, counted as full.
TEST(RecomputeShare, BlockMethodAndEveryNthBlock) {
  auto spec = ParseJobSpec(kBlockJob, "j.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_DOUBLE_EQ(RecomputeShareOf(*spec, 32, 1, 1).full_layer_fraction, 0.0625);
  EXPECT_DOUBLE_EQ(RecomputeShareOf(*spec, 32, 2, 2).full_layer_fraction, 0.25);
  JobSpec titan = *spec;
  titan.recompute.granularity = RecomputeGranularity::kSelective;
  titan.recompute.titan.every_n_layers = 4;
  const RecomputeShare t = RecomputeShareOf(titan, 32, 1, 1);
  EXPECT_EQ(t.granularity, RecomputeGranularity::kFull);
  EXPECT_DOUBLE_EQ(t.full_layer_fraction, 0.25);
  EXPECT_EQ(t.hfu_kind(), Recompute::kFull);
}

// HFU = the model FLOP (megatron 51,470,401,536 FLOP/token at S = 8,192) plus f of the decoder
// layers' forward: megatron / 3 - 2 h V (the output layer, 2 x 4096 x 128,256 = 1,050,673,152,
// is not re-run) = 16,106,127,360; f = 0.0625: + 1,006,632,960 = 52,477,034,496. At the audit's
// 400,000 tokens/s on 64 GPUs (6,250 a GPU) MFU is 6,250 x 51.47e9 / 989.5e12 = 32.51% and HFU
// 6,250 x 52.477e9 / 989.5e12 = 33.15%. Before, HFU counted every layer's forward again (x 4/3):
// 43.35% for `mfu`, and 54.46% beside the step's MFU 40.85%, whose own recompute row priced 2/32
// of the forward.
TEST(RecomputeShare, HfuCountsOnlyTheLayersRecomputed) {
  auto spec = ParseJobSpec(kBlockJob + "throughput: {tokens_per_s: 400000}\n", "j.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  auto report = ComputeJobMfu(*job);
  ASSERT_TRUE(report.ok()) << report.error().Format();
  ASSERT_FALSE(report->points.empty());
  for (const MfuPoint& point : report->points) {
    double megatron = 0;
    for (const MfuRow& row : point.rows)
      if (row.convention == FlopConvention::kMegatron) megatron = row.training_per_token.count();
    EXPECT_NEAR(point.hardware_per_token.count(),
                megatron + 0.0625 * (megatron / 3 - 1'050'673'152.0), 1e3);
  }
  EXPECT_NEAR(report->points.front().hardware_per_token.count(), 52'477'034'496.0, 1e3);
  EXPECT_NEAR(report->points.front().hfu, 0.33147, 0.00001);

  const auto step = testing::EvaluateJobText(kBlockJob);
  ASSERT_TRUE(step.has_value());
  EXPECT_NEAR(step->hfu / step->mfu, 52'477'034'496.0 / 51'470'401'536.0, 1e-9);
}

}  // namespace
}  // namespace strata

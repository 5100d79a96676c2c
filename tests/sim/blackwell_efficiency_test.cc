// The Blackwell parts nobody has run mamf-finder on (GB200, B300, GB300) take the measured part
// of their architecture, B200, at their own power limit (data/kernel_efficiency.yaml, gemm and
// sustained_clock). Before, they took the Hopper default (0.878, no power penalty): GB200, the
// B200's die at 1,200 W, was priced 34% faster than B200 on the same job.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/step_test_support.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/sim/step_constants.h"

namespace strata {
namespace {

// B200's two measured figures (stas00/ml-engineering, mamf-finder, five runs): 1,693.5 TFLOP/s
// in bursts and 1,424.5 sustained at its 1,000 W, of its 2,250 TFLOP/s datasheet peak. A part of
// the same architecture at peak P_peak and power P: its burst rate scales with its datasheet peak
// (the boost clock), its sustained rate with the power law (P / 1,000 W)^e, so
//   sustained factor = 1424.5 x (P / 1000)^e / (1693.5 x P_peak / 2250)
//                    = 0.8412 x (P / 1000)^e x 2250 / P_peak.
// With e = 0.333 (power_limit.clock_exponent):
//   GB200 (1,200 W, 2,500): 0.8412 x 1.06259 x 0.9 = 0.8044
//   B300  (1,100 W, 2,250): 0.8412 x 1.03225       = 0.8683
//   GB300 (1,400 W, 2,500): 0.8412 x 1.11852 x 0.9 = 0.8468
// and the large-shape GEMM factor is B200's, 0.825 (the same fraction of each part's own peak).
TEST(BlackwellEfficiency, UnmeasuredPartsTakeB200sFiguresAtTheirPower) {
  auto file = LoadKernelEfficiency();
  ASSERT_TRUE(file.ok()) << file.error().Format();
  const KernelEfficiency& b200 = file->For("B200");
  EXPECT_NEAR(b200.gemm_large, 0.825, 1e-12);
  EXPECT_NEAR(b200.sustained_clock, 0.84, 1e-12);
  const double b200_sustained_of_burst = 1424.5 / 1693.5;
  struct Case {
    const char* gpu;
    double sustained_clock;
  };
  for (const Case& c : {Case{"GB200", 0.8044}, Case{"B300", 0.8683}, Case{"GB300", 0.8468}}) {
    auto gpu = FindGpu(c.gpu);
    ASSERT_TRUE(gpu.ok()) << gpu.error().Format();
    const double derived = b200_sustained_of_burst *
                           std::pow(gpu->tdp_watts / 1000.0, file->power_clock_exponent) * 2250e12 /
                           gpu->bf16_dense.flop_per_s();
    EXPECT_NEAR(derived, c.sustained_clock, 5e-4) << c.gpu;  // the hand figures above
    EXPECT_NEAR(file->For(c.gpu).sustained_clock, derived, 1e-3) << c.gpu;
    EXPECT_NEAR(file->For(c.gpu).gemm_large, b200.gemm_large, 1e-12) << c.gpu;
  }
}

double StepOn(const std::string& gpu) {
  const auto r = testing::EvaluateJobText(
      "model: llama-3.1-8b\ncluster: {file: gb200-nvl72, gpu: " + gpu +
      ", gpus_per_node: 8, nodes: 1}\nparallel: {tp: 1}\n"
      "batch: {micro_batch: 1, global_batch: 64}\nsequence: {max_tokens: 8192}\n");
  return r ? r->step.s() : 0;
}

// The same job on the same fabric: the parts differ only in their tensor-core rate (HBM 8 TB/s
// on all four). At most the tensor-core ratio apart:
//   GB200 / B200: 2500 x 0.825 x 0.805 / (2250 x 0.825 x 0.84) = 1.065
//   B300 / B200:  2250 x 0.868 / (2250 x 0.84)                 = 1.033
// Before, GB200 came out 1.34x and B300 1.22x faster than B200.
TEST(BlackwellEfficiency, SameDieAtMorePowerIsOnlyAsFastAsItsClockAllows) {
  const double b200 = StepOn("B200");
  const double gb200 = StepOn("GB200");
  const double b300 = StepOn("B300");
  EXPECT_GE(b200 / gb200, 1.0);
  EXPECT_LE(b200 / gb200, 1.066);
  EXPECT_GE(b200 / b300, 1.0);
  EXPECT_LE(b200 / b300, 1.034);
}

}  // namespace
}  // namespace strata

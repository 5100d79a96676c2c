// The routed experts' grouped GEMM is priced at the dense GEMM shape rule of each expert's tokens,
// with no discount for the grouping: DeepGEMM's published tables put its contiguous grouped GEMM at
// 0.988-1.072 of its dense GEMM of the same per-group shape (data/kernel_efficiency.yaml,
// grouped_gemm). Before, an assumed 0.90 multiplied every expert GEMM.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/job/placement.h"
#include "strata/sim/step_constants.h"
#include "strata/sim/step_model.h"

namespace strata {
namespace {

const GemmTerm* ExpertTerm(const std::vector<GemmTerm>& gemms) {
  for (const GemmTerm& g : gemms)
    if (g.kind == GemmKind::kExpert) return &g;
  return nullptr;
}

TEST(MoeExperts, GroupedGemmFactorLiesWithinThePublishedRatios) {
  // DeepGEMM@a6d97a1 README (H800, FP8), grouped contiguous GEMM against its normal GEMM of the
  // same N and K, TFLOP/s as published, and DeepGEMM@55ab91f's later table for both group counts:
  //   4 x 8192 x 4096 x 7168: 1297 / 1304;  4 x 8192 x 7168 x 2048: 1099 / 1025;
  //   8 x 4096 x 4096 x 7168: 1288 / 1304;  8 x 4096 x 7168 x 2048: 1093 / 1025;
  //   @55ab91f: 1346 / 1265 and 1214 / 1168.
  // No published ratio puts the grouping below 0.988 of the dense kernel, and a factor above 1
  // would price a grouped GEMM faster than the dense shape it is built from, which none of the
  // ratios' sources claim for the cuBLAS path megatron-core runs. The earlier assumed 0.90 lies
  // outside [lowest ratio, 1] and fails here.
  const std::vector<double> ratios = {1297.0 / 1304, 1099.0 / 1025, 1288.0 / 1304,
                                      1093.0 / 1025, 1346.0 / 1265, 1214.0 / 1168};
  double lowest = ratios.front();
  for (double r : ratios) lowest = std::min(lowest, r);
  EXPECT_NEAR(lowest, 0.988, 5e-4);
  auto file = LoadKernelEfficiency();
  ASSERT_TRUE(file.ok()) << file.error().Format();
  EXPECT_GE(file->defaults.grouped_gemm_factor, lowest);
  EXPECT_LE(file->defaults.grouped_gemm_factor, 1.0);
}

TEST(MoeExperts, ReferenceJobExpertGemmAtTheDenseShapeRule) {
  // The reference job: Qwen3.6-35B-A3B (hidden 2048, 256 experts of width 512, top 8) on H20s,
  // TP1 EP8, one micro batch of the 29,000-token mean. Each local expert receives
  // 29,000 x 8 (top-k) x 8 (EP) / 256 = 7,250 tokens; the expert GEMM is read at
  // m 7,250, n 512, k 2,048. The H20 has no measured GEMM figure (default 0.878, half_dim 253)
  // and no sustained-clock penalty (1.0):
  //   0.878 x 7250/7503 x 512/765 x 2048/2301 = 0.878 x 0.96628 x 0.66928 x 0.89005 = 0.50538,
  // where the assumed grouping factor of 0.90 gave 0.45485.
  const auto ref = testing::LoadReferenceStep();
  const StepLayout& layout = ref.setup.layout;
  auto groups = PlaceGroups(layout.layout, ref.setup.job.cluster.gpus_per_node);
  ASSERT_TRUE(groups.ok()) << groups.error().Format();
  auto r = EvaluateStepOn(ref.setup.tables, layout, *ref.comm, *groups, Detail::kExplained);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const GemmTerm* expert = ExpertTerm(r->gemms);
  ASSERT_NE(expert, nullptr);
  EXPECT_NEAR(expert->m, 7250, 1e-6);
  EXPECT_NEAR(expert->n, 512, 1e-9);
  EXPECT_NEAR(expert->k, 2048, 1e-9);
  EXPECT_NEAR(expert->efficiency, 0.50538, 5e-5);
  // The same number as the dense rule at that shape: nothing is charged for the grouping.
  EXPECT_DOUBLE_EQ(expert->efficiency,
                   GemmEfficiency(ref.setup.tables.efficiency, expert->m, expert->n, expert->k));
}

// DeepSeek's own training trace (../shared/reference/traces/deepseek-v3-train-ep64-h800, its
// SOURCE.md): 4 MoE layers of DeepSeek-V3 (hidden 7168, expert width 2048, 256 experts, top 8)
// at EP64 on H800s, 4,096-token micro batches and routing balanced for the profile. Each rank
// holds 4 experts and receives 4,096 x 8 = 32,768 routed rows, 8,192 an expert. The 16
// m_grouped_fp8 GEMMs (SOURCE.md: 22,926 us in sum) are, per layer, fc1 (N 4096 = 2 x 2048,
// K 7168) and fc2 (N 7168, K 2048) forward and their data gradients (the same two shapes, N
// and K swapped, which the rule does not tell apart): 4 x 2 x (1.9241e12 + 0.9621e12) FLOP.
// They ran as persistent kernels on a grid of 112 blocks: DeepEP's kernels hold the other 20
// of the H800's 132 SMs throughout. Priced by the rule at FP8 (1,979 TFLOP/s x fp8_gemm 0.90),
// with the H800's 0.878 and sustained clock 0.88, on 112/132 of the GPU:
//   rate = 1979e12 x 0.90 x 0.878 x 0.88 x 112/132 = 1.1676e15 FLOP/s
//   fc1: f(8192) f(4096) f(7168) = 0.97004 x 0.94182 x 0.96591 = 0.88246 -> 1.8674 ms
//   fc2: f(8192) f(7168) f(2048) = 0.97004 x 0.96591 x 0.89005 = 0.83395 -> 0.98800 ms
//   8 x (1.8674 + 0.98800) = 22.843 ms priced against 22.926 ms measured: 1.004.
// With the assumed 0.90 grouping factor the price was 25.381 ms (measured / priced 0.903).
TEST(MoeExperts, DeepSeekTraceGroupedGemmsRunAtTheirPrice) {
  auto file = LoadKernelEfficiency();
  ASSERT_TRUE(file.ok()) << file.error().Format();
  ASSERT_TRUE(file->per_gpu.count("H800"));
  const KernelEfficiency& e = file->per_gpu.at("H800");
  auto gpu = FindGpu("H800");
  ASSERT_TRUE(gpu.ok()) << gpu.error().Format();
  const double rate = gpu->fp8_dense.flop_per_s() * e.fp8_gemm * 112.0 / 132.0;
  const double rows = 4096.0 * 8;
  const double per_expert = rows / 4;
  auto time = [&](double n, double k) {
    const double flop = 2 * rows * n * k;
    return flop / (rate * e.grouped_gemm_factor * GemmEfficiency(e, per_expert, n, k));
  };
  const double priced = 4 * 2 * (time(4096, 7168) + time(7168, 2048));
  const double measured = 22926e-6;  // SOURCE.md: the m_grouped kernels' sum
  EXPECT_NEAR(priced, 22.843e-3, 0.01e-3);
  EXPECT_NEAR(measured / priced, 1.004, 0.002);
}

}  // namespace
}  // namespace strata

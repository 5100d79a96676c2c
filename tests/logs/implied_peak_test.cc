// The peak a framework divides by, read back from its printed TFLOP/s and MFU, and whether the
// device its memory share implies is one of the GPUs that peak belongs to.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyze_text.h"
#include "strata/core/file_io.h"
#include "strata/hw/gpu_catalog.h"
#include "strata/logs/log_mfu.h"

namespace strata::implied_peak_test {
namespace {

std::vector<GpuSpec> Catalog() {
  auto catalog = LoadGpuCatalog(DataDir() + "/gpus.yaml");
  EXPECT_TRUE(catalog.ok());
  return catalog.ok() ? *catalog : std::vector<GpuSpec>{};
}

// REAL, pytorch/torchtitan PR #3393 (tests/golden/logs/torchtitan-3393-rank-prefix, lines 1-4).
// The run's header (tests/golden/logs/torchtitan-3393-header-debugmodel, lines 1-3) says "CUDA
// capacity: Tesla T4 with 14.56GiB memory" and "Peak flops undefined for: Tesla T4, fallback
// to A100": torchtitan divides by 312 TFLOP/s for a device it does not know
// (pytorch/torchtitan@b5bcd76c torchtitan/tools/utils.py:258-259).
constexpr std::string_view kTitan3393 =
    "[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  "
    "grad_norm:  0.8319  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%\n"
    "[rank0]:[titan] 2026-05-18 16:04:47,456 - root - INFO - step: 15  loss:  3.10680  "
    "grad_norm:  0.8587  memory:  9.46GiB(64.99%)  tps: 7,334  tflops: 0.53  mfu: 0.17%\n"
    "[rank0]:[titan] 2026-05-18 16:04:48,577 - root - INFO - step: 16  loss:  3.05047  "
    "grad_norm:  0.5443  memory:  9.46GiB(64.99%)  tps: 7,313  tflops: 0.52  mfu: 0.17%\n"
    "[rank0]:[titan] 2026-05-18 16:04:49,702 - root - INFO - step: 17  loss:  3.14459  "
    "grad_norm:  0.5303  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%\n";

// memory: 9.46GiB(64.99%) is max reserved over the device's total_memory (torchtitan@b5bcd76c
// torchtitan/components/metrics.py:58-59): 9.46 / 0.6499 = 14.556 GiB, between
// 9.455 / 0.64995 = 14.547 and 9.465 / 0.64985 = 14.565 as both are rounded to 2 decimals: the
// T4's 14.56 GiB of the header. The implied peak 0.52 / 0.17% = 306 TFLOP/s is the A100's /
// A800's 312 (data/gpus.yaml: 40 GB and 80 GB, 37.25 and 74.51 GiB), and 14.56 GiB is neither,
// even 1.15x apart (16.7 GiB). Before, the line named the A100's peak and stopped there.
TEST(ImpliedPeak, TorchtitanMemoryShareShowsAFallbackPeak) {
  const LogSummary s = testing::AnalyzeText(kTitan3393);
  ASSERT_EQ(s.ranks.size(), 1u);
  const RankSummary& r = s.ranks[0];
  ASSERT_TRUE(r.device_gib_min && r.device_gib_max);
  EXPECT_NEAR(*r.device_gib_min, 9.455 / 0.64995, 1e-9);
  EXPECT_NEAR(*r.device_gib_max, 9.465 / 0.64985, 1e-9);
  const auto text = DescribeImpliedPeak(r, Catalog());
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("the dense bf16 peak of the A100 40GB / A100 80GB / A800"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("gives a 14.56 GiB device, which none of them is (40 GB / 80 GB / 80 GB"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("the printed MFU is against torchtitan's fallback peak for a device it "
                       "does not know, not the device's"),
            std::string::npos)
      << *text;
}

// SYNTH: the same lines on a device of an A100 80GB's size: 71.25 / 0.90 = 79.17 GiB = 85.0e9
// bytes, 1.06x the catalog's 80 GB, within 1.15x: the peak is the device's, nothing more is said.
TEST(ImpliedPeak, MemoryShareOfTheNamedSizeSaysNoMore) {
  std::string log(kTitan3393);
  for (size_t at = log.find("9.46GiB(64.99%)"); at != std::string::npos;
       at = log.find("9.46GiB(64.99%)", at)) {
    log.replace(at, 15, "71.25GiB(90.00%)");
  }
  const LogSummary s = testing::AnalyzeText(log);
  ASSERT_EQ(s.ranks.size(), 1u);
  const auto text = DescribeImpliedPeak(s.ranks[0], Catalog());
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("the dense bf16 peak of the A100 40GB / A100 80GB / A800"),
            std::string::npos);
  EXPECT_EQ(text->find("fallback"), std::string::npos) << *text;
}

// REAL, pytorch/torchtitan PR #1625 (tests/golden/logs/torchtitan-2389-ranks-without-prefix has
// the same device): "CUDA capacity: NVIDIA H100 with 94.99GiB memory", a size data/gpus.yaml
// has no H100 of (80 GB). torchtitan divides by 989 TFLOP/s for any name with "H100" in it
// (torchtitan@b5bcd76c torchtitan/tools/utils.py:163-171), the device's own peak: no fallback
// is said. SYNTH step line in torchtitan's format: 10.00 / 0.1053 = 94.97 GiB, 335 / 33.87%.
TEST(ImpliedPeak, AnH100OfAnotherSizeIsNoFallback) {
  const LogSummary s = testing::AnalyzeText(
      "[titan] 2025-08-22 07:53:10,000 - root - INFO - step: 10  loss:  5.8383  memory: "
      "10.00GiB(10.53%)  tps: 5,862  tflops: 335.00  mfu: 33.87%\n"
      "[titan] 2025-08-22 07:53:20,000 - root - INFO - step: 11  loss:  5.8383  memory: "
      "10.00GiB(10.53%)  tps: 5,862  tflops: 335.00  mfu: 33.87%\n"
      "[titan] 2025-08-22 07:53:30,000 - root - INFO - step: 12  loss:  5.8383  memory: "
      "10.00GiB(10.53%)  tps: 5,862  tflops: 335.00  mfu: 33.87%\n"
      "[titan] 2025-08-22 07:53:40,000 - root - INFO - step: 13  loss:  5.8383  memory: "
      "10.00GiB(10.53%)  tps: 5,862  tflops: 335.00  mfu: 33.87%\n");
  ASSERT_EQ(s.ranks.size(), 1u);
  const auto text = DescribeImpliedPeak(s.ranks[0], Catalog());
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("the dense bf16 peak of the H100 SXM / H800 / H200"), std::string::npos)
      << *text;
  EXPECT_EQ(text->find("fallback"), std::string::npos) << *text;
}

}  // namespace
}  // namespace strata::implied_peak_test

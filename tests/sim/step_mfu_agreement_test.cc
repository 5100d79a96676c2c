// `step` and `mfu` print the same megatron-core MFU and HFU for one job at one throughput. The
// reference job gives only the mean (29,000) and max (49,152) lengths: `step` prices attention
// at E[S^2]/E[S] of the lengths it ASSUMES (uniform on [8,848, 49,152], 16 bins: 33,650
// tokens), while `mfu` printed only the two bounds (18.94% at the mean, 22.7% at the max,
// against step's 19.81%), so no row of `mfu` reproduced `step`. Now `mfu` prints the step's
// length between them, and both count HFU with one formula (HardwareFlopsPerToken).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/sim/mfu_job.h"
#include "strata/sim/step_model.h"

namespace strata {
namespace {

TEST(StepMfuAgreement, MfuAtTheStepsThroughputReproducesTheStep) {
  JobRequest request;
  auto job = ResolveJob(request);  // the reference job
  ASSERT_TRUE(job.ok()) << job.error().Format();
  const std::optional<StepResult> step = testing::EvaluateJobStep(*job);
  ASSERT_TRUE(step.has_value());
  // `strata mfu --tokens-per-s` with the step's own throughput.
  Throughput t;
  t.tokens_per_s = step->tokens_per_s_per_gpu * static_cast<double>(job->world());
  job->throughput = t;
  auto report = ComputeJobMfu(*job);
  ASSERT_TRUE(report.ok()) << report.error().Format();
  ASSERT_EQ(report->points.size(), 3u);
  const MfuPoint& middle = report->points[1];
  EXPECT_NE(middle.label.find("as `step` prices"), std::string::npos) << middle.label;
  // 16 equal-probability bins on [8,848, 49,152], centres 8,848 + 40,304 (i + 0.5) / 16:
  // E[S] = 29,000, E[S^2] = 29,000^2 + 40,304^2 (1 - 1/256) / 12, E[S^2]/E[S] = 33,650.
  const double var = 40'304.0 * 40'304.0 * (1.0 - 1.0 / 256.0) / 12.0;
  EXPECT_NEAR(middle.attention_tokens, (29'000.0 * 29'000.0 + var) / 29'000.0, 1e-6);
  double mfu = 0;
  for (const MfuRow& row : middle.rows)
    if (row.convention == FlopConvention::kMegatron) mfu = row.mfu;
  EXPECT_NEAR(mfu, step->mfu, 1e-12);
  EXPECT_NEAR(middle.hfu, step->hfu, 1e-12);
}

}  // namespace
}  // namespace strata

// Keeps the "Single-GPU runs measured here" table of docs/step-validation.md current: the
// predicted step times there are what the step model says for the job files of those rows. The
// measured values (bench/device/h200_measure.py on one H200, the median of steps 3-6; raw numbers
// in tests/fixtures/device/h200-2026-11-30.json) are not asserted against: the model's error is
// reported, not tuned away.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/hw/interconnects.h"
#include "strata/job/resolved_job.h"
#include "strata/model/model_config.h"
#include "strata/model/param_count.h"
#include "strata/sim/step_job.h"
#include "support/golden.h"

namespace strata::step_h200_rows_test {
namespace {

struct Row {
  const char* id;
  const char* job;
  double predicted_s;  // the table's predicted step, rounded to 1 ms
  double measured_s;   // the table's measured step
};

TEST(StepH200Rows, DocumentedPredictionsAreCurrent) {
  const std::vector<Row> rows = {
      {"H200-01", "memory/validation/h200-01.yaml", 0.547, 0.555},
      {"H200-02", "memory/validation/h200-02.yaml", 0.428, 0.452},
      {"H200-03", "memory/validation/h200-03.yaml", 0.236, 0.252},
      {"H200-04", "memory/validation/h200-04.yaml", 0.319, 0.355},
      {"H200-05", "memory/validation/h200-05.yaml", 0.260, 0.307},
      {"H200-06", "memory/validation/h200-06.yaml", 1.029, 1.022},
  };
  auto links = LoadInterconnects();
  ASSERT_TRUE(links.ok());
  for (const Row& row : rows) {
    JobRequest request;
    request.job = testing::TestPath(row.job);
    auto job = ResolveJob(request);
    ASSERT_TRUE(job.ok()) << row.id << ": " << job.error().Format();
    auto setup = PrepareStep(*job);
    ASSERT_TRUE(setup.ok()) << row.id << ": " << setup.error().Format();
    auto comm = CollectiveModel::Create(setup->job.cluster, *links);
    ASSERT_TRUE(comm.ok()) << row.id;
    auto result = EvaluateStep(setup->tables, setup->layout, *comm);
    ASSERT_TRUE(result.ok()) << row.id << ": " << result.error().Format();
    EXPECT_NEAR(result->step.s(), row.predicted_s, 0.0006) << row.id;
    // One GPU: nothing to communicate, so every second predicted is compute or memory traffic.
    double comm_time = 0;
    for (const auto& t : result->traffic) comm_time += t.time_per_step.s();
    EXPECT_EQ(comm_time, 0.0) << row.id;
  }
}

// The 16-layer cut used by H200-04/05: torch counted 4,540,469,248 parameters
// (sum(p.numel()) of the HF model built from this very config, recorded in the fixture's
// "params"). By hand: embedding and head 2 x 128,256 x 4,096 = 1,050,673,152; per layer
// q 4096^2 + k, v 2 x 4096 x 1024 + o 4096^2 + MLP 3 x 4096 x 14336 + 2 norms x 4096
// = 218,112,000; 16 layers = 3,489,792,000; final norm 4,096. Sum 4,540,469,248.
TEST(StepH200Rows, TheSixteenLayerCutHasTorchsParameterCount) {
  auto config = LoadModelConfig(testing::TestPath("memory/validation/llama-3.1-8b-16l.json"));
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(CountParams(*config).text_total(), 4'540'469'248);
}

}  // namespace
}  // namespace strata::step_h200_rows_test

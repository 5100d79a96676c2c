// A GPU written as a variant of a catalog part keeps that part's calibration, and its power
// limit sets the tensor cores' clock (data/kernel_efficiency.yaml, power_limit).
#include <gtest/gtest.h>

#include <string>

#include "strata/hw/interconnects.h"
#include "strata/job/job_spec.h"
#include "strata/sim/step_job.h"

namespace strata::step_gpu_variant_test {
namespace {

struct Predicted {
  double sustained_clock = 0;
  double fp8_gemm = 0;
  double step_s = 0;
};

// The reference model on one node of 8 GPUs (EP8, 4,096-token samples), on `gpu`.
Predicted PredictOn(const std::string& gpu) {
  auto spec = ParseJobSpec("model: qwen3.6-35b-a3b\ncluster:\n  gpu: " + gpu +
                               "\n  gpus_per_node: 8\n  nodes: 1\nparallel: {tp: 1, ep: 8}\n"
                               "batch: {micro_batch: 1, global_batch: 16}\n"
                               "sequence: {max_tokens: 4096}\n",
                           "j.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  auto setup = PrepareStep(*job);
  EXPECT_TRUE(setup.ok()) << setup.error().Format();
  auto links = LoadInterconnects();
  EXPECT_TRUE(links.ok());
  auto comm = CollectiveModel::Create(setup->job.cluster, *links);
  EXPECT_TRUE(comm.ok());
  auto r = EvaluateStep(setup->tables, setup->layout, *comm);
  EXPECT_TRUE(r.ok()) << r.error().Format();
  return {setup->tables.efficiency.sustained_clock, setup->tables.efficiency.fp8_gemm, r->step.s()};
}

// H100 SXM's calibration (data/kernel_efficiency.yaml): sustained clock 0.88 at its 700 W,
// FP8 GEMM 0.90. Clock ~ power^0.333, capped at 1:
//   350 W:   0.88 x 0.5^0.333         = 0.69862
//   1000 W:  0.88 x (1000/700)^0.333  = 0.99098
//   H20 (1.0 at 400 W) at 300 W: 0.75^0.333 = 0.90865
TEST(StepGpuVariant, VariantKeepsItsBasePartsFactorsAtItsPower) {
  struct Case {
    const char* gpu;
    double sustained_clock;
    double fp8_gemm;
  };
  const Case cases[] = {
      {"H100 SXM", 0.88, 0.90},
      {"{base: H100 SXM}", 0.88, 0.90},
      {"{base: H100 SXM, memory: 96GB}", 0.88, 0.90},
      {"{base: H100 SXM, power_w: 700}", 0.88, 0.90},
      {"{base: H100 SXM, power_w: 350}", 0.69862, 0.90},
      {"{base: H100 SXM, power_w: 1000}", 0.99098, 0.90},
      {"{base: H20, power_w: 300}", 0.90865, 1.0},
  };
  for (const Case& c : cases) {
    const Predicted p = PredictOn(c.gpu);
    EXPECT_NEAR(p.sustained_clock, c.sustained_clock, 1e-5) << c.gpu;
    EXPECT_NEAR(p.fp8_gemm, c.fp8_gemm, 1e-12) << c.gpu;
  }
}

// The variant without changes predicts the catalog part's step; a capped part is slower, a
// part given more power faster (up to the burst clock).
TEST(StepGpuVariant, PowerLimitMovesTheStep) {
  const double catalog = PredictOn("H100 SXM").step_s;
  EXPECT_NEAR(PredictOn("{base: H100 SXM}").step_s / catalog, 1.0, 1e-12);
  const double capped = PredictOn("{base: H100 SXM, power_w: 300}").step_s;
  const double raised = PredictOn("{base: H100 SXM, power_w: 1000}").step_s;
  EXPECT_GT(capped, catalog * 1.05);
  EXPECT_LT(raised, catalog);
}

}  // namespace
}  // namespace strata::step_gpu_variant_test

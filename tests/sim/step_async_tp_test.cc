// Async TP (overlap.tp_comm) hides TP traffic behind the dense GEMMs, but no more of the step
// than the published gains (data/kernel_efficiency.yaml, async_tp: 1 - 1/1.10 = 0.091).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "strata/hw/interconnects.h"
#include "strata/job/job_spec.h"
#include "strata/sim/step_job.h"

namespace strata {
namespace {

StepResult PredictTp8(const std::string& extra) {
  auto spec = ParseJobSpec(
      "model: llama-3.1-8b\ncluster:\n  gpu: H100 SXM\n  gpus_per_node: 8\n  nodes: 1\n"
      "parallel: {tp: 8, sequence_parallel: true}\nbatch: {micro_batch: 1, global_batch: 4}\n"
      "sequence: {max_tokens: 8192}\n" +
          extra,
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
  return *r;
}

// Llama 3.1 8B at TP8 on one H100 node, 8,192-token samples, 4 micro batches: with T the TP
// traffic and C the micro batches' compute (forward + backward + recompute + skew), async TP
// hides min(T, dense GEMMs, 0.091 (C + T)); here T is above 0.091 (C + T), so the hidden part is
// 0.091 (C + T) and the step gains 1 - 1/1.10 of C + T at most, not the whole TP traffic.
TEST(StepAsyncTp, HidesNoMoreThanThePublishedGain) {
  const StepResult off = PredictTp8("");
  const StepResult on = PredictTp8("overlap: {tp_comm: true}\n");
  const double t = off[StepPart::kTp].total.s();
  const double c = (off[StepPart::kForward].total + off[StepPart::kBackward].total +
                    off[StepPart::kRecompute].total + off[StepPart::kMoeImbalance].total)
                       .value();
  ASSERT_GT(t, 0.091 * (c + t)) << "the case must be one where the cap binds";
  EXPECT_NEAR(off[StepPart::kTp].exposed.s(), t, 1e-12);
  EXPECT_NEAR(on[StepPart::kTp].exposed.s(), t - 0.091 * (c + t), 1e-9);
  EXPECT_NEAR(off.step.s() - on.step.s(), 0.091 * (c + t), 1e-9);
  EXPECT_LT((off.step.s() - on.step.s()) / off.step.s(), 0.091);
}

}  // namespace
}  // namespace strata

// Expert tensor parallelism is not free: its collectives around each expert MLP are priced on
// the bandwidth map, so EP1 ETP8 does not beat EP8 ETP1 on one node.
#include <gtest/gtest.h>

#include <string>

#include "strata/hw/interconnects.h"
#include "strata/job/job_spec.h"
#include "strata/sim/step_job.h"

namespace strata {
namespace {

StepResult PredictQwen3Moe(const std::string& parallel) {
  auto spec = ParseJobSpec(
      "model: qwen3-30b-a3b\ncluster:\n  gpu: H100 SXM\n  gpus_per_node: 8\n  nodes: 1\n"
      "parallel: " +
          parallel + "\nbatch: {micro_batch: 1, global_batch: 16}\nsequence: {max_tokens: 4096}\n",
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

// Per rank and MoE layer, EP8 moves one all-to-all of its tokens' top-8 copies each way
// (7/8 of the buffer leaves the rank); ETP8 all-gathers and reduce-scatters 8 ranks' copies
// (7/8 of a buffer 8 times larger each way): 8 x the bytes on the same NVLink, and its experts'
// GEMMs are 8 x narrower. ETP8 cannot be the faster layout.
TEST(StepEtp, Etp8IsNotFasterThanEp8) {
  const StepResult ep8 = PredictQwen3Moe("{tp: 1, ep: 8, etp: 1}");
  const StepResult etp8 = PredictQwen3Moe("{tp: 1, ep: 1, etp: 8}");
  EXPECT_GT(etp8[StepPart::kTp].total.s(), ep8[StepPart::kEp].total.s());
  EXPECT_GT(etp8.step.s(), ep8.step.s());
}

}  // namespace
}  // namespace strata

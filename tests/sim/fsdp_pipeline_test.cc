// FSDP2 under torch's pipeline schedules (torchtitan with PP > 1). Two faults, each failed
// before:
// - a job that did not set sharding.reshard_after_forward got true, where torchtitan's "default"
//   policy is `reshard_after_forward = not pp_enabled` (pytorch/torchtitan
//   torchtitan/models/llama3/infra/parallelize.py, apply_fsdp), so the shipped 405B job's
//   memory counted 2 gathered blocks (1.59 GB) instead of its stage's 16 (12.75 GB);
// - the step priced FSDP's gathers and reduce-scatters on every micro batch, where the pipeline
//   stage defers the gradient sync to the last micro batch and keeps the weights gathered after
//   every other backward (torch/distributed/pipelining/stage.py, backward_maybe_with_nosync).
#include <gtest/gtest.h>

#include <string>

#include "sim/step_test_support.h"
#include "strata/job/job_spec.h"
#include "strata/job/resolved_job.h"

namespace strata::fsdp_pipeline_test {
namespace {

Result<ResolvedJob> Resolve(const std::string& name, const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec(name, sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  return ResolveJob(*spec);
}

TEST(FsdpPipeline, TorchtitanKeepsWeightsGatheredUnderPipelineParallelismByDefault) {
  // The shipped job names torchtitan, FSDP2 and PP 8, and no reshard_after_forward.
  auto pp8 = Resolve("llama-3.1-405b-torchtitan-pp8-h100x512", {});
  ASSERT_TRUE(pp8.ok()) << pp8.error().Format();
  EXPECT_FALSE(pp8->spec.sharding.reshard_after_forward);
  // Given, the job's value stands.
  auto given =
      Resolve("llama-3.1-405b-torchtitan-pp8-h100x512", {"sharding.reshard_after_forward=true"});
  ASSERT_TRUE(given.ok()) << given.error().Format();
  EXPECT_TRUE(given->spec.sharding.reshard_after_forward);
  // A small torchtitan job: FSDP2's own default (reshard) without PP, torchtitan's keep-gathered
  // with it; megatron-core's ZeRO-3 keeps the reshard under PP.
  auto small = [](const std::string& framework, const std::string& mode, int64_t pp) {
    auto spec = ParseJobSpec(
        "model: llama-3.1-8b\ncluster: {file: h100-8x8-ib400, gpu: H100 SXM, "
        "gpus_per_node: 8, nodes: 1}\nparallel: {tp: 1, pp: " +
            std::to_string(pp) +
            "}\nbatch: {micro_batch: 1, global_batch: 32}\n"
            "sequence: {max_tokens: 4096}\nframework: {name: " +
            framework + "}\nsharding: {mode: " + mode + "}\n",
        "j.yaml");
    EXPECT_TRUE(spec.ok()) << spec.error().Format();
    auto job = ResolveJob(*spec);
    EXPECT_TRUE(job.ok()) << job.error().Format();
    return job.ok() && job->spec.sharding.reshard_after_forward;
  };
  EXPECT_TRUE(small("torchtitan", "fsdp2", 1));
  EXPECT_FALSE(small("torchtitan", "fsdp2", 2));
  EXPECT_TRUE(small("megatron-core", "zero3", 2));
}

const PricedTraffic* Find(const StepResult& r, CollectiveOp op) {
  for (const PricedTraffic& p : r.traffic) {
    if (p.item.group == GroupKind::kDp && p.item.op == op &&
        p.item.purpose.find("ZeRO-3/FSDP") != std::string::npos) {
      return &p;
    }
  }
  return nullptr;
}

// The shipped job: 126 layers over PP 8 = 15.75 a stage, 8 micro batches a step. Before: 2 x
// 15.75 x 8 = 252 gathers and 15.75 x 8 = 126 reduce-scatters; now one of each per layer a step
// (15.75), the weights kept gathered (reshard_after_forward false, the default above).
TEST(FsdpPipeline, GatherAndReduceScatterOnceAStep) {
  auto job = Resolve("llama-3.1-405b-torchtitan-pp8-h100x512", {});
  ASSERT_TRUE(job.ok()) << job.error().Format();
  EXPECT_EQ(job->spec.num_micro_batches(), 8);
  const auto r = testing::EvaluateJobStep(*job);
  ASSERT_TRUE(r.has_value());
  const PricedTraffic* gather = Find(*r, CollectiveOp::kAllGather);
  const PricedTraffic* reduce = Find(*r, CollectiveOp::kReduceScatter);
  ASSERT_NE(gather, nullptr);
  ASSERT_NE(reduce, nullptr);
  EXPECT_NEAR(gather->item.calls_per_step, 15.75, 1e-9);
  EXPECT_NEAR(reduce->item.calls_per_step, 15.75, 1e-9);
}

}  // namespace
}  // namespace strata::fsdp_pipeline_test

// The micro batches per step a framework's interleaved schedule takes (data/frameworks.yaml
// `pipeline:`, job/pipeline_rules.h).
//
// megatron-core's interleaved schedule (NVIDIA/Megatron-LM core_v0.16.0, 3bec9aa97,
// megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving):
//
//     if (config.microbatch_group_size_per_vp_stage > num_microbatches
//         or config.microbatch_group_size_per_vp_stage < pipeline_parallel_size):
//         msg = ('The number of contiguous micro-batches in a virtual pipeline stage'
//                f'should range in [PP={pipeline_parallel_size} , M={num_microbatches}]')
//         raise ValueError(msg)
//     ...
//     final_microbatch_group_size = num_microbatches % config.microbatch_group_size_per_vp_stage
//     if 0 < final_microbatch_group_size < pipeline_parallel_size:
//         ... raise RuntimeError(msg)
//
// with the group defaulting to PP (model_parallel_config.py: `if
// self.microbatch_group_size_per_vp_stage is None: ... = self.pipeline_model_parallel_size`):
// M must be a multiple of PP. PyTorch's ScheduleInterleaved1F1B (pytorch/pytorch@1fd7abc2f
// torch/distributed/pipelining/schedules.py, what torchtitan runs) instead sets
// number_of_rounds = max(1, n_microbatches // pp_group_size) and raises when n_microbatches is
// not a multiple of it: M < PP runs (one round). Before, these jobs were priced (audit: TP2 PP8
// VPP5 CP4 at global batch 4 predicted 0.68 s and won the plan).
#include "strata/job/pipeline_rules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/job/job_spec.h"
#include "strata/job/resolved_job.h"
#include "support/golden.h"

namespace strata::pipeline_rules_test {
namespace {

Result<ResolvedJob> Resolve(const std::string& file, const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec(testing::TestPath("job/data/" + file), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  if (!spec.ok()) return spec.error();
  return ResolveJob(*spec);
}

TEST(PipelineRules, LoopedMicroBatchCountsByHand) {
  using enum LoopedMicroBatches;
  const auto interleaved = PipelineSchedule::kInterleaved1F1B;
  // megatron-core, PP 8: M = 4 < PP (ValueError), 12 % 8 = 4 in (0, 8) (RuntimeError), 16 runs.
  EXPECT_FALSE(LoopedScheduleAccepts(kMultipleOfPp, interleaved, 8, 4));
  EXPECT_FALSE(LoopedScheduleAccepts(kMultipleOfPp, interleaved, 8, 12));
  EXPECT_TRUE(LoopedScheduleAccepts(kMultipleOfPp, interleaved, 8, 16));
  // PyTorch, PP 4: M = 2 is one round; M = 9 is 9 // 4 = 2 rounds, 9 % 2 = 1 (ValueError);
  // M = 6 is one round (6 // 4 = 1); M = 12 is 3 rounds of 4.
  EXPECT_TRUE(LoopedScheduleAccepts(kMultipleOfRounds, interleaved, 4, 2));
  EXPECT_FALSE(LoopedScheduleAccepts(kMultipleOfRounds, interleaved, 4, 9));
  EXPECT_TRUE(LoopedScheduleAccepts(kMultipleOfRounds, interleaved, 4, 6));
  EXPECT_TRUE(LoopedScheduleAccepts(kMultipleOfRounds, interleaved, 4, 12));
  // 1F1B takes any count.
  EXPECT_TRUE(LoopedScheduleAccepts(kMultipleOfPp, PipelineSchedule::k1F1B, 8, 3));
}

// Llama-3.1-70B on 64 H100, global batch 4, micro batch 1 (the audit's l70-gb4.yaml).
TEST(PipelineRules, MegatronCoreRefusesInterleavingWithFewerMicroBatchesThanPp) {
  // TP2 PP8 VPP5 CP4: DP = 64 / (2 x 8 x 4) = 1, M = 4 / (1 x 1) = 4 < PP 8.
  auto job = Resolve("l70-gb4.yaml", {"parallel.tp=2", "parallel.pp=8", "parallel.vpp=5",
                                      "parallel.cp=4", "recompute.granularity=none"});
  ASSERT_FALSE(job.ok());
  const Error& e = job.error();
  EXPECT_EQ(e.field, "parallel.vpp");
  EXPECT_NE(e.message.find("megatron-core 0.16's interleaved 1F1B (VPP 5)"), std::string::npos)
      << e.Format();
  EXPECT_NE(e.message.find("4 micro batches per step (global batch 4 / (micro batch 1 x DP 1))"),
            std::string::npos)
      << e.Format();
  EXPECT_NE(e.message.find("multiple of PP"), std::string::npos) << e.Format();
  // What would work: 1F1B, or a global batch a multiple of 1 x 1 x 8 = 8.
  EXPECT_NE(e.hint.find("parallel.vpp: 1"), std::string::npos) << e.hint;
  EXPECT_NE(e.hint.find("micro batch x DP x PP = 8"), std::string::npos) << e.hint;
  // TP4 PP4 VPP5 CP4: DP 1, M = 4 = PP: runs.
  EXPECT_TRUE(
      Resolve("l70-gb4.yaml", {"parallel.tp=4", "parallel.pp=4", "parallel.vpp=5", "parallel.cp=4"})
          .ok());
  // PP 4 at global batch 6: M = 6, 6 % 4 = 2 (megatron-core's RuntimeError).
  EXPECT_FALSE(Resolve("l70-gb4.yaml", {"parallel.tp=4", "parallel.pp=4", "parallel.vpp=5",
                                        "parallel.cp=4", "batch.global_batch=6"})
                   .ok());
  // VPP 1 at M = 4 < PP 8: 1F1B runs it.
  EXPECT_TRUE(Resolve("l70-gb4.yaml", {"parallel.tp=2", "parallel.pp=8", "parallel.cp=4"}).ok());
}

TEST(PipelineRules, TorchtitanRunsInterleavingInRounds) {
  const std::vector<std::string> titan = {"framework.name=torchtitan",
                                          "framework.version=0.2.2",
                                          "sharding.mode=fsdp2",
                                          "parallel.tp=4",
                                          "parallel.pp=4",
                                          "parallel.vpp=5",
                                          "parallel.cp=4"};
  // M = 6 < 2 PP: one round of 6, which megatron-core refuses and PyTorch runs.
  auto six = titan;
  six.emplace_back("batch.global_batch=6");
  auto job = Resolve("l70-gb4.yaml", six);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  // M = 9: 2 rounds, 9 % 2 = 1.
  auto nine = titan;
  nine.emplace_back("batch.global_batch=9");
  auto refused = Resolve("l70-gb4.yaml", nine);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("max(1, M // PP) = 2 rounds"), std::string::npos)
      << refused.error().Format();
}

}  // namespace
}  // namespace strata::pipeline_rules_test

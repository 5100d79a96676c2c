// megatron-core has no PyTorch-only pipeline schedule: megatron/core/pipeline_parallel/ at
// core_v0.16.0 (3bec9aa97) holds forward_backward_no_pipelining,
// forward_backward_pipelining_without_interleaving (1F1B) and
// forward_backward_pipelining_with_interleaving, and `git grep -i "dualpipe|zero_bubble|zbv"`
// finds nothing there (nor at core_v0.18.0); ZB-V, DualPipeV and ZB-H1 are
// torch.distributed.pipelining's ScheduleZBVZeroBubble, ScheduleDualPipeV and
// ScheduleInterleavedZeroBubble, which torchtitan runs. Before, `strata step` priced zbv on
// megatron-core 0.16 (47.03 s, exit 0).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/job/job_spec.h"
#include "strata/job/resolved_job.h"
#include "support/golden.h"

namespace strata::pipeline_schedules_test {
namespace {

Result<ResolvedJob> Resolve(const std::string& file, const std::vector<std::string>& sets) {
  auto spec = LoadJobSpec(testing::TestPath("job/data/" + file), sets);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  if (!spec.ok()) return spec.error();
  return ResolveJob(*spec);
}

TEST(PipelineSchedules, MegatronCoreHasNoPyTorchOnlySchedules) {
  // l70.yaml: TP8 on 64 H100, global batch 256; PP 4 VPP 2 gives DP 2 and M = 128.
  for (const char* schedule : {"zbv", "dualpipev"}) {
    auto job = Resolve("l70.yaml", {"parallel.pp=4", "parallel.vpp=2",
                                    std::string("parallel.pp_schedule=") + schedule});
    ASSERT_FALSE(job.ok()) << schedule;
    const Error& e = job.error();
    EXPECT_EQ(e.field, "parallel.pp_schedule");
    EXPECT_NE(e.message.find(std::string("megatron-core 0.16 has no ") + schedule),
              std::string::npos)
        << e.Format();
    EXPECT_NE(e.message.find("it runs 1f1b, interleaved_1f1b only"), std::string::npos)
        << e.Format();
  }
  auto zb = Resolve("l70.yaml", {"parallel.pp=4", "parallel.pp_schedule=zero_bubble"});
  ASSERT_FALSE(zb.ok());
  EXPECT_EQ(zb.error().field, "parallel.pp_schedule");
  // megatron-core's own schedules, named, still run.
  EXPECT_TRUE(Resolve("l70.yaml", {"parallel.pp=4", "parallel.pp_schedule=1f1b"}).ok());
  EXPECT_TRUE(Resolve("l70.yaml",
                      {"parallel.pp=4", "parallel.vpp=2", "parallel.pp_schedule=interleaved_1f1b"})
                  .ok());
  // torchtitan has them (PyTorch's ScheduleZBVZeroBubble).
  auto titan = Resolve("l70.yaml", {"parallel.pp=4", "parallel.vpp=2", "parallel.pp_schedule=zbv",
                                    "framework.name=torchtitan", "sharding.mode=fsdp2"});
  EXPECT_TRUE(titan.ok()) << titan.error().Format();
}

}  // namespace
}  // namespace strata::pipeline_schedules_test

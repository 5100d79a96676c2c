// Shared by the planner tests: a job (file or data/jobs/ name, with --set overrides) planned the
// way `strata plan` plans it, with everything the search used kept for the checks.
#ifndef STRATA_TESTS_PLAN_PLAN_TEST_SUPPORT_H_
#define STRATA_TESTS_PLAN_PLAN_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "strata/hw/interconnects.h"
#include "strata/job/resolved_job.h"
#include "strata/memory/memory_constants.h"
#include "strata/plan/planner.h"
#include "strata/sim/step_job.h"
#include "support/golden.h"

namespace strata::testing {

struct Planned {
  StepSetup setup;
  std::optional<CollectiveModel> comm;
  MemoryConstants memory;
  plan::PlanResult result;
  bool ok = false;
};

/// Resolves the job (on `nodes` nodes of its cluster when not 0, as `strata plan --nodes`), builds
/// its step tables and runs the planner; fails the test on any error.
inline Planned PlanJob(const std::string& job_name, const std::vector<std::string>& sets,
                       const plan::PlanOptions& options = {}, int64_t nodes = 0) {
  Planned out;
  auto spec = LoadJobSpec(job_name, sets);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().Format());
  if (!spec.ok()) return out;
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
  if (!job.ok()) return out;
  if (nodes > 0) {
    const Status resized = plan::ResizeJob(*job, nodes);
    EXPECT_TRUE(resized.ok()) << (resized.ok() ? "" : resized.error().Format());
    if (!resized.ok()) return out;
  }
  auto setup = PrepareStep(*job);
  EXPECT_TRUE(setup.ok()) << (setup.ok() ? "" : setup.error().Format());
  if (!setup.ok()) return out;
  out.setup = *setup;
  auto links = LoadInterconnects();
  EXPECT_TRUE(links.ok());
  if (!links.ok()) return out;
  auto comm = CollectiveModel::Create(out.setup.job.cluster, *links);
  EXPECT_TRUE(comm.ok());
  if (!comm.ok()) return out;
  out.comm.emplace(*comm);
  auto memory = LoadMemoryConstants();
  EXPECT_TRUE(memory.ok());
  if (!memory.ok()) return out;
  out.memory = *memory;
  auto plan = plan::PlanLayouts(out.setup, *out.comm, out.memory, options);
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().Format());
  if (!plan.ok()) return out;
  out.result = *plan;
  out.ok = true;
  return out;
}

/// The options of a published-layout query: the dimensions given (0 leaves one free) fixed,
/// micro batch 1, no recompute, the top 3 kept.
inline plan::PlanOptions FixedLayoutOptions(int64_t tp, int64_t pp, int64_t cp, int64_t vpp = 0,
                                            int64_t ep = 0) {
  plan::PlanOptions options;
  options.top_k = 3;
  options.space.fixed.tp = tp;
  options.space.fixed.pp = pp;
  options.space.fixed.cp = cp;
  options.space.fixed.vpp = vpp;
  options.space.fixed.ep = ep;
  options.space.fixed_micro_batch = 1;
  options.space.recompute = {RecomputeGranularity::kNone};
  return options;
}

/// Megatron-Bridge's H100 FP8 Llama-3.1-405B job on 1,024 GPUs (its header cites the row).
inline std::string Llama405bH100Fp8Job() {
  return TestPath("fixtures/plan/mb-405b-h100x1024.yaml");
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_PLAN_PLAN_TEST_SUPPORT_H_

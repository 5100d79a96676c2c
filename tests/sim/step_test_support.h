// The reference job's step-model inputs, built the way `strata step` builds them, for the sim
// tests.
#ifndef STRATA_TESTS_SIM_STEP_TEST_SUPPORT_H_
#define STRATA_TESTS_SIM_STEP_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "strata/hw/interconnects.h"
#include "strata/job/job_spec.h"
#include "strata/sim/step_job.h"

namespace strata::testing {

struct ReferenceStep {
  StepSetup setup;
  std::optional<CollectiveModel> comm;
};

inline ReferenceStep LoadReferenceStep(const std::vector<std::string>& sets = {}) {
  ReferenceStep out;
  JobRequest request;
  request.overrides = sets;
  auto job = ResolveJob(request);
  EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
  auto setup = PrepareStep(*job);
  EXPECT_TRUE(setup.ok()) << (setup.ok() ? "" : setup.error().Format());
  out.setup = *setup;
  auto links = LoadInterconnects();
  EXPECT_TRUE(links.ok());
  auto comm = CollectiveModel::Create(out.setup.job.cluster, *links);
  EXPECT_TRUE(comm.ok());
  out.comm.emplace(*comm);
  return out;
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_SIM_STEP_TEST_SUPPORT_H_

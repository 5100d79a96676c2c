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

/// The step of a resolved job, built and evaluated as `strata step` does; fails the test on any
/// error (then the result is empty).
inline std::optional<StepResult> EvaluateJobStep(const ResolvedJob& job) {
  auto setup = PrepareStep(job);
  EXPECT_TRUE(setup.ok()) << (setup.ok() ? "" : setup.error().Format());
  if (!setup.ok()) return std::nullopt;
  auto links = LoadInterconnects();
  EXPECT_TRUE(links.ok());
  if (!links.ok()) return std::nullopt;
  auto comm = CollectiveModel::Create(setup->job.cluster, *links);
  EXPECT_TRUE(comm.ok());
  if (!comm.ok()) return std::nullopt;
  auto r = EvaluateStep(setup->tables, setup->layout, *comm);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().Format());
  if (!r.ok()) return std::nullopt;
  return *r;
}

/// The same for a job file's text (`file` names it in errors).
inline std::optional<StepResult> EvaluateJobText(const std::string& text,
                                                 const std::string& file = "j.yaml") {
  auto spec = ParseJobSpec(text, file);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().Format());
  if (!spec.ok()) return std::nullopt;
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
  if (!job.ok()) return std::nullopt;
  return EvaluateJobStep(*job);
}

// Llama-3.1-8B (32 layers, one kind) on 8 H100s, TP 1, PP 4, DP 2, megatron-core's
// first/last stage counts 5 and 11: the middle ranks hold (32 - 16) / 2 = 8 each.
inline constexpr const char* kLlama8Pp4Uneven = R"(model: llama-3.1-8b
cluster: {file: h100-8x8-ib400, gpu: H100 SXM, gpus_per_node: 8, nodes: 1}
parallel: {tp: 1, pp: 4, pp_schedule: 1f1b, first_stage_layers: 5, last_stage_layers: 11}
batch: {micro_batch: 1, global_batch: 16}
sequence: {max_tokens: 4096}
precision: {params: bf16, grads: fp32}
)";

/// A job file's step with the `--set` overrides `sets`, and the setup it was built from.
struct JobFileStep {
  StepSetup setup;
  StepResult result;
};

inline JobFileStep EvaluateJobFile(const std::string& path,
                                   const std::vector<std::string>& sets = {}) {
  auto spec = LoadJobSpec(path, sets);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().Format());
  if (!spec.ok()) return {};
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
  if (!job.ok()) return {};
  auto setup = PrepareStep(*job);
  EXPECT_TRUE(setup.ok()) << (setup.ok() ? "" : setup.error().Format());
  if (!setup.ok()) return {};
  const std::optional<StepResult> r = EvaluateJobStep(*job);
  EXPECT_TRUE(r.has_value());
  return {*setup, r.value_or(StepResult{})};
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_SIM_STEP_TEST_SUPPORT_H_

// A job resolved from YAML written in the test, for the checkpoint tests.
#ifndef STRATA_TESTS_PREFLIGHT_INLINE_JOB_H_
#define STRATA_TESTS_PREFLIGHT_INLINE_JOB_H_

#include <gtest/gtest.h>

#include <string>

#include "strata/job/job_spec.h"
#include "strata/job/resolved_job.h"

namespace strata::testing {

/// Parses and resolves `yaml` (named inline.yaml in errors); fails the test on an error.
inline Job InlineJob(const std::string& yaml) {
  auto spec = ParseJobSpec(yaml, "inline.yaml", {});
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  return *job;
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_PREFLIGHT_INLINE_JOB_H_

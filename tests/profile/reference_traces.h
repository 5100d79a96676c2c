// Shared by the tests that read the public profiler traces of ../shared/reference/traces/
// (beside the checkout, as CI has it): the traces profiled as `strata profile` profiles them.
#ifndef STRATA_TESTS_PROFILE_REFERENCE_TRACES_H_
#define STRATA_TESTS_PROFILE_REFERENCE_TRACES_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "strata/profile/profile.h"
#include "support/golden.h"

namespace strata::profile::testing {

/// Files or folders under ../shared/reference/traces/, each given relative to it; fails the test
/// on any error and returns an empty report then.
inline ProfileReport ProfileReferenceTraces(const std::vector<std::string>& relative) {
  std::vector<std::string> paths;
  for (const std::string& r : relative) {
    paths.push_back(strata::testing::TestPath("../../shared/reference/traces/" + r));
  }
  auto files = ExpandTracePaths(paths);
  EXPECT_TRUE(files.ok()) << files.error().Format();
  if (!files.ok()) return {};
  auto rules = KernelClassifier::Load();
  EXPECT_TRUE(rules.ok()) << rules.error().Format();
  if (!rules.ok()) return {};
  auto report = ProfileTraces(*files, *rules);
  EXPECT_TRUE(report.ok()) << report.error().Format();
  return report.ok() ? std::move(report).value() : ProfileReport{};
}

}  // namespace strata::profile::testing

#endif  // STRATA_TESTS_PROFILE_REFERENCE_TRACES_H_

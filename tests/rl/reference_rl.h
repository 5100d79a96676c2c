// The reference RL job (data/jobs/qwen3.6-35b-a3b-grpo-h20x40.yaml) evaluated once per test
// binary, for the RL tests that compare against its figures.
#ifndef STRATA_TESTS_RL_REFERENCE_RL_H_
#define STRATA_TESTS_RL_REFERENCE_RL_H_

#include <gtest/gtest.h>

#include "strata/eval/evaluation.h"
#include "strata/rl/rl_job.h"
#include "strata/rl/rl_step.h"

namespace strata::testing {

/// The reference RL job's evaluation; an empty one (and a test failure) when it does not load.
inline const RlEvaluation& ReferenceRl() {
  static const RlEvaluation e = [] {
    auto spec = LoadRlSpec(kReferenceRlJobName);
    EXPECT_TRUE(spec.ok());
    if (!spec.ok()) return RlEvaluation{};
    auto eval = EvaluateRl(*Workspace::Load(), *spec);
    EXPECT_TRUE(eval.ok()) << eval.error().Format();
    return eval.ok() ? *eval : RlEvaluation{};
  }();
  return e;
}

}  // namespace strata::testing

#endif  // STRATA_TESTS_RL_REFERENCE_RL_H_

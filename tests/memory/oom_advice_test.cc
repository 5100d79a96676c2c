#include "strata/memory/oom_advice.h"

#include <gtest/gtest.h>

#include "memory/memory_test_support.h"

namespace strata {
namespace {

using testing::Constants;
using testing::ReferenceJob;

TEST(OomAdvice, Fp32GradientsSuggestTheCoursesFixFirst) {
  // Reference job with fp32 gradients: 97.75 GB > 96 GB. Switching the buffer to bf16 saves
  // 2 B x 6,921,459,056 = 13.84 GB (the course's own fix) and is the cheapest candidate.
  const auto fixes = SuggestMemoryFixes(ReferenceJob({"precision.grads=fp32"}), Constants());
  ASSERT_FALSE(fixes.empty());
  EXPECT_EQ(fixes[0].change, "bf16 gradient buffer");
  EXPECT_EQ(fixes[0].overrides, std::vector<std::string>{"precision.grads=bf16"});
  EXPECT_TRUE(fixes[0].fits);
  EXPECT_NEAR(fixes[0].peak.gb(), 97.75 - 13.84, 0.01);
  // Twice the EP would be 16, which does not divide TP x CP x DP = 40: never suggested.
  for (const auto& f : fixes) EXPECT_NE(f.change, "twice the EP");
}

TEST(OomAdvice, PairsWhenNoSingleChangeFits) {
  // fp32 gradients and the native loss at 56Ki-token samples: each fix alone leaves it over
  // the 101.98 GB the H20's counters can reach (103.71 GB with the fused loss alone), both
  // together give the reference job's own peak at that length.
  const auto fixes =
      SuggestMemoryFixes(ReferenceJob({"precision.grads=fp32", "loss.cross_entropy=native",
                                       "sequence.max_tokens=56Ki"}),
                         Constants());
  ASSERT_FALSE(fixes.empty());
  EXPECT_EQ(fixes[0].change, "bf16 gradient buffer + fused cross entropy");
  EXPECT_TRUE(fixes[0].fits);
  const MemoryLedger both = ComputeLedger(ReferenceJob({"sequence.max_tokens=56Ki"}), Constants());
  EXPECT_NEAR(fixes[0].peak.gb(), both.Peak().gb(), 0.01);
  ASSERT_GE(fixes.size(), 2u);
  EXPECT_FALSE(fixes[1].fits);  // then the single changes that help most
}

}  // namespace
}  // namespace strata

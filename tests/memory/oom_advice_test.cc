#include "strata/memory/oom_advice.h"

#include <gtest/gtest.h>

#include "memory/memory_test_support.h"
#include "support/golden.h"

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

// The shipped DeepSeek-V3 job's pipeline layout "Et*3|(tt|)*29,m|L" unrolls to 32 virtual
// stages ('|' separates them: 1 + 29 + 1 + 1), PP 16 x VPP 2. At 256 nodes without recompute
// it is over the card, and "twice the PP" is a candidate (PP 32 leaves DP 2,048 / 32 = 64, which
// EP 64 divides). Its 32 stages at PP 32 are VPP 1, as megatron-core derives VPP from the layout;
// kept at VPP 2 the ledger walked 64 chunks of a 32-entry table (a segfault before the fix).
TEST(OomAdvice, TwicePpRederivesVppFromThePipelineLayout) {
  auto spec = LoadJobSpec("deepseek-v3-pp16-vpp2-layout-h800x1024",
                          {"cluster.nodes=256", "recompute.granularity=none"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  ASSERT_FALSE(ComputeLedger(*job, Constants()).fits);
  bool twice_pp = false;
  for (const auto& f : SuggestMemoryFixes(*job, Constants(), 20)) {
    if (f.change != "twice the PP") continue;
    twice_pp = true;
    EXPECT_EQ(f.overrides,
              (std::vector<std::string>{"parallel.pp=32", "parallel.vpp=1", "parallel.dp=64"}));
  }
  EXPECT_TRUE(twice_pp);
}

// A layout changed after reading must still have PP x VPP stages: the same check the reader
// makes ("--set parallel.pp=32 --set parallel.vpp=2" is refused there), made again on rederive.
TEST(OomAdvice, RederiveRefusesAPipelineLayoutWhoseStagesAreNotPpTimesVpp) {
  auto spec = LoadJobSpec("deepseek-v3-pp16-vpp2-layout-h800x1024", {"cluster.nodes=256"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  job->spec.layout.pp = 32;  // 32 stages at PP 32 are VPP 1; VPP stays 2
  job->spec.layout.dp = 0;
  const Status st = RederiveJob(*job);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "the pipeline layout has 1 virtual stages per rank (32 / PP 32), VPP is 2");
}

// The audit's command: exit 139 with nothing printed before the fix; now the OOM ledger (exit 1)
// with the advice.
TEST(OomAdvice, MemoryOnTheDeepSeekLayoutJobAtTwiceTheNodesDoesNotCrash) {
  const auto run = testing::RunCli({"memory", "deepseek-v3-pp16-vpp2-layout-h800x1024", "--set",
                                    "cluster.nodes=256", "--set", "recompute.granularity=none"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.out.find("twice the PP"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace strata

// One step across ranks (SpreadAcrossRanks): which rank held the others up, and why.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/profile/profile.h"

namespace strata::profile {
namespace {

constexpr int64_t kUs = 1000;  // ns

// A rank whose step `step` has these figures (microseconds): span, compute (GPU busy minus
// exposed communication) and exposed NCCL.
RankProfile Rank(int64_t rank, int64_t step, int64_t span_us, int64_t compute_us,
                 int64_t nccl_exposed_us) {
  RankProfile r;
  r.rank = rank;
  r.file = "rank" + std::to_string(rank) + ".json";
  StepProfile s;
  s.step = step;
  s.figures.gpu_events = 100;
  s.figures.span_ns = span_us * kUs;
  s.figures.nccl_exposed_ns = nccl_exposed_us * kUs;
  s.figures.busy_ns = (compute_us + nccl_exposed_us) * kUs;
  r.steps.push_back(s);
  return r;
}

// PARAM's DLRM trace (param-dlrm-8rank-v100), step 10, three of its eight ranks (audit 54, P1,
// from `strata profile --json`): span, compute, exposed NCCL in us. All ranks leave the step's last
// NCCL kernel within 7 us (40,331-40,338 us), so the longest span (rank 1, 18,467 us) is the rank
// that started first and waited: 11,056 us in NCCL. The rank the others waited for entered last
// and waited least: rank 7 (1,580 us) - the rank the old output called the "fastest". Why: its
// compute is 1,059 - 1,043 = +16 us against rank 1, its idle inside the step (10,967 - 2,639 =
// 8,328 us) against rank 1's (18,467 - 12,099 = 6,368 us) +1,960 us; neither covers half of the
// 11,056 - 1,580 = 9,476 us it made rank 1 wait, so its step's GPU work began late.
TEST(StepsAcrossRanks, TheStragglerIsTheRankThatWaitedLeast) {
  const std::vector<RankProfile> ranks = {Rank(0, 10, 13009, 1034, 5537),
                                          Rank(1, 10, 18467, 1043, 11056),
                                          Rank(7, 10, 10967, 1059, 1580)};
  const std::vector<StepSpread> spread = SpreadAcrossRanks(ranks);
  ASSERT_EQ(spread.size(), 1u);
  const StepSpread& s = spread[0];
  EXPECT_FALSE(s.identical);
  EXPECT_TRUE(s.communication);
  EXPECT_EQ(ranks[s.straggler].rank, 7);
  EXPECT_EQ(ranks[s.waited_most].rank, 1);
  EXPECT_EQ(ranks[s.longest].rank, 1);
  EXPECT_EQ(s.straggler_wait_ns, 1580 * kUs);
  EXPECT_EQ(s.most_wait_ns, 11056 * kUs);
  EXPECT_EQ(s.reason, "late start");
  EXPECT_EQ(s.compute_min_ns, 1034 * kUs);
  EXPECT_EQ(s.compute_max_ns, 1059 * kUs);
}

// HTA's sampled recsys trace, step 552 (hta-recsys-sampled-2rank-a100, the shape the audit
// describes): rank 1 computes 31 ms longer and waits 27 ms less in NCCL: it is the straggler,
// and its extra compute (more than half the 27 ms it made rank 0 wait) is why.
TEST(StepsAcrossRanks, ExtraComputeExplainsTheStraggler) {
  const std::vector<RankProfile> ranks = {Rank(0, 552, 600000, 400000, 60000),
                                          Rank(1, 552, 604000, 431000, 33000)};
  const std::vector<StepSpread> spread = SpreadAcrossRanks(ranks);
  ASSERT_EQ(spread.size(), 1u);
  EXPECT_EQ(ranks[spread[0].straggler].rank, 1);
  EXPECT_EQ(spread[0].reason, "compute");
  EXPECT_EQ(spread[0].reason_ns, 31000 * kUs);
}

// The same trace given twice (audit 54, P2): no difference to explain, and nothing printed a
// "+0.000 ms: the host did not keep the GPU fed" cause for it.
TEST(StepsAcrossRanks, IdenticalRanksAreSaidToBeIdentical) {
  const std::vector<RankProfile> ranks = {Rank(0, 551, 600058, 500000, 40000),
                                          Rank(0, 551, 600058, 500000, 40000)};
  const std::vector<StepSpread> spread = SpreadAcrossRanks(ranks);
  ASSERT_EQ(spread.size(), 1u);
  EXPECT_TRUE(spread[0].identical);
}

// A step that holds no GPU event on a rank (torch.profiler's empty last step) is not compared.
TEST(StepsAcrossRanks, StepsWithoutGpuWorkAreNotCompared) {
  std::vector<RankProfile> ranks = {Rank(0, 3, 1000, 800, 100), Rank(1, 3, 1000, 800, 100)};
  ranks[1].steps[0].figures = Figures{};
  EXPECT_TRUE(SpreadAcrossRanks(ranks).empty());
}

}  // namespace
}  // namespace strata::profile

// One step across ranks (SpreadAcrossRanks): which rank held the others up, and why.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "profile/reference_traces.h"
#include "strata/profile/profile.h"

namespace strata::profile::steps_across_ranks_test {
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
  // One step: its lead over the next rank (rank 0: 5,537 - 1,580 = 3,957 us) has no step-to-step
  // swing to be weighed against, so rank 7 is a candidate, not a named straggler.
  EXPECT_EQ(ranks[s.margin.runner_up].rank, 0);
  EXPECT_EQ(s.margin.lead_ns, 3957 * kUs);
  EXPECT_FALSE(s.margin.noise_ns.has_value());
  EXPECT_FALSE(s.margin.clear);
}

// Ranks with several steps: `steps` holds each step's (span, compute, exposed NCCL) in us, steps
// numbered from 1.
RankProfile RankOfSteps(int64_t rank, const std::vector<std::array<int64_t, 3>>& steps) {
  RankProfile r = Rank(rank, 1, steps[0][0], steps[0][1], steps[0][2]);
  for (size_t i = 1; i < steps.size(); ++i) {
    r.steps.push_back(
        Rank(rank, static_cast<int64_t>(i) + 1, steps[i][0], steps[i][1], steps[i][2]).steps[0]);
  }
  return r;
}

// A rank that is late in every step: rank 1 waits 10, 11 and 12 ms in collectives against rank
// 0's 50, 52 and 49 ms. Its lead (37 ms at the least, step 3: 49 - 12) exceeds the most either
// rank's exposed communication moves between steps (rank 0: 52 - 49 = 3 ms; rank 1: 12 - 10 =
// 2 ms), so every step names it.
TEST(StepsAcrossRanks, ARankLateInEveryStepIsNamedAgainstTheStepToStepSwing) {
  const std::vector<RankProfile> ranks = {
      RankOfSteps(0,
                  {{{100000, 40000, 50000}}, {{100000, 40000, 52000}}, {{100000, 40000, 49000}}}),
      RankOfSteps(1,
                  {{{100000, 80000, 10000}}, {{100000, 80000, 11000}}, {{100000, 80000, 12000}}})};
  const std::vector<StepSpread> spread = SpreadAcrossRanks(ranks);
  ASSERT_EQ(spread.size(), 3u);
  const int64_t leads_us[] = {40000, 41000, 37000};
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(ranks[spread[i].straggler].rank, 1);
    EXPECT_EQ(spread[i].margin.lead_ns, leads_us[i] * kUs);
    ASSERT_TRUE(spread[i].margin.noise_ns.has_value());
    EXPECT_EQ(*spread[i].margin.noise_ns, 3000 * kUs);
    EXPECT_EQ(ranks[spread[i].margin.noise_index].rank, 0);
    EXPECT_EQ(spread[i].margin.noise_steps, 3u);
    EXPECT_TRUE(spread[i].margin.clear);
  }
}

// HTA's two sampled ranks of a world of 128 (hta-recsys-sampled-2rank-a100), as profiled. The
// exposed communication (NCCL union minus its overlap with other kernels, kernels given to a step
// by their launch), derived with a separate reader of the JSON (whole microseconds in the file):
// rank 0 172,259 us in step 551 and 164,724 us in 552; rank 1 134,336 and 169,187 us. Step 551:
// rank 1 waited 37,923 us less; step 552: rank 0 waited 4,463 us less (the audit's "164.7 against
// 169.2 ms"; HTA's last-collective rule names rank 1 there). The swing between the two steps:
// rank 0 7,535 us, rank 1 34,851 us. So step 551 names rank 1 (37,923 > 34,851 us), and
// step 552 has no clear straggler (4,463 us is within the 34,851 us swing).
TEST(StepsAcrossRanks, RecsysStep552HasNoClearStraggler) {
  const ProfileReport r = testing::ProfileReferenceTraces({"hta-recsys-sampled-2rank-a100"});
  ASSERT_EQ(r.spread.size(), 2u);
  const StepSpread& s551 = r.spread[0];
  EXPECT_EQ(s551.step, 551);
  EXPECT_EQ(r.ranks[s551.straggler].rank, 1);
  EXPECT_EQ(r.ranks[s551.margin.runner_up].rank, 0);
  EXPECT_EQ(s551.margin.lead_ns, 37923 * kUs);
  ASSERT_TRUE(s551.margin.noise_ns.has_value());
  EXPECT_EQ(*s551.margin.noise_ns, 34851 * kUs);
  EXPECT_EQ(r.ranks[s551.margin.noise_index].rank, 1);
  EXPECT_EQ(s551.margin.noise_steps, 2u);
  EXPECT_TRUE(s551.margin.clear);

  const StepSpread& s552 = r.spread[1];
  EXPECT_EQ(s552.step, 552);
  EXPECT_EQ(r.ranks[s552.straggler].rank, 0);  // the candidate: the rank that waited least
  EXPECT_EQ(r.ranks[s552.margin.runner_up].rank, 1);
  EXPECT_EQ(s552.margin.straggler_ns, 164724 * kUs);
  EXPECT_EQ(s552.margin.runner_up_ns, 169187 * kUs);
  EXPECT_EQ(s552.margin.lead_ns, 4463 * kUs);
  ASSERT_TRUE(s552.margin.noise_ns.has_value());
  EXPECT_EQ(*s552.margin.noise_ns, 34851 * kUs);
  EXPECT_FALSE(s552.margin.clear);
}

// PARAM's DLRM traces (param-dlrm-8rank-v100) hold one step (10) of eight ranks. Exposed NCCL in
// us, derived as above: rank 7 1,580, rank 2 3,217, rank 6 3,289, ... rank 1 11,056. Rank 7
// leads rank 2 by 1,637 us, but with one step there is no step-to-step
// swing to weigh that against: no straggler is named (HTA's rule names rank 4 here).
TEST(StepsAcrossRanks, DlrmOneStepNamesNoStraggler) {
  const ProfileReport r = testing::ProfileReferenceTraces({"param-dlrm-8rank-v100"});
  ASSERT_EQ(r.spread.size(), 1u);
  const StepSpread& s = r.spread[0];
  EXPECT_EQ(r.ranks[s.straggler].rank, 7);
  EXPECT_EQ(r.ranks[s.margin.runner_up].rank, 2);
  EXPECT_EQ(s.margin.lead_ns, 1637 * kUs);
  EXPECT_FALSE(s.margin.noise_ns.has_value());
  EXPECT_FALSE(s.margin.clear);
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
}  // namespace strata::profile::steps_across_ranks_test

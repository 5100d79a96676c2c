// The job-level checks over several ranks: missing and duplicate ranks, world sizes that
// disagree, and clock skew (step intervals of ranks that must run together do not overlap).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/profile/profile.h"

namespace strata::profile {
namespace {

RankProfile Rank(std::optional<int64_t> rank, std::optional<int64_t> world, std::string file,
                 std::vector<StepProfile> steps = {}) {
  RankProfile r;
  r.rank = rank;
  r.world_size = world;
  r.file = std::move(file);
  r.steps = std::move(steps);
  return r;
}

constexpr int64_t kMs = 1000000;  // ns

TEST(JobWarnings, Table) {
  const struct {
    const char* name;
    std::vector<RankProfile> ranks;
    std::vector<std::string> expected;
  } cases[] = {
      {"all ranks of the world", {Rank(0, 2, "a"), Rank(1, 2, "b")}, {}},
      {"one file alone is not a job: no missing-rank warning", {Rank(5, 8, "a")}, {}},
      {"missing ranks",
       {Rank(0, 4, "a"), Rank(2, 4, "b")},
       {"2 of 4 ranks read; missing ranks 1, 3: the slowest rank may be among them"}},
      {"a rank twice",
       {Rank(0, 2, "a"), Rank(0, 2, "b"), Rank(1, 2, "c")},
       {"rank 0 appears in 2 files (a and b): traces of different runs or steps?"}},
      {"world sizes disagree",
       {Rank(0, 2, "a"), Rank(1, 4, "b")},
       {"the files disagree on the world size (2, 4): traces of different jobs?"}},
      {"ranks unknown",
       {Rank(std::nullopt, std::nullopt, "a"), Rank(std::nullopt, std::nullopt, "b")},
       {"2 of 2 files do not say their rank (no distributedInfo): they are listed by file"}},
      // Step 3 runs 0-100 ms on rank 0 and 100.5-200 ms on rank 1: disjoint by 0.5 ms, which
      // ranks meeting in collectives cannot be; overlapping intervals are not a warning.
      {"clock skew",
       {Rank(0, 2, "a", {{3, 0, 100 * kMs, {}}}),
        Rank(1, 2, "b", {{3, 100 * kMs + kMs / 2, 200 * kMs, {}}})},
       {"clock skew: step 3 ends on rank 0 0.500 ms before it starts on rank 1; ranks that meet "
        "in collectives run a step at the same time, so their clocks differ by at least that (or "
        "the files come from different runs). Per-rank figures are unaffected"}},
      {"overlapping steps",
       {Rank(0, 2, "a", {{3, 0, 100 * kMs, {}}}), Rank(1, 2, "b", {{3, 99 * kMs, 200 * kMs, {}}})},
       {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(JobWarnings(c.ranks), c.expected);
  }
}

}  // namespace
}  // namespace strata::profile

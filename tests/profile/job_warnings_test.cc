// The job-level checks over several ranks: missing and duplicate ranks, world sizes that
// disagree, and clock skew (step intervals of ranks that must run together do not overlap).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "strata/profile/profile.h"
#include "support/golden.h"

namespace strata::profile::job_warnings_test {
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
      // Rank ids with a gap and no world size (traces without distributedInfo.world_size):
      // rank 2 is missing all the same.
      {"a gap in the rank ids without a world size",
       {Rank(0, std::nullopt, "a"), Rank(1, std::nullopt, "b"), Rank(3, std::nullopt, "c")},
       {"ranks 0 to 3 read without a world size, but not ranks 2: the slowest rank may be among "
        "them"}},
      {"overlapping steps",
       {Rank(0, 2, "a", {{3, 0, 100 * kMs, {}}}), Rank(1, 2, "b", {{3, 99 * kMs, 200 * kMs, {}}})},
       {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(JobWarnings(c.ranks), c.expected);
  }
}

// A profiler killed before it wrote any event leaves an empty file, or one cut inside its
// header. Alone it is bad input (exit 2); among other ranks' files it was too, and nothing was
// read: now it is left out with a warning naming it, and the other ranks are read.
TEST(JobWarnings, ARankFileCutBeforeItsEventsIsLeftOutAndTheOthersRead) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "strata-cut-rank-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(
      strata::testing::TestPath("fixtures/calibrate/two-rank-skew/rank0.json"), dir / "rank0.json");
  {
    std::ifstream in(strata::testing::TestPath("fixtures/calibrate/two-rank-skew/rank1.json"));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(dir / "rank1.json") << text.substr(0, text.find("\"traceEvents\""));
    std::ofstream(dir / "rank2.json");  // empty
  }
  auto rules = KernelClassifier::Load();
  ASSERT_TRUE(rules.ok()) << rules.error().Format();
  auto report = ProfileTraces(
      {(dir / "rank0.json").string(), (dir / "rank1.json").string(), (dir / "rank2.json").string()},
      *rules);
  ASSERT_TRUE(report.ok()) << report.error().Format();
  ASSERT_EQ(report->ranks.size(), 1u);
  EXPECT_EQ(report->ranks[0].rank, 0);
  EXPECT_GT(report->ranks[0].whole_trace.gpu_events, 0);
  size_t left_out = 0;
  for (const std::string& w : report->warnings) {
    if (w.find(": left out: ") != std::string::npos) ++left_out;
  }
  EXPECT_EQ(left_out, 2u);
  // Alone, the cut file is still an error naming it.
  auto alone = ProfileTraces({(dir / "rank1.json").string()}, *rules);
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.error().file, (dir / "rank1.json").string());
  // Every file cut: an error, not an empty report.
  auto none = ProfileTraces({(dir / "rank1.json").string(), (dir / "rank2.json").string()}, *rules);
  EXPECT_FALSE(none.ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace strata::profile::job_warnings_test

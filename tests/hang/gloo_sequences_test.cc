// Gloo's flight recorder read by comparing the ranks' sequences, on the dumps torch 2.11 wrote
// when Gloo failures were provoked on purpose (tests/golden/hang-real/strata-h200-gloo*/: each
// case.yaml says what was done). The expected positions, ops and sizes were read off the dumps
// unpickled by Python (the entries are listed in each case.yaml's reading).
#include "strata/hang/analysis/gloo_sequences.h"

#include <gtest/gtest.h>

#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"
#include "support/golden.h"

namespace strata::hang {
namespace {

EvidenceSet Load(const std::string& name) {
  auto ev = LoadEvidence({testing::TestPath("golden/hang-real/" + name + "/input")});
  EXPECT_TRUE(ev.ok());
  return std::move(ev).value();
}

PgStall OnlyStall(const std::vector<PgStall>& stalls) {
  EXPECT_EQ(stalls.size(), 1u);
  return stalls.front();
}

TEST(GlooSequences, GlooDumpsAreRecognisedAndNcclDumpsAreNot) {
  const EvidenceSet gloo = Load("strata-h200-gloo4-dead-rank");
  ASSERT_EQ(gloo.fr_dumps.size(), 3u);
  for (const auto& [file, dump] : gloo.fr_dumps) EXPECT_TRUE(IsGlooDump(dump)) << file;
  const EvidenceSet nccl = Load("strata-h200-nccl-watchdog-timeout-not-started");
  ASSERT_EQ(nccl.fr_dumps.size(), 1u);
  EXPECT_FALSE(IsGlooDump(nccl.fr_dumps[0].second));  // comm_lib_version 2.28.9, "nccl:" names
}

TEST(GlooSequences, AnOpDifferentFromTheOthersAtOnePositionIsAMismatchNamingTheOddRank) {
  // #3: gloo:broadcast on rank 2, gloo:all_reduce on ranks 0, 1, 3, all [[1024]].
  const PgStall s =
      OnlyStall(StallsFromGlooSequences(Load("strata-h200-gloo4-broadcast-vs-allreduce").fr_dumps));
  EXPECT_EQ(s.stalled_seq, 3);
  EXPECT_EQ(s.op, "all_reduce");  // what the three that agree called
  EXPECT_EQ(s.mismatch_minority, (std::vector<int64_t>{2}));
  EXPECT_EQ(s.mismatch, "all_reduce [[1024]] on ranks 0-1,3; broadcast [[1024]] on rank 2");
  EXPECT_EQ(s.members, (std::vector<int64_t>{0, 1, 2, 3}));  // pg_config keyed "", entries "0"
  EXPECT_TRUE(s.missing.empty());
  EXPECT_EQ(s.timeout_ms, 8000);
}

TEST(GlooSequences, ADifferentInputSizeIsAMismatchAndTheRankWithoutADumpIsMissing) {
  // #3 all_reduce: [[2048]] on rank 1, [[1024]] on ranks 2, 3; rank 0 (aborted) wrote none.
  const PgStall s =
      OnlyStall(StallsFromGlooSequences(Load("strata-h200-gloo4-size-mismatch").fr_dumps));
  EXPECT_EQ(s.stalled_seq, 3);
  EXPECT_EQ(s.op, "all_reduce");
  EXPECT_EQ(s.input_sizes, (std::vector<std::vector<int64_t>>{{1024}}));
  EXPECT_EQ(s.mismatch_minority, (std::vector<int64_t>{1}));
  EXPECT_EQ(s.missing, (std::vector<int64_t>{0}));
}

TEST(GlooSequences, AgreeingSequencesStopAtTheLastPositionAndNameTheMembersWithoutADump) {
  // Ranks 0-2: all_reduce #1, broadcast #2, all_reduce #3; rank 3 of the four left no dump.
  const PgStall s =
      OnlyStall(StallsFromGlooSequences(Load("strata-h200-gloo4-dead-rank").fr_dumps));
  EXPECT_EQ(s.stalled_seq, 3);
  EXPECT_EQ(s.op, "all_reduce");
  EXPECT_TRUE(s.mismatch.empty());
  EXPECT_EQ(s.waiting, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(s.behind.empty());
  EXPECT_EQ(s.missing, (std::vector<int64_t>{3}));
}

TEST(GlooSequences, ARankWhoseSequenceEndsEarlierIsBehind) {
  EvidenceSet ev = Load("strata-h200-gloo4-dead-rank");
  ASSERT_EQ(ev.fr_dumps.size(), 3u);
  ev.fr_dumps[1].second.entries.pop_back();  // rank 1 recorded #1 and #2 only
  const PgStall s = OnlyStall(StallsFromGlooSequences(ev.fr_dumps));
  EXPECT_EQ(s.stalled_seq, 3);
  EXPECT_EQ(s.behind, (std::vector<int64_t>{1}));
  EXPECT_EQ(s.waiting, (std::vector<int64_t>{0, 2}));
}

TEST(GlooSequences, TwoAgainstTwoNamesNoOddRank) {
  EvidenceSet ev = Load("strata-h200-gloo4-broadcast-vs-allreduce");
  ASSERT_EQ(ev.fr_dumps.size(), 4u);
  ev.fr_dumps[3].second.entries.back().op = "broadcast";  // rank 3 now sides with rank 2
  const PgStall s = OnlyStall(StallsFromGlooSequences(ev.fr_dumps));
  EXPECT_FALSE(s.mismatch.empty());
  EXPECT_TRUE(s.mismatch_minority.empty());
}

TEST(GlooSequences, PlaceholderStatesAreReportedAndNeverReadAsCompletion) {
  // pg_status in every dump says last_completed 3 = last_enqueued: taken at its word, nothing
  // would be pending. The verdict's placeholder list says it is not a value, for each of the
  // three dumps (ranks 0-2), next to the "scheduled" state every Gloo entry keeps.
  const Verdict v = Analyze(Load("strata-h200-gloo4-dead-rank"), {});
  int completion = 0;
  int state = 0;
  for (const Placeholder& p : v.placeholders) {
    completion += p.field == "last_completed_collective" ? 1 : 0;
    state += p.field == "state" && p.value == "scheduled" ? 1 : 0;
  }
  EXPECT_EQ(completion, 3);
  EXPECT_EQ(state, 3);
  EXPECT_TRUE(v.hang);
  EXPECT_EQ(v.finding.kind, "dead_rank");
  EXPECT_EQ(v.finding.ranks, (std::vector<int64_t>{3}));
}

TEST(GlooSequences, AgreeingDumpsWithNobodyMissingAndNoFailureLineAreNoVerdictNotHealthy) {
  EvidenceSet ev = Load("strata-h200-gloo4-dead-rank");
  ev.logs.clear();
  ev.gloo.clear();
  ev.failures.clear();
  ev.log_signals.clear();
  for (auto& [file, dump] : ev.fr_dumps) dump.pg_config.begin()->second.ranks = {0, 1, 2};
  const Verdict v = Analyze(ev, {});
  EXPECT_FALSE(v.hang);
  EXPECT_EQ(v.finding.kind, "unknown");
  EXPECT_EQ(
      v.headline,
      "no verdict: read 3 flight-recorder dumps; nothing in them could be used (see the notes)");
}

}  // namespace
}  // namespace strata::hang

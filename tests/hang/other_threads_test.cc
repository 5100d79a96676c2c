// All ranks at the same place (issue 9): identical main-thread stacks are not "no hang" and not
// the end of the search. py-spy prints every thread; the odd rank shows up in the others.
#include "strata/hang/analysis/other_threads.h"

#include <gtest/gtest.h>

#include "strata/hang/analysis/analysis.h"

namespace strata::hang::other_threads_test {
namespace {

PyFrame F(const char* function, const char* file, int line) {
  PyFrame f;
  f.function = function;
  f.file = file;
  f.line = line;
  return f;
}

PyThread Thread(uint64_t id, const char* name, std::vector<PyFrame> frames, bool idle = false) {
  PyThread t;
  t.thread_id = id;
  t.name = name;
  t.frames = std::move(frames);
  t.idle = idle;
  return t;
}

// Every rank: MainThread in all_reduce, and a pin-memory thread waiting on its queue. Rank
// `writer` also has a "checkpoint" thread inside torch.save's write: the only difference.
RankEvidence Rank(int64_t rank, bool writer) {
  RankEvidence e;
  e.process.pid = 2000 + rank;
  e.process.rank = rank;
  PySpyDump d;
  d.pid = e.process.pid;
  d.threads.push_back(Thread(static_cast<uint64_t>(d.pid), "MainThread",
                             {F("all_reduce", "torch/distributed/distributed_c10d.py", 2050),
                              F("train_step", "train.py", 88), F("main", "train.py", 120)}));
  d.threads.push_back(Thread(0x7f01, "pin_memory",
                             {F("get", "queue.py", 180),
                              F("_pin_memory_loop", "torch/utils/data/_utils/pin_memory.py", 51)}));
  if (writer) {
    d.threads.push_back(
        Thread(0x7f02, "checkpoint",
               {F("write", "torch/serialization.py", 650), F("save_checkpoint", "train.py", 40)}));
  }
  e.pyspy = std::move(d);
  return e;
}

TEST(OtherThreads, IdenticalMainStacksStillNameTheRankWhoseOtherThreadDiffers) {
  // Eight ranks, rank 5 alone writes a checkpoint: 1 rank against 7 is at most a quarter.
  EvidenceSet set;
  for (int64_t r = 0; r < 8; ++r) set.ranks.push_back(Rank(r, r == 5));
  const Verdict v = Analyze(set, {});
  ASSERT_EQ(v.groups.size(), 1u);  // the main threads agree
  EXPECT_EQ(v.finding.kind, "lagging_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{5});
  ASSERT_TRUE(v.culprit.has_value());
  EXPECT_EQ(v.culprit->ranks, std::vector<int64_t>{5});
  ASSERT_FALSE(v.patterns.empty());
  EXPECT_EQ(v.patterns[0].id, "odd_other_thread");
  ASSERT_FALSE(v.patterns[0].evidence.empty());
  EXPECT_EQ(
      v.patterns[0].evidence[0],
      "py-spy: rank 5: thread checkpoint in write (torch/serialization.py) (not on the others)");
}

TEST(OtherThreads, SameOtherThreadsEverywhereIsTheDeviceSideStallAsBefore) {
  EvidenceSet set;
  for (int64_t r = 0; r < 8; ++r) set.ranks.push_back(Rank(r, false));
  const Verdict v = Analyze(set, {});
  ASSERT_FALSE(v.patterns.empty());
  EXPECT_EQ(v.patterns[0].id, "all_ranks_identical");
  EXPECT_TRUE(v.finding.ranks.empty());
}

TEST(OtherThreads, AnIdleThreadIsNotADifference) {
  // Rank 5's extra thread is idle (py-spy --idle prints it with "(idle)"): nothing to name.
  EvidenceSet set;
  for (int64_t r = 0; r < 8; ++r) {
    set.ranks.push_back(Rank(r, r == 5));
    if (r == 5) set.ranks.back().pyspy->threads.back().idle = true;
  }
  const Verdict v = Analyze(set, {});
  ASSERT_FALSE(v.patterns.empty());
  EXPECT_EQ(v.patterns[0].id, "all_ranks_identical");
}

TEST(OtherThreads, TwoAgainstTwoNamesNobody) {
  // In four ranks, two writers against two others is no minority.
  EvidenceSet set;
  for (int64_t r = 0; r < 4; ++r) set.ranks.push_back(Rank(r, r >= 2));
  const Verdict v = Analyze(set, {});
  EXPECT_FALSE(v.culprit.has_value());
}

}  // namespace
}  // namespace strata::hang::other_threads_test

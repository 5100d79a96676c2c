// The analysis over hand-built evidence (stubs of each parser's output), so every join rule is
// tested without files: flight-recorder queues, watchdog lines, RAS deaths, log signals.
#include "strata/hang/analysis/analysis.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "strata/hang/analysis/pg_stall.h"
#include "strata/hang/analysis/stack_activity.h"

namespace strata::hang::analysis_test {
namespace {

// FR-OOM-40 of the research note (section 2.7): DATA_PARALLEL_GROUP is pg name "12", local uid 5;
// every rank but 17 enqueued #1844 (_all_gather_base) and completed #1843; rank 17 stopped at 1843.
FrDump FrRank(int64_t rank, bool culprit) {
  FrDump d;
  d.version = "2.10";
  d.rank = rank;
  FrPgConfig dp;
  dp.name = "12";
  dp.desc = "DATA_PARALLEL_GROUP";
  for (int64_t r = 0; r < 40; ++r) dp.ranks.push_back(r);
  d.pg_config["12"] = dp;
  d.pg_status["5"] = {culprit ? 1843 : 1844, -1, 1843};
  for (int64_t seq = 1842; seq <= (culprit ? 1843 : 1844); ++seq) {
    FrEntry e;
    e.pg_id = 5;
    e.pg_name = "12";
    e.pg_desc = "DATA_PARALLEL_GROUP";
    e.collective_seq_id = seq;
    e.op = seq == 1844 ? "_all_gather_base" : seq == 1843 ? "all_reduce" : "_reduce_scatter_base";
    e.input_sizes = {{58720256}};
    e.state = seq == 1844 ? "scheduled" : "completed";
    e.timeout_ms = 600000;
    d.entries.push_back(e);
  }
  return d;
}

TEST(PgStall, FlightRecorderNamesTheStalledCollectiveAndWhoIsBehind) {
  std::vector<std::pair<std::string, FrDump>> dumps;
  for (int64_t r = 0; r < 40; ++r)
    dumps.emplace_back("trace_" + std::to_string(r), FrRank(r, r == 17));
  const auto stalls = StallsFromFlightRecorder(dumps);
  ASSERT_EQ(stalls.size(), 1u);
  const PgStall& s = stalls[0];
  EXPECT_EQ(s.pg, "12");
  EXPECT_EQ(s.desc, "DATA_PARALLEL_GROUP");
  EXPECT_EQ(s.stalled_seq, 1844);  // min(last_completed) + 1 = 1843 + 1
  EXPECT_EQ(s.op, "_all_gather_base");
  EXPECT_EQ(s.waiting.size(), 39u);
  EXPECT_EQ(s.behind, std::vector<int64_t>{17});
  EXPECT_TRUE(s.missing.empty());
  EXPECT_EQ(s.timeout_ms, 600000);
  EXPECT_TRUE(s.mismatch.empty());
}

TEST(PgStall, ADeadRankWithoutADumpIsMissingNotAnError) {
  std::vector<std::pair<std::string, FrDump>> dumps;
  for (int64_t r = 0; r < 40; ++r) {
    if (r != 17) dumps.emplace_back("trace_" + std::to_string(r), FrRank(r, false));
  }
  const auto stalls = StallsFromFlightRecorder(dumps);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0].missing, std::vector<int64_t>{17});
  EXPECT_TRUE(stalls[0].behind.empty());
}

TEST(PgStall, DifferentOpsAtTheSameSequenceNumberAreAMismatch) {
  std::vector<std::pair<std::string, FrDump>> dumps;
  for (int64_t r = 0; r < 4; ++r) {
    FrDump d = FrRank(r, false);
    d.pg_config["12"].ranks = {0, 1, 2, 3};
    if (r == 3) d.entries.back().op = "all_reduce";
    dumps.emplace_back("t" + std::to_string(r), d);
  }
  const auto stalls = StallsFromFlightRecorder(dumps);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0].mismatch,
            "_all_gather_base [[58720256]] on ranks 0-2; all_reduce [[58720256]] on rank 3");
  EXPECT_EQ(stalls[0].mismatch_minority, std::vector<int64_t>{3});
}

TEST(PgStall, DrainedQueuesAreNotStalls) {
  FrDump d = FrRank(0, false);
  d.pg_config["12"].ranks = {0};
  d.pg_status["5"] = {1844, -1, 1844};
  EXPECT_TRUE(StallsFromFlightRecorder({{"t0", d}}).empty());
}

// Section 3.3's real 8-rank job: ranks 0 and 4 never enqueued SeqNum 78 ("Last enqueued NCCL
// work: 77"), the others timed out in it.
TEST(PgStall, WatchdogLinesGiveAheadAndBehindWithoutFlightRecorder) {
  std::vector<WatchdogEvent> events;
  for (int64_t r = 0; r < 8; ++r) {
    WatchdogEvent e;
    e.global_rank = r;
    e.pg_id = "0";
    e.pg_desc = "default_pg";
    if (r == 0 || r == 4) {
      e.kind = WatchdogEventKind::kDumpSignal;
      e.last_enqueued = 77;
      e.last_completed = 77;
    } else {
      e.kind = WatchdogEventKind::kTimeout;
      e.seq = 78;
      e.op_type = "BROADCAST";
      e.numel_in = 80;
      e.timeout_ms = 600000;
    }
    events.push_back(e);
  }
  const auto stalls = StallsFromWatchdog(events);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0].stalled_seq, 78);
  EXPECT_EQ(stalls[0].op, "BROADCAST");
  EXPECT_EQ(stalls[0].behind, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(stalls[0].waiting.size(), 6u);
}

TEST(Analyze, FlightRecorderAloneNamesTheCulprit) {
  EvidenceSet set;
  for (int64_t r = 0; r < 40; ++r)
    set.fr_dumps.emplace_back("trace_" + std::to_string(r), FrRank(r, r == 17));
  const Verdict v = Analyze(set, {});
  EXPECT_TRUE(v.hang);
  ASSERT_TRUE(v.culprit.has_value());
  EXPECT_EQ(v.culprit->ranks, std::vector<int64_t>{17});
  EXPECT_EQ(v.expected_world, std::nullopt);  // no default_pg, no WORLD_SIZE: unknown, not guessed
  EXPECT_TRUE(v.timeout.effective_s.has_value());
  EXPECT_NEAR(*v.timeout.effective_s, 600.0, 1e-9);  // timeout_ms 600000 / 1000
}

TEST(Analyze, RasDeadProcessIsMappedToItsRankByPid) {
  EvidenceSet set;
  for (int64_t r = 0; r < 2; ++r) {
    RankEvidence e;
    e.process.pid = 100 + r;
    e.process.rank = r;
    e.process.world_size = 2;
    e.host = "10.10.0.13";
    set.ranks.push_back(e);
  }
  RasReport ras;
  ras.dead_or_unreachable.push_back({"10.10.0.13", 101, std::nullopt, 1, "DEAD"});
  set.ras.push_back(ras);
  const Verdict v = Analyze(set, {});
  EXPECT_EQ(v.dead, std::vector<int64_t>{1});
  ASSERT_TRUE(v.culprit.has_value());
  EXPECT_EQ(v.culprit->ranks, std::vector<int64_t>{1});
}

// NCCL RAS keeps INCOMPLETE (a process whose data did not arrive in time) apart from DEAD and
// UNREACHABLE: such a process is not dead, and its rank must not be reported as dead.
TEST(Analyze, RasIncompleteProcessIsNotDead) {
  EvidenceSet set;
  for (int64_t r = 0; r < 2; ++r) {
    RankEvidence e;
    e.process.pid = 100 + r;
    e.process.rank = r;
    e.process.world_size = 2;
    e.host = "10.10.0.13";
    set.ranks.push_back(e);
  }
  RasReport ras;
  ras.dead_or_unreachable.push_back({"10.10.0.13", 101, std::nullopt, 1, "INCOMPLETE"});
  set.ras.push_back(ras);
  const Verdict v = Analyze(set, {});
  EXPECT_TRUE(v.dead.empty());
  ASSERT_FALSE(v.notes.empty());
  EXPECT_NE(v.notes.back().find("INCOMPLETE"), std::string::npos) << v.notes.back();
}

TEST(Analyze, NoEvidenceIsNoVerdictNotACrash) {
  const Verdict v = Analyze(EvidenceSet{}, {});
  EXPECT_FALSE(v.hang);
  EXPECT_EQ(v.headline, "no verdict: no readable evidence of any rank");
}

PyFrame F(const char* function, const char* file, bool native = false) {
  PyFrame f;
  f.function = function;
  f.file = file;
  f.native = native;
  return f;
}

// One rank's py-spy main thread, innermost frame first; `line` tells two snapshots apart.
RankEvidence StackOf(int64_t rank, const std::string& snapshot, std::vector<PyFrame> frames,
                     int line = 9) {
  RankEvidence e;
  e.process.pid = 1000 + rank;
  e.process.rank = rank;
  e.snapshot = snapshot;
  PySpyDump d;
  d.pid = e.process.pid;
  PyThread t;
  t.thread_id = static_cast<uint64_t>(d.pid);
  t.name = "MainThread";
  for (PyFrame& f : frames) f.line = f.line ? f.line : line;
  t.frames = std::move(frames);
  d.threads.push_back(std::move(t));
  e.pyspy = std::move(d);
  return e;
}

std::vector<PyFrame> InAllReduce() {
  return {F("all_reduce", "torch/distributed/distributed_c10d.py"), F("train_step", "train.py")};
}
std::vector<PyFrame> SavingACheckpoint() {
  return {F("write", "torch/serialization.py"), F("save_checkpoint", "train.py"),
          F("train_step", "train.py")};
}

// Four ranks: three wait in all_reduce, one is still saving a checkpoint. With four ranks or
// fewer the lone rank is the odd one out (before, a minority had to be under a quarter of the
// majority, which one rank of four never is).
TEST(Analyze, FourRanksStillNameTheOddOneOut) {
  EvidenceSet set;
  for (int64_t r = 0; r < 3; ++r) set.ranks.push_back(StackOf(r, "", InAllReduce()));
  set.ranks.push_back(StackOf(3, "", SavingACheckpoint()));
  const Verdict v = Analyze(set, {});
  ASSERT_TRUE(v.culprit.has_value()) << v.headline;
  EXPECT_EQ(v.culprit->ranks, std::vector<int64_t>{3});
}

// `strata hang A/ B/`: the same four ranks a minute apart. Rank 3's stack changed (it moved on
// in the checkpoint write), so it is progressing, not hung, and is no culprit; ranks 0-2 did not
// move.
TEST(Analyze, RanksThatMovedBetweenSnapshotsAreNotHung) {
  EvidenceSet set;
  for (const char* time : {"2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"}) {
    for (int64_t r = 0; r < 3; ++r) set.ranks.push_back(StackOf(r, time, InAllReduce()));
    set.ranks.push_back(StackOf(3, time, SavingACheckpoint(), time[15] == '0' ? 40 : 57));
  }
  const Verdict v = Analyze(set, {});
  EXPECT_EQ(v.moved, std::vector<int64_t>{3});
  EXPECT_FALSE(v.culprit.has_value() &&
               std::count(v.culprit->ranks.begin(), v.culprit->ranks.end(), 3) > 0)
      << v.headline;
  ASSERT_EQ(v.groups.size(), 1u);
  EXPECT_EQ(v.groups[0].ranks, (std::vector<int64_t>{0, 1, 2}));
}

TEST(StackActivity, Table) {
  struct Case {
    const char* name;
    std::vector<PyFrame> frames;
    Activity kind;
    const char* op;
    const char* phase;
  };
  const Case cases[] = {
      {"collective in the optimizer",
       {F("all_reduce", "torch/distributed/distributed_c10d.py"),
        F("step", "megatron/core/optimizer/optimizer.py")},
       Activity::kCollective,
       "all_reduce",
       "optimizer step"},
      {"lazy communicator creation under a collective",
       {F("ncclCommInitRankConfig", "libnccl.so.2", true),
        F("all_reduce", "torch/distributed/distributed_c10d.py")},
       Activity::kCommInit,
       "ncclCommInitRankConfig",
       ""},
      {"teardown",
       {F("destroy_process_group", "torch/distributed/distributed_c10d.py"), F("main", "train.py")},
       Activity::kTeardown,
       "destroy_process_group",
       "teardown"},
      {"pipeline recv",
       {F("recv", "torch/distributed/distributed_c10d.py"),
        F("recv_forward", "megatron/core/pipeline_parallel/p2p_communication.py")},
       Activity::kP2p,
       "recv",
       ""},
      {"megatron send+recv helper",
       {F("send_forward_recv_backward", "megatron/core/pipeline_parallel/p2p_communication.py")},
       Activity::kP2p,
       "send+recv",
       ""},
      {"cuda synchronize",
       {F("synchronize", "torch/cuda/__init__.py"), F("train_step", "train.py")},
       Activity::kDeviceSync,
       "synchronize",
       ""},
      {"data loader",
       {F("wait", "threading.py"), F("_try_get_data", "torch/utils/data/dataloader.py")},
       Activity::kDataLoader,
       "_try_get_data",
       "data loading"},
      {"backward compute",
       {F("_engine_run_backward", "torch/autograd/graph.py"),
        F("backward", "torch/autograd/__init__.py")},
       Activity::kRunning,
       "_engine_run_backward",
       "backward"},
      {"a user function called send is not p2p",
       {F("send", "mylib/mail.py")},
       Activity::kRunning,
       "send",
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const StackActivity a = ClassifyStack(c.frames, false);
    EXPECT_EQ(a.kind, c.kind);
    EXPECT_EQ(a.op, c.op);
    EXPECT_EQ(a.phase, c.phase);
  }
  EXPECT_EQ(ClassifyStack({}, false).kind, Activity::kNoStack);
}

}  // namespace
}  // namespace strata::hang::analysis_test

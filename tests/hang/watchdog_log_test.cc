#include "strata/hang/parsers/watchdog_log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/golden.h"

namespace strata::hang {
namespace {

// tests/golden/watchdog/<case>/input.log -> expected.json: the events and the effective timeout.
TEST(WatchdogLogGolden, AllCases) {
  const auto cases = testing::GoldenCases("golden/watchdog");
  ASSERT_GE(cases.size(), 10u);
  for (const std::string& name : cases) {
    SCOPED_TRACE(name);
    const std::string relative = "golden/watchdog/" + name + "/input.log";
    const auto events = ParseWatchdogLog(testing::ReadTestFile(relative), relative);
    Json out;
    out["events"] = ToJson(events);
    const auto timeout = EffectiveCollectiveTimeout(events);
    out["effective_timeout"] = timeout ? Json{{"timeout_ms", timeout->timeout_ms},
                                              {"source", timeout->source},
                                              {"line", timeout->line}}
                                       : Json(nullptr);
    EXPECT_TRUE(
        testing::MatchesGolden("golden/watchdog/" + name + "/expected.json", DumpJson(out)));
  }
}

// One line per generation; every expected number is read off the line itself (the formats are
// quoted in the reference case's section 3), so each row checks one field extraction.
TEST(WatchdogLog, TimeoutLineInEveryGeneration) {
  struct Case {
    const char* line;
    std::optional<int64_t> global_rank, pg_rank, seq;
    const char* op;
    std::optional<int64_t> numel_in, numel_out, timeout_ms, ran_for_ms;
  };
  const Case cases[] = {
      // torch <= 2.1: no [rankN]: prefix, no NumelIn
      {"[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: "
       "WorkNCCL(SeqNum=96120, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25624887 "
       "milliseconds before timing out.",
       std::nullopt, 0, 96120, "ALLREDUCE", std::nullopt, std::nullopt, 1800000, 25624887},
      // ~1.8: no SeqNum, TensorShape
      {"[E ProcessGroupNCCL.cpp:414] [Rank 3] Watchdog caught collective operation timeout: "
       "WorkNCCL(OpType=BROADCAST, TensorShape=[1024], Timeout(ms)=60000) ran for 60441 "
       "milliseconds before timing out.",
       std::nullopt, 3, std::nullopt, "BROADCAST", std::nullopt, std::nullopt, 60000, 60441},
      // >= 2.4 with a launcher prefix; global rank 7 is PG-local rank 3
      {"[80746] [rank7]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 3] Watchdog "
       "caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=_ALLGATHER_BASE, "
       "NumelIn=4096, NumelOut=32768, Timeout(ms)=1800000) ran for 1800012 milliseconds before "
       "timing out.",
       7, 3, 12, "_ALLGATHER_BASE", 4096, 32768, 1800000, 1800012},
  };
  for (const Case& c : cases) {
    const auto events = ParseWatchdogLog(c.line, "r.log");
    ASSERT_EQ(events.size(), 1u) << c.line;
    const WatchdogEvent& e = events[0];
    EXPECT_EQ(e.kind, WatchdogEventKind::kTimeout);
    EXPECT_EQ(e.global_rank, c.global_rank) << c.line;
    EXPECT_EQ(e.pg_rank, c.pg_rank) << c.line;
    EXPECT_EQ(e.seq, c.seq) << c.line;
    EXPECT_EQ(e.op_type, c.op) << c.line;
    EXPECT_EQ(e.numel_in, c.numel_in) << c.line;
    EXPECT_EQ(e.numel_out, c.numel_out) << c.line;
    EXPECT_EQ(e.timeout_ms, c.timeout_ms) << c.line;
    EXPECT_EQ(e.ran_for_ms, c.ran_for_ms) << c.line;
    EXPECT_EQ(e.file, "r.log");
    EXPECT_EQ(e.line, 1);
  }
}

TEST(WatchdogLog, WorkStatusBothOrderingsAndPrefixes) {
  struct Case {
    const char* line;
    std::string pg_id, pg_name, pg_desc;
    std::optional<int64_t> pg_rank, seq, enqueued, completed;
  };
  const Case cases[] = {
      {"[rank0]:[E1206 18:44:12.715588844 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception "
       "(either an error or timeout) detected by watchdog at work: 7753, last enqueued NCCL work: "
       "7755, last completed NCCL work: 7752.",
       "1", "", "", 0, 7753, 7755, 7752},
      {"[rank1]:[E810 03:04:11.063313477 ProcessGroupNCCL.cpp:2241] [PG ID 0 PG GUID "
       "0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 78 PG status: "
       "last enqueued work: 79, last completed work: 77",
       "0", "0", "default_pg", 1, 78, 79, 77},
      // completed before enqueued
      {"[PG ID 3 PG GUID 12(DATA_PARALLEL_GROUP) Rank 5] failure detected by watchdog at work "
       "sequence id: 12 PG status: last completed work: 11, last enqueued work: 12",
       "3", "12", "DATA_PARALLEL_GROUP", 5, 12, 12, 11},
  };
  for (const Case& c : cases) {
    const auto events = ParseWatchdogLog(c.line, "r.log");
    ASSERT_EQ(events.size(), 1u) << c.line;
    const WatchdogEvent& e = events[0];
    EXPECT_EQ(e.kind, WatchdogEventKind::kWorkStatus) << c.line;
    EXPECT_EQ(e.pg_id, c.pg_id) << c.line;
    EXPECT_EQ(e.pg_name, c.pg_name) << c.line;
    EXPECT_EQ(e.pg_desc, c.pg_desc) << c.line;
    EXPECT_EQ(e.pg_rank, c.pg_rank) << c.line;
    EXPECT_EQ(e.seq, c.seq) << c.line;
    EXPECT_EQ(e.last_enqueued, c.enqueued) << c.line;
    EXPECT_EQ(e.last_completed, c.completed) << c.line;
  }
}

TEST(WatchdogLog, DumpSignalNamesTheSignallingRankAndTheBehindRank) {
  // Reference case 3.3: rank 0 never enqueued SeqNum 78 (last enqueued 77) - it is behind.
  const auto events = ParseWatchdogLog(
      "[rank0]:[E810 03:04:11.562692551 ProcessGroupNCCL.cpp:1858] [PG ID 0 PG GUID "
      "0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 1 and "
      "we will try our best to dump the debug info. Last enqueued NCCL work: 77, last completed "
      "NCCL work: 77.This is most likely caused by incorrect usages",
      "r.log");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, WatchdogEventKind::kDumpSignal);
  EXPECT_EQ(events[0].global_rank, 0);
  EXPECT_EQ(events[0].from_rank, 1);
  EXPECT_EQ(events[0].last_enqueued, 77);
  EXPECT_EQ(events[0].last_completed, 77);
  EXPECT_EQ(events[0].timestamp, "E810 03:04:11.562692551");
}

TEST(WatchdogLog, ClassifiesTheOtherMessages) {
  struct Case {
    const char* line;
    WatchdogEventKind kind;
  };
  const Case cases[] = {
      {"[rank2]:[E810 03:05:11.1 ProcessGroupNCCL.cpp:758] [Rank 2] To avoid data inconsistency, "
       "we are taking the entire process down.",
       WatchdogEventKind::kTakingDown},
      {"[rank25]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 25] Heartbeat monitor timed out! "
       "Process will be terminated after dumping debug info. workMetaList_.size()=2",
       WatchdogEventKind::kHeartbeatTimeout},
      {"[rank17]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.19 GiB.",
       WatchdogEventKind::kOom},
      {"[rank17]:   File \"x.py\", line 2150, in destroy_process_group",
       WatchdogEventKind::kDestroy},
      {"h20-node04:9120:9120 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>",
       WatchdogEventKind::kCommInit},
      {"[INFO:swift] ddp_timeout=18000000, seed=42", WatchdogEventKind::kTimeoutSetting},
  };
  for (const Case& c : cases) {
    const auto events = ParseWatchdogLog(c.line, "r.log");
    ASSERT_EQ(events.size(), 1u) << c.line;
    EXPECT_EQ(events[0].kind, c.kind) << c.line;
  }
  // Lines it does not know are skipped, never an error.
  EXPECT_TRUE(ParseWatchdogLog("step 10 loss 2.3\n[rank0]: hello\n\n", "r.log").empty());
  EXPECT_TRUE(ParseWatchdogLog("[0, 1] started ALLREDUCE", "r.log").empty());  // no timeout before
}

TEST(WatchdogLog, EffectiveTimeoutPrefersWhatTheWatchdogUsed) {
  // ms-swift's ddp_timeout is in seconds: 18,000,000 s = 1.8e10 ms (incident 2).
  auto events = ParseWatchdogLog("ddp_timeout=18000000\n", "a.log");
  auto t = EffectiveCollectiveTimeout(events);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->timeout_ms, 18'000'000'000);
  EXPECT_EQ(t->source, "ddp_timeout=18000000 (s)");
  // Megatron: 10 minutes = 600,000 ms; a WorkNCCL's Timeout(ms)=1800000 wins over it.
  events = ParseWatchdogLog(
      "  distributed_timeout_minutes ..................... 10\n"
      "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BARRIER, "
      "Timeout(ms)=1800000) ran for 1800100 milliseconds before timing out.\n",
      "b.log");
  t = EffectiveCollectiveTimeout(events);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->timeout_ms, 1'800'000);
  EXPECT_EQ(t->line, 2);
  EXPECT_EQ(events[0].timeout_ms, 600'000);
  EXPECT_FALSE(EffectiveCollectiveTimeout({}).has_value());
}

TEST(WatchdogLog, HostileInputNeverCrashes) {
  // A 1 MB line of digits after a key, unbalanced brackets and a huge number.
  std::string huge = "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" +
                     std::string(1 << 20, '9');
  auto events = ParseWatchdogLog(huge, "h.log");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].seq.has_value());  // more than 18 digits: not a number we trust
  EXPECT_LE(events[0].text.size(), 1003u);
  events = ParseWatchdogLog("[rank99999999999999999999]:[E x.cpp:1] [PG ID", "h.log");
  EXPECT_TRUE(events.empty());
  // Every prefix of a real follow-on block parses without crashing; cut lines give partial events.
  const std::string block = testing::ReadTestFile("golden/watchdog/torch_2_6_followon/input.log");
  size_t total = 0;
  for (size_t n = 0; n <= block.size(); n += 7)
    total += ParseWatchdogLog(block.substr(0, n), "p.log").size();
  EXPECT_GT(total, 0u);
}

}  // namespace
}  // namespace strata::hang

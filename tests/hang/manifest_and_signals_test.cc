// The bundle manifest (strict reader), log signals and framework timeouts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "strata/hang/analysis/framework_timeouts.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/hang/collect/bundle.h"
#include "strata/hang/parsers/log_signals.h"

namespace strata::hang {
namespace {

TEST(Manifest, RoundTrips) {
  Manifest m;
  m.host = "h20-node03";
  m.time_utc = "2026-01-01T08:12:44Z";
  ProcessRecord p;
  p.pid = 3181122;
  p.rank = 17;
  p.local_rank = 1;
  p.world_size = 40;
  p.env["NCCL_SOCKET_IFNAME"] = "eth0";
  p.pyspy_file = "pyspy/rank17.txt";
  p.pyspy_timed_out = true;
  m.processes.push_back(p);
  m.logs.push_back({"logs/0-train.log", "/data/train.log", 17, 1000, true});
  auto back = ParseManifest(DumpJson(ManifestToJson(m)), "manifest.json");
  ASSERT_TRUE(back.ok()) << back.error().Format();
  EXPECT_EQ(back->host, "h20-node03");
  ASSERT_EQ(back->processes.size(), 1u);
  EXPECT_EQ(back->processes[0].rank, 17);
  EXPECT_TRUE(back->processes[0].pyspy_timed_out);
  EXPECT_EQ(back->processes[0].env.at("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_TRUE(back->logs[0].truncated);
}

TEST(Manifest, MalformedAndTruncatedInputIsAnErrorNamingTheField) {
  struct Case {
    const char* input;
    const char* expected;
  };
  const Case cases[] = {
      {"{\"schema_version\": 1, \"kind\": \"hang_bundle\", \"processes\": [{\"pid\": \"12\"}]}",
       "m.json: processes[0].pid: expected an integer, got string"},
      {"{\"schema_version\": 1, \"kind\": \"hang_bundle\", \"hots\": \"a\"}",
       "m.json: hots: unknown key 'hots'\n  hint: did you mean 'host'?"},
      {"{\"schema_version\": 1, \"kind\": \"verdict\"}",
       "m.json: kind: expected 'hang_bundle', got 'verdict'"},
      {"{\"schema_version\": 9, \"kind\": \"hang_bundle\"}",
       "m.json: schema_version: bundle schema_version 9 is not one this strata reads (<= 1)\n  "
       "hint: collect "
       "the bundle with the same strata version"},
      {"[1]", "m.json: a bundle manifest must be a JSON object"},
      {"{\"schema_version\": 1, \"kind\": \"hang_bundle\", \"logs\": [{\"rank\": 1}]}",
       "m.json: logs[0].file: missing: the log tail's path inside the bundle"},
  };
  for (const Case& c : cases) {
    auto r = ParseManifest(c.input, "m.json");
    ASSERT_FALSE(r.ok()) << c.input;
    EXPECT_EQ(r.error().Format(), c.expected);
  }
  const std::string good = DumpJson(ManifestToJson(Manifest{}));
  for (size_t n = 0; n + 1 < good.size(); ++n) {  // every truncation fails cleanly
    EXPECT_FALSE(ParseManifest(good.substr(0, n), "m.json").ok()) << n;
  }
}

TEST(LogSignals, Table) {
  const std::string log =
      "[rank17]: [ERROR:swift] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.25 "
      "GiB.\n"
      " [2026-01-01 03:01:00] iteration       12/    5000 | consumed samples: 960 |\n"
      "h20-node04:9120:9120 [0] NCCL INFO Bootstrap: Using docker0:172.17.0.1<0>\n"
      "h20-node01:21288:21288 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB "
      "eth0:10.10.0.11<0>\n"
      "[rank3]:   File \"/opt/x/fused_adam.py\", line 170, in step\n"
      "an ordinary line\n";
  const auto s = ScanLogSignals(log, "train.log");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].kind, LogSignalKind::kOom);
  EXPECT_EQ(s[0].global_rank, 17);
  EXPECT_EQ(s[0].line, 1);
  EXPECT_EQ(s[1].kind, LogSignalKind::kIteration);
  EXPECT_EQ(s[1].value, 12);
  EXPECT_EQ(s[2].detail, "docker0:172.17.0.1");
  EXPECT_EQ(s[2].host, "h20-node04");
  EXPECT_EQ(s[3].detail, "eth0:10.10.0.11");  // NET/IB: the OOB (bootstrap) interface
  EXPECT_EQ(s[4].kind, LogSignalKind::kTracebackFrame);
  EXPECT_EQ(s[4].detail, "step");
  EXPECT_EQ(s[4].frame_file, "/opt/x/fused_adam.py");
  EXPECT_EQ(s[4].global_rank, 3);
}

TEST(RankInFileName, Table) {
  EXPECT_EQ(RankInFileName("out/pyspy/rank17.txt"), 17);
  EXPECT_EQ(RankInFileName("trace_rank_3"), 3);
  EXPECT_EQ(RankInFileName("dir_rank9/node.txt"), std::nullopt);  // only the file name counts
  EXPECT_EQ(RankInFileName("dump.txt"), std::nullopt);
}

TEST(FrameworkTimeouts, TheDataFileLoadsAndMatchesTheReferenceCase) {
  auto table = LoadFrameworkTimeouts();
  ASSERT_TRUE(table.ok()) << table.error().Format();
  const std::string swift =
      "/usr/bin/python3 -u /opt/ms-swift/swift/cli/_megatron/sft.py --model x";
  const FrameworkTimeout* f = FindFramework(*table, swift);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->name, "ms-swift");
  EXPECT_NEAR(f->default_timeout.s(), 18000000.0, 1e-6);  // the seed case, incident 2
  EXPECT_FALSE(TimeoutFromCommandLine(*f, swift).has_value());
  auto flagged = TimeoutFromCommandLine(*f, swift + " --ddp_timeout 7200");
  ASSERT_TRUE(flagged.has_value());
  EXPECT_NEAR(flagged->s(), 7200.0, 1e-9);
  const FrameworkTimeout* megatron =
      FindFramework(*table, "python pretrain_gpt.py --distributed-timeout-minutes=30");
  ASSERT_NE(megatron, nullptr);
  auto minutes =
      TimeoutFromCommandLine(*megatron, "python pretrain_gpt.py --distributed-timeout-minutes=30");
  ASSERT_TRUE(minutes.has_value());
  EXPECT_NEAR(minutes->s(), 1800.0, 1e-9);  // 30 min x 60 s
  EXPECT_EQ(FindFramework(*table, "python my_loop.py")->name, "torch.distributed");  // the fallback
  // Not a timeout: beyond 1e9 s (it would overflow int64 milliseconds), infinite, not a number.
  EXPECT_FALSE(TimeoutFromCommandLine(*f, swift + " --ddp_timeout 1e300").has_value());
  EXPECT_FALSE(TimeoutFromCommandLine(*f, swift + " --ddp_timeout inf").has_value());
  EXPECT_FALSE(TimeoutFromCommandLine(*f, swift + " --ddp_timeout nan").has_value());
  EXPECT_FALSE(
      TimeoutFromCommandLine(*megatron, "pretrain_gpt.py --distributed-timeout-minutes=1e8"));
  EXPECT_NEAR(TimeoutFromCommandLine(*f, swift + " --ddp_timeout 18000000")->s(), 1.8e7, 1e-6);
}

}  // namespace
}  // namespace strata::hang

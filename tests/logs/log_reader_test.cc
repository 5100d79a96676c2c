// Reading files: chunk boundaries, a last line without newline, CRLF, overlong lines, and
// --follow on a file that grows while it is read (bounded: it stops after 1 s of silence).
#include "strata/logs/log_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>

namespace strata {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "strata_logs_" + std::to_string(::getpid()) + "_" + name;
}

void Append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
}

std::string Dict(int step, const char* loss = "1.0") {
  return "{'loss': " + std::string(loss) + ", 'grad_norm': 0.5, 'iteration': '" +
         std::to_string(step) + "/100', 'train_speed(s/it)': 0.01}";
}

TEST(ReadLogFile, LinesAcrossChunksAndAPartialLastLine) {
  const std::string path = TempPath("chunks.log");
  std::remove(path.c_str());
  // 3 MiB of noise puts the step lines across the 1 MiB read chunks; CRLF endings; no final
  // newline on the last line.
  std::string noise(1000, 'x');
  std::string text;
  int steps = 0;
  for (int i = 0; i < 3200; ++i) {
    text += noise + "\r\n";
    if (i % 400 == 0) text += Dict(++steps) + "\r\n";
  }
  text += Dict(++steps);
  Append(path, text);
  LogAnalyzer analyzer;
  auto stats = ReadLogFile(path, analyzer);
  ASSERT_TRUE(stats.ok());
  analyzer.Finish();
  EXPECT_TRUE(stats->ends_mid_line);
  EXPECT_EQ(stats->bytes, static_cast<int64_t>(text.size()));
  ASSERT_EQ(analyzer.Summary().ranks.size(), 1u);
  EXPECT_EQ(analyzer.Summary().ranks[0].records, steps);  // 8 + 1 = 9
  EXPECT_EQ(steps, 9);
  std::remove(path.c_str());
}

TEST(ReadLogFile, OverlongLineIsCut) {
  const std::string path = TempPath("long.log");
  std::remove(path.c_str());
  Append(path, std::string(kMaxLogLineBytes + 10, 'y') + "\n" + Dict(1) + "\n");
  LogAnalyzer analyzer;
  auto stats = ReadLogFile(path, analyzer);
  ASSERT_TRUE(stats.ok());
  analyzer.Finish();
  EXPECT_EQ(stats->long_lines, 1);
  EXPECT_EQ(analyzer.Summary().lines, 2);
  EXPECT_EQ(analyzer.Summary().ranks[0].records, 1);
  std::remove(path.c_str());
}

TEST(ReadLogFile, MissingFileNamesThePath) {
  LogAnalyzer analyzer;
  auto stats = ReadLogFile("/nonexistent/strata.log", analyzer);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.error().message.find("/nonexistent/strata.log"), std::string::npos);
}

TEST(FollowLogFile, ReportsWhatIsAppendedAndASilence) {
  const std::string path = TempPath("follow.log");
  std::remove(path.c_str());
  Append(path, Dict(1) + "\n" + Dict(2) + "\n" + Dict(3) + "\n" + Dict(4) + "\n");
  std::vector<Anomaly> seen;  // written by the follower thread only, read after join
  LogAnalyzer analyzer({nullptr, [&](const Anomaly& a) { seen.push_back(a); }});
  FollowOptions options;
  options.poll_s = 0.02;
  options.exit_after_idle_s = 1.0;
  options.hang_min_idle_s = 0.3;  // 3 x the 0.01 s median step is less: 0.3 s applies
  Result<ReadStats> result = ReadStats{};
  std::thread follower([&] { result = FollowLogFile(path, analyzer, options); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  Append(path, Dict(5, "nan") + "\n");
  // Half a line, then its end: one step, not two.
  Append(path, "{'loss': 1.0, 'grad_norm'");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Append(path, ": 0.5, 'iteration': '6/100', 'train_speed(s/it)': 0.01}\n");
  follower.join();
  ASSERT_TRUE(result.ok());
  analyzer.Finish();
  // Step 5's nan loss is found while following (its step is checked when step 6 arrives); the
  // silence after step 6 is a hang once it passes 0.3 s; the follow stops after 1 s.
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen[0].kind, AnomalyKind::kNanInf);
  EXPECT_EQ(seen[0].step, 5);
  EXPECT_EQ(seen[1].kind, AnomalyKind::kHang);
  EXPECT_EQ(seen[1].step, 6);
  EXPECT_EQ(analyzer.Summary().ranks[0].records, 6);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace strata

// Horovod timelines (horovod_timeline.h). No real timeline of a stalled job was found in public
// material, so these are minimal timelines written the way Horovod's writer writes them:
// horovod/common/timeline.cc of horovod/horovod at commit
// 06bbf7b416e9ec9ce72f70cc8ead0be6daed26d5 (TimelineWriter::WriteAtFileStart, DoWriteEvent:
// metadata lines end in "},\n", every event ends in "}]" and the next one overwrites the ']'
// with ','), and, for the pre-0.20 writer, every record ending in "},\n" with no closing ']'.
#include "strata/hang/parsers/horovod_timeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "strata/hang/analysis/analysis.h"
#include "strata/hang/assembly/evidence_set.h"
#include "support/golden.h"

namespace strata::hang {
namespace {

// One tensor's metadata, as DoWriteEvent writes it the first time it sees the tensor.
std::string Meta(int pid, const std::string& tensor) {
  return fmt::format(
      "{{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": {0}, \"args\": {{\"name\": "
      "\"{1}\"}}}},\n{{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": {0}, \"args\": "
      "{{\"sort_index\": {0}}}}},\n",
      pid, tensor);
}

std::string Ev(char ph, const std::string& name, long ts, int pid) {
  std::string out = fmt::format("{{\"ph\": \"{}\"", ph);
  if (ph != 'E') out += fmt::format(", \"name\": \"{}\"", name);
  out += fmt::format(", \"ts\": {}, \"pid\": {}", ts, pid);
  if (ph == 'X') out += ", \"dur\": 0";
  return out + "}";
}

// Three ranks. grad_a: negotiation begun at 100 us, ranks 0, 1 and 2 ready, closed at 130, the
// ALLREDUCE done by 200. grad_b: negotiation begun at 300 us, ranks 0 and 2 ready, never closed.
// Every rank is {0, 1, 2} (grad_a's closed negotiation); grad_b lacks rank 1: rank 1 is the one.
// `joiner` is what separates events: "," for the 0.20+ writer, ",\n" for the older one.
std::string Timeline(const std::string& joiner, bool close) {
  std::string t =
      "[\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": "
      "{\"start_time_since_epoch_in_micros\":1600000000000000}},\n"
      "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"sort_index\": "
      "0}},\n";
  t += Meta(1, "grad_a");
  const std::vector<std::string> a = {Ev('B', "NEGOTIATE_ALLREDUCE", 100, 1),
                                      Ev('X', "0", 110, 1),
                                      Ev('X', "1", 120, 1),
                                      Ev('X', "2", 130, 1),
                                      Ev('E', "", 130, 1),
                                      Ev('B', "ALLREDUCE", 131, 1),
                                      Ev('B', "NCCL_ALLREDUCE", 140, 1),
                                      Ev('E', "", 190, 1),
                                      Ev('E', "", 200, 1)};
  for (const std::string& e : a) t += e + joiner;
  t += Meta(2, "grad_b");
  t += Ev('B', "NEGOTIATE_ALLREDUCE", 300, 2) + joiner + Ev('X', "0", 310, 2) + joiner +
       Ev('X', "2", 320, 2);
  return t + (close ? "]" : joiner);
}

TEST(HorovodTimeline, AnOpenNegotiationNamesTheRankThatNeverBecameReady) {
  for (const std::string& joiner : {std::string(","), std::string(",\n")}) {
    for (bool close : {true, false}) {
      SCOPED_TRACE(joiner + (close ? " closed" : " unclosed"));
      auto t = ParseHorovodTimeline(Timeline(joiner, close), "timeline.json");
      ASSERT_TRUE(t.ok()) << t.error().message;
      EXPECT_EQ(t->truncated, !close);
      EXPECT_EQ(t->ranks, (std::set<int64_t>{0, 1, 2}));
      ASSERT_EQ(t->open.size(), 1u);
      EXPECT_EQ(t->open[0].tensor, "grad_b");
      EXPECT_EQ(t->open[0].op, "ALLREDUCE");
      EXPECT_EQ(t->open[0].ready, (std::set<int64_t>{0, 2}));
      EXPECT_TRUE(t->open_ops.empty());  // grad_a's ALLREDUCE ended
      EvidenceSet set;
      AddEvidenceFile(set, Timeline(joiner, close), "timeline.json");
      ASSERT_EQ(set.timelines.size(), 1u)
          << (set.unreadable.empty() ? "" : set.unreadable[0].reason);
      const Verdict v = Analyze(set, {});
      EXPECT_TRUE(v.hang);
      EXPECT_EQ(v.finding.kind, "lagging_rank");
      EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{1});
      EXPECT_EQ(v.finding.op, "ALLREDUCE");
    }
  }
}

// A killed job can stop mid-object: everything up to the last whole event is read. Cut inside
// rank 2's mark of grad_b, only rank 0 is ready there: ranks 1 and 2 are missing.
TEST(HorovodTimeline, AFileCutMidEventReadsUpToTheLastWholeOne) {
  const std::string full = Timeline(",", false);
  const std::string cut = full.substr(0, full.rfind("\"name\": \"2\""));
  auto t = ParseHorovodTimeline(cut, "timeline.json");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->truncated);
  ASSERT_EQ(t->open.size(), 1u);
  EXPECT_EQ(t->open[0].ready, std::set<int64_t>{0});
  // No negotiation closed: only ranks below the highest ready one are known. Ready {0, 2} in
  // grad_b alone: rank 1 is missing.
  const std::string only_b = "[\n" + Meta(1, "grad_b") + Ev('B', "NEGOTIATE_BROADCAST", 5, 1) +
                             "," + Ev('X', "2", 6, 1) + "," + Ev('X', "0", 7, 1) + "]";
  EvidenceSet set;
  AddEvidenceFile(set, only_b, "timeline.json");
  const Verdict v = Analyze(set, {});
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{1});
  EXPECT_EQ(v.finding.op, "BROADCAST");
}

// Bad input: the error names the file and the line of the bad event.
TEST(HorovodTimeline, MalformedEventsAreErrorsWithFileAndLine) {
  const std::string head = "[\n" + Meta(1, "grad_a");  // lines 1-3
  auto bad =
      ParseHorovodTimeline(head + "{\"ph\": \"B\", \"name\": }\n" + Ev('E', "", 1, 1), "tl.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().file, "tl.json");
  EXPECT_EQ(bad.error().line, 4);
  auto no_ph = ParseHorovodTimeline(head + "{\"name\": \"x\", \"ts\": 1}]", "tl.json");
  ASSERT_FALSE(no_ph.ok());
  EXPECT_EQ(no_ph.error().line, 4);
  EXPECT_NE(no_ph.error().message.find("\"ph\""), std::string::npos);
  auto junk = ParseHorovodTimeline(head + "garbage", "tl.json");
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.error().line, 4);
  EXPECT_FALSE(ParseHorovodTimeline("{\"traceEvents\": []}", "tl.json").ok());
  // A Chrome trace of something else: no tensors, no negotiations.
  auto other = ParseHorovodTimeline("[{\"ph\": \"X\", \"name\": \"conv\", \"ts\": 1, \"pid\": 7}]",
                                    "tl.json");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("not a Horovod timeline"), std::string::npos);
  // Hostile nesting never closes: read as a cut-off file holding no event, so no Horovod tensor.
  EXPECT_FALSE(ParseHorovodTimeline("[" + std::string(5000, '{'), "tl.json").ok());
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("strata-horovod-timeline-{}", getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// End to end: a stall is exit 1; every negotiation closed is read but no verdict (exit 3), never
// "all clear"; a malformed timeline is bad input (exit 2) naming the file and line.
TEST(HorovodTimeline, CliExitCodes) {
  const auto stall = testing::RunCli({"hang", WriteTemp("stall.json", Timeline(",", true))});
  EXPECT_EQ(stall.exit_code, 1) << stall.err;
  EXPECT_NE(stall.out.find("grad_b"), std::string::npos) << stall.out;
  std::string closed = Timeline(",", true);
  closed = closed.substr(0, closed.find(Meta(2, "grad_b"))) + "]";
  closed.replace(closed.rfind(",]"), 2, "]");
  const auto done = testing::RunCli({"hang", WriteTemp("done.json", closed)});
  EXPECT_EQ(done.exit_code, 3) << done.out << done.err;
  const auto bad = testing::RunCli(
      {"hang", WriteTemp("bad.json", "[\n" + Meta(1, "g") + "{\"ph\": \"B\" \"x\"}]")});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("bad.json"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("line 4"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace strata::hang

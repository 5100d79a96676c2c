#include "strata/hang/parsers/flight_recorder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/golden.h"

namespace strata::hang {
namespace {

// Each tests/golden/flight_recorder/<case>/ holds one input.* file (its name carries the rank,
// as torch's <prefix><rank> names do) and expected.json: the canonical dump or the error text.
// make_fixtures.py in that directory documents how every input was made.
TEST(FlightRecorderGolden, AllCases) {
  const auto cases = testing::GoldenCases("golden/flight_recorder");
  ASSERT_GE(cases.size(), 30u);
  for (const std::string& name : cases) {
    SCOPED_TRACE(name);
    std::string input;
    for (const auto& f :
         std::filesystem::directory_iterator(testing::TestPath("golden/flight_recorder/" + name))) {
      if (f.path().filename().string().starts_with("input")) input = f.path().filename().string();
    }
    ASSERT_FALSE(input.empty());
    const std::string relative = "golden/flight_recorder/" + name + "/" + input;
    const auto dump = ParseFlightRecorder(testing::ReadTestFile(relative), relative);
    Json out;
    if (dump.ok()) {
      out = ToJson(*dump);
    } else {
      out["error"] = dump.error().Format();
    }
    EXPECT_TRUE(
        testing::MatchesGolden("golden/flight_recorder/" + name + "/expected.json", DumpJson(out)));
    // Every hostile or broken case must be refused, never half-read.
    const bool expect_error = name.starts_with("error_") || name.starts_with("hostile_");
    EXPECT_EQ(!dump.ok(), expect_error);
  }
}

// Values read off the reference case's FR-PKL-1 listing (hang-evidence section 2.7), not from
// our own output: the decoded content is printed there field by field.
TEST(FlightRecorder, ReferencePickleFields) {
  const std::string relative =
      "golden/flight_recorder/pkl_2_10_torch_reference/input.nccl_trace_rank_0";
  const auto dump = ParseFlightRecorder(testing::ReadTestFile(relative), relative);
  ASSERT_TRUE(dump.ok()) << dump.error().Format();
  EXPECT_EQ(dump->version, "2.10");
  EXPECT_EQ(dump->rank, 0);  // the file name's trailing integer
  EXPECT_EQ(dump->comm_lib_version, "2.27.5");
  ASSERT_EQ(dump->pg_config.count("0"), 1u);
  EXPECT_EQ(dump->pg_config.at("0").desc, "default_pg");
  EXPECT_EQ(dump->pg_config.at("0").ranks, (std::vector<int64_t>{0, 1}));  // "[0, 1]"
  const FrPgStatus& status = dump->pg_status.at("0");
  EXPECT_EQ(status.last_enqueued, 2);
  EXPECT_EQ(status.last_started, -1);  // BININT ff ff ff ff
  EXPECT_EQ(status.last_completed, 1);
  ASSERT_EQ(dump->entries.size(), 2u);
  const FrEntry& hung = dump->entries[1];
  EXPECT_EQ(hung.record_id, 1);
  EXPECT_EQ(hung.collective_seq_id, 2);
  EXPECT_EQ(hung.pg_name, "0");           // TUPLE2 of BINGET 3 ...
  EXPECT_EQ(hung.pg_desc, "default_pg");  // ... and BINGET 6
  EXPECT_EQ(hung.op, "all_reduce");
  EXPECT_EQ(hung.state, "scheduled");
  EXPECT_FALSE(hung.retired);
  EXPECT_EQ(hung.timeout_ms, 600000);
  EXPECT_EQ(hung.time_created_ns, 1767225600124456789);  // LONG1, 8 bytes
  EXPECT_EQ(hung.input_sizes, (std::vector<std::vector<int64_t>>{{4096, 1024}}));
  // The second entry's frames are BINGETs of the first entry's memoized frame dicts.
  ASSERT_EQ(hung.frames.size(), 3u);
  EXPECT_EQ(hung.frames[0].function, "all_reduce");
  EXPECT_EQ(hung.frames[0].line, 2806);
  EXPECT_EQ(hung.frames[2].file, "/workspace/train.py");
  EXPECT_EQ(hung.frames[2].line, 120);
  EXPECT_EQ(dump->entries[0].state, "completed");
  EXPECT_TRUE(dump->entries[0].retired);
}

TEST(FlightRecorder, RankFromFileName) {
  struct Case {
    const char* name;
    std::optional<int64_t> rank;
  };
  const Case cases[] = {
      {"nccl_trace_rank_0", 0},
      {"/tmp/trace_39", 39},
      {"nccl_trace_rank_container-node02_5", 5},  // hostname in the prefix (pytorch #140879)
      {"comm_lib_trace_rank_17.pkl", 17},
      {"rank_3.json", 3},
      {"trace", std::nullopt},
      {"trace_7/", std::nullopt},
      {"trace_1234567890123456789", std::nullopt},  // 19 digits: not a rank, never an overflow
      {"", std::nullopt},
  };
  for (const Case& c : cases) EXPECT_EQ(RankFromFileName(c.name), c.rank) << c.name;
}

TEST(FlightRecorder, ErrorsNameFileAndWhatWasExpected) {
  struct Case {
    const char* name;
    std::string bytes;
    const char* error;
  };
  const Case cases[] = {
      {"empty", "",
       "t_0: the file is empty, expected a Flight Recorder dump (a pickle or JSON); "
       "torch writes empty or tiny dumps when the dump was interrupted"},
      {"text", "hello",
       "t_0: byte 0: found 0x68, expected a Flight Recorder dump: a pickle "
       "(first byte 0x80) or JSON (first character '{')"},
      {"json version", R"({"version": "2.2"})",
       "t_0: version: Flight Recorder format version '2.2' is not supported, expected 2.3 to "
       "2.10\n  hint: is this file a PyTorch Flight Recorder dump?"},
      {"json entry field", R"({"version": "2.8", "entries": [{"record_id": 1}]})",
       "t_0: entries[0].pg_id: missing required field"},
      {"json status",
       R"({"version": "2.8", "pg_status": {"0": {"last_enqueued_collective": "x"}}})",
       "t_0: pg_status.0.last_enqueued_collective: expected an integer, got \"x\""},
  };
  for (const Case& c : cases) {
    const auto dump = ParseFlightRecorder(c.bytes, "t_0");
    ASSERT_FALSE(dump.ok()) << c.name;
    EXPECT_EQ(dump.error().Format(), c.error) << c.name;
  }
}

// Every prefix of a real-shaped dump and thousands of corrupted copies: each must come back as a
// dump or an error, never a crash, a hang or an exception (ASan/UBSan runs check the rest).
TEST(FlightRecorder, TruncatedAndCorruptedCopiesNeverCrash) {
  const std::string relative =
      "golden/flight_recorder/pkl_2_10_torch_reference/input.nccl_trace_rank_0";
  const std::string good = testing::ReadTestFile(relative);
  ASSERT_EQ(good.size(), 1317u);  // the reference case gives the file's size
  for (size_t n = 0; n < good.size(); ++n) {
    // The last byte is STOP, so every strict prefix is truncated and must be refused.
    EXPECT_FALSE(ParseFlightRecorder(good.substr(0, n), "t_0").ok()) << n;
  }
  uint32_t state = 12345;  // a fixed linear congruential sequence: the same cases every run
  const auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int f = 0; f < flips; ++f) {
      bad[next() % bad.size()] = static_cast<char>(next() & 0xff);
    }
    if (!ParseFlightRecorder(bad, "t_0").ok()) ++refused;
  }
  // Most random byte changes break the structure; some only change a value and still parse.
  EXPECT_GT(refused, 1000);
}

TEST(FlightRecorder, JsonRankInContentWinsOverFileName) {
  const auto dump = ParseFlightRecorder(R"({"version": "2.10", "rank": 12})", "trace_3");
  ASSERT_TRUE(dump.ok());
  EXPECT_EQ(dump->rank, 12);
}

}  // namespace
}  // namespace strata::hang

// py-spy dump parser: golden cases (tests/golden/pyspy/<case>/input.{txt,json} -> expected.json),
// the full error text for malformed input, and robustness (every truncation, hostile bytes).
#include "strata/hang/parsers/pyspy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "strata/core/json_output.h"
#include "support/golden.h"

namespace strata::hang {
namespace {

Json DumpsToJson(const std::vector<PySpyDump>& dumps) {
  Json j = JsonDocument("pyspy_dumps");
  Json list = Json::array();
  for (const PySpyDump& d : dumps) {
    Json e;
    e["pid"] = d.pid;
    e["python_version"] = d.python_version;
    e["program"] = d.program;
    e["error"] = d.error;
    e["truncated"] = d.truncated;
    const PyThread* main = MainThread(d);
    e["main_thread_id"] = main ? Json(main->thread_id) : Json(nullptr);
    Json threads = Json::array();
    for (const PyThread& t : d.threads) {
      Json tj;
      tj["thread_id"] = t.thread_id;
      tj["name"] = t.name;
      tj["idle"] = t.idle;
      tj["gil"] = t.gil;
      Json frames = Json::array();
      for (const PyFrame& f : t.frames) {
        Json fj = {
            {"function", f.function}, {"file", f.file}, {"line", f.line}, {"native", f.native}};
        if (!f.locals.empty()) {
          Json locals = Json::array();
          for (const auto& [name, repr] : f.locals) locals.push_back({name, repr});
          fj["locals"] = std::move(locals);
        }
        frames.push_back(std::move(fj));
      }
      tj["frames"] = std::move(frames);
      threads.push_back(std::move(tj));
    }
    e["threads"] = std::move(threads);
    list.push_back(std::move(e));
  }
  j["dumps"] = std::move(list);
  return j;
}

std::string InputOf(const std::string& c) {
  const std::string base = "golden/pyspy/" + c + "/input.";
  return std::filesystem::exists(testing::TestPath(base + "json")) ? base + "json" : base + "txt";
}

TEST(PySpyGolden, EveryCaseMatchesItsExpectedJson) {
  const auto cases = testing::GoldenCases("golden/pyspy");
  ASSERT_GE(cases.size(), 16u);
  for (const std::string& c : cases) {
    SCOPED_TRACE(c);
    const std::string input = InputOf(c);
    auto dumps = ParsePySpy(testing::ReadTestFile(input), input);
    ASSERT_TRUE(dumps.ok()) << dumps.error().Format();
    EXPECT_TRUE(testing::MatchesGolden("golden/pyspy/" + c + "/expected.json",
                                       DumpJson(DumpsToJson(*dumps))));
  }
}

// Hand-checked facts about the goldens, so a wrong golden cannot be blessed by UPDATE_GOLDEN.
TEST(PySpyGolden, KeyFactsReadFromTheReferenceSamples) {
  auto live = ParsePySpy(testing::ReadTestFile("golden/pyspy/live-rank/input.txt"), "live");
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].pid, 3179904);
  EXPECT_EQ((*live)[0].python_version, "3.10.12");
  ASSERT_EQ((*live)[0].threads.size(), 2u);
  // 19 frame lines under MainThread in the sample (section 1.9, PS-1), counted by hand.
  EXPECT_EQ((*live)[0].threads[0].frames.size(), 19u);
  EXPECT_EQ((*live)[0].threads[0].frames[0].function, "preprocess");
  EXPECT_EQ((*live)[0].threads[0].frames[0].line, 612);
  EXPECT_TRUE((*live)[0].threads[1].idle);
  EXPECT_EQ(MainThread((*live)[0])->thread_id, 3179904u);

  // JSON lists threads newest first; the parser puts MainThread (printed second) first, like text.
  auto json = ParsePySpy(testing::ReadTestFile("golden/pyspy/json-v042/input.json"), "json");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ((*json)[0].threads[0].name, "MainThread");
  EXPECT_EQ((*json)[0].threads[0].thread_id, 3179904u);  // os_thread_id, as text mode prints

  auto native = ParsePySpy(testing::ReadTestFile("golden/pyspy/native-comm-init/input.txt"), "n");
  ASSERT_TRUE(native.ok());
  const auto& f = (*native)[0].threads[0].frames;
  EXPECT_TRUE(f[3].native);
  EXPECT_EQ(f[3].function, "ncclCommInitRankConfig");
  EXPECT_EQ(f[3].file, "libnccl.so.2");
  EXPECT_EQ(f[3].line, 0);
  EXPECT_FALSE(f[10].native);  // all_reduce (torch/distributed/distributed_c10d.py:2806)

  auto hex = ParsePySpy(testing::ReadTestFile("golden/pyspy/hex-thread-core/input.txt"), "h");
  ASSERT_TRUE(hex.ok());
  EXPECT_EQ((*hex)[0].threads[0].thread_id, 0x7F3A1B2C3740u);
  EXPECT_TRUE((*hex)[0].threads[0].gil);
}

struct ErrorCase {
  const char* name;
  const char* input;
  const char* expected_error;
};

TEST(PySpyErrors, MalformedInputNamesFileLineAndExpectation) {
  const ErrorCase cases[] = {
      {"empty", "",
       "dump.txt: empty py-spy dump: no 'Process', 'Thread' or error line found\n"
       "  hint: was py-spy run with 'dump --pid <PID>'? an empty file usually means it was killed "
       "by "
       "the collection timeout"},
      {"frame with no location", "Thread 12 (active): \"MainThread\"\n    all_reduce\n",
       "dump.txt:2: not a py-spy dump line: '    all_reduce'; expected 'Process <pid>: ...', "
       "'Thread <tid> (<status>): \"<name>\"', a 4-space frame 'func (file:line)', or a py-spy "
       "error"},
      {"bad status", "Thread 12 (sleeping): \"MainThread\"\n",
       "dump.txt:1: not a py-spy dump line: 'Thread 12 (sleeping): \"MainThread\"'; expected "
       "'Process "
       "<pid>: ...', 'Thread <tid> (<status>): \"<name>\"', a 4-space frame 'func (file:line)', or "
       "a "
       "py-spy error"},
      {"pid not a number", "Process abc: python\n",
       "dump.txt:1: not a py-spy dump line: 'Process abc: python'; expected 'Process <pid>: ...', "
       "'Thread <tid> (<status>): \"<name>\"', a 4-space frame 'func (file:line)', or a py-spy "
       "error"},
      {"thread id overflows", "Thread 99999999999999999999999 (idle)\n",
       "dump.txt:1: not a py-spy dump line: 'Thread 99999999999999999999999 (idle)'; expected "
       "'Process "
       "<pid>: ...', 'Thread <tid> (<status>): \"<name>\"', a 4-space frame 'func (file:line)', or "
       "a "
       "py-spy error"},
      {"a log, not a dump", "[rank0]: loss 1.2\n",
       "dump.txt:1: not a py-spy dump line: '[rank0]: loss 1.2'; expected 'Process <pid>: ...', "
       "'Thread <tid> (<status>): \"<name>\"', a 4-space frame 'func (file:line)', or a py-spy "
       "error"},
      {"json truncated", "[{\"pid\": 1, \"frames\": [",
       "dump.json:1: malformed py-spy JSON (truncated?): [json.exception.parse_error.101] parse "
       "error "
       "at line 1, column 24: syntax error while parsing value - unexpected end of input; expected "
       "'[', '{', or a literal"},
      {"json wrong type", "[{\"pid\": \"one\"}]",
       "dump.json: [0].pid: expected an integer, got string '\"one\"'"},
      {"json not an array of traces", "[{}, 1]",
       "dump.json: [1]: expected an object (one thread), got number '1'"},
      {"json line is text", "[{\"pid\": 1, \"frames\": [{\"name\": \"f\", \"line\": \"12\"}]}]",
       "dump.json: [0].frames[0].line: expected an integer, got string '\"12\"'"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string file = std::string(c.input).rfind("[{", 0) == 0 ? "dump.json" : "dump.txt";
    auto result = ParsePySpy(c.input, file);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().Format(), c.expected_error);
  }
}

TEST(PySpyErrors, DeeplyNestedJsonIsRefusedBeforeParsing) {
  const std::string hostile = std::string(100000, '[') + std::string(100000, ']');
  auto result = ParsePySpy(hostile, "deep.json");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().Format(),
            "deep.json: py-spy JSON nests deeper than 32 levels; py-spy writes 4");
}

TEST(PySpyRobustness, EveryTruncationOfEverySampleParsesOrFailsCleanly) {
  for (const std::string& c : testing::GoldenCases("golden/pyspy")) {
    const std::string text = testing::ReadTestFile(InputOf(c));
    size_t ok = 0;
    for (size_t n = 0; n <= text.size(); ++n) {
      auto result = ParsePySpy(std::string_view(text).substr(0, n), c);
      if (result.ok()) ++ok;
    }
    // The full text parses, so at least one prefix does: the loop really ran the parser.
    EXPECT_GE(ok, 1u) << c;
  }
}

TEST(PySpyRobustness, CutMidFrameIsMarkedTruncatedNotAnError) {
  auto result = ParsePySpy(testing::ReadTestFile("golden/pyspy/truncated-mid-line/input.txt"), "t");
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE((*result)[0].truncated);
  ASSERT_EQ((*result)[0].threads[0].frames.size(), 1u);  // only the complete frame line
}

TEST(PySpyRobustness, HostileBytesNeverCrash) {
  // A deterministic byte soup: NULs, high bytes, lone escapes, huge numbers.
  std::string soup = "Process 1: x\nThread 1 (idle)\n";
  uint32_t state = 12345;
  for (int i = 0; i < 20000; ++i) {
    state = state * 1103515245u + 12345u;
    soup.push_back(static_cast<char>((state >> 16) & 0xFF));
  }
  auto result = ParsePySpy(soup, "soup");
  EXPECT_FALSE(result.ok());  // byte soup is not a dump, and says so
  auto ansi_only = ParsePySpy("\x1b[\x1b[1;\n", "ansi");
  EXPECT_FALSE(ansi_only.ok());
}

}  // namespace
}  // namespace strata::hang

// `strata hang` end to end on the fixture bundles in tests/golden/hang/<case>/input (written by
// `strata hang --synth`, see tests/golden/hang/README.md): text and JSON verdicts are goldens,
// and the facts each verdict must contain are asserted independently below.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "support/golden.h"

namespace strata::hang::hang_cli_test {
namespace {

using testing::RunCli;
using testing::TestPath;

// Output names the input paths; the fixtures' absolute location is replaced so goldens are stable.
std::string Normalise(std::string text) {
  const std::string root = TestPath("");
  for (size_t at = text.find(root); at != std::string::npos; at = text.find(root, at)) {
    text.replace(at, root.size(), "tests/");
  }
  return text;
}

int ExpectedExit(const std::string& c) {
  return c == "clean" ? 0 : 1;  // 0: no hang found; 1: a hang (or problem) found
}

TEST(HangCliGolden, EveryFixtureCaseTextAndJson) {
  const auto cases = testing::GoldenCases("golden/hang");
  ASSERT_GE(cases.size(), 8u);
  for (const std::string& c : cases) {
    SCOPED_TRACE(c);
    const std::string input = TestPath("golden/hang/" + c + "/input");
    const auto text = RunCli({"hang", input});
    EXPECT_EQ(text.exit_code, ExpectedExit(c)) << text.err;
    EXPECT_TRUE(testing::MatchesGolden("golden/hang/" + c + "/expected.txt", Normalise(text.out)));
    EXPECT_TRUE(
        testing::MatchesGolden("golden/hang/" + c + "/expected.stderr", Normalise(text.err)));
    const auto json = RunCli({"hang", "--json", input});
    EXPECT_EQ(json.exit_code, ExpectedExit(c));
    EXPECT_TRUE(testing::MatchesGolden("golden/hang/" + c + "/expected.json", Normalise(json.out)));
  }
}

nlohmann::json Verdict(const std::string& c) {
  const auto r = RunCli({"hang", "--json", TestPath("golden/hang/" + c + "/input")});
  return nlohmann::json::parse(r.out);
}

// The reference incident (seed case incidents 1 and 5): 40 ranks on 5 nodes, rank 17 OOMed at
// its first optimizer step and sits in destroy_process_group; the other 39 wait in the
// data-parallel all-reduce. Facts from the fixture's construction, not from the tool.
TEST(HangCliVerdicts, ReferenceIncidentNamesRank17ThePhaseAndThe39Waiters) {
  const auto v = Verdict("reference-oom-teardown");
  EXPECT_EQ(v["schema_version"], 1);
  EXPECT_EQ(v["hang"], true);
  EXPECT_EQ(v["culprit"]["ranks"]["ranges"], "17");
  EXPECT_EQ(v["culprit"]["phase"], "first optimizer step");
  EXPECT_EQ(v["culprit"]["host"], "h20-node03 (LOCAL_RANK 1, GPU 1)");  // rank 17 = node 2*8 + 1
  ASSERT_EQ(v["stack_groups"].size(), 2u);
  EXPECT_EQ(v["stack_groups"][0]["ranks"]["count"], 39);
  EXPECT_EQ(v["stack_groups"][0]["ranks"]["ranges"], "0-16,18-39");
  EXPECT_EQ(v["stack_groups"][0]["op"], "all_reduce");
  EXPECT_EQ(v["stack_groups"][1]["op"], "destroy_process_group");
  EXPECT_EQ(v["patterns"][0]["id"], "oom_first_optimizer_step");
  EXPECT_EQ(v["patterns"][1]["id"], "stuck_in_teardown");
  // Incident 2: ms-swift's default ddp_timeout, 18,000,000 s, from
  // data/hang/framework_timeouts.yaml.
  EXPECT_EQ(v["timeout"]["effective_timeout_s"], 18000000);
  EXPECT_EQ(v["timeout"]["framework"], "ms-swift");
}

TEST(HangCliVerdicts, EachPatternIsNamed) {
  struct Case {
    const char* name;
    const char* pattern;  // the first pattern the verdict must list
    const char* culprit;  // rank ranges, or "" when no single culprit exists
  };
  const Case cases[] = {
      {"wrong-nic", "inconsistent_nccl_env", "16-23"},  // node03 (ranks 16-23) has docker0
      {"mismatch", "mismatched_collectives", "7"},      // rank 7 all-gathers, the rest all-reduce
      {"p2p-deadlock", "pipeline_p2p_deadlock", ""},  // both stages in recv: nobody to blame alone
      {"dead-rank", "oom_first_optimizer_step", "17"},     // py-spy: rank 17's process is gone
      {"missing-node", "dead_or_missing_ranks", "16-23"},  // node03's bundle never came back
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto v = Verdict(c.name);
    EXPECT_EQ(v["hang"], true);
    ASSERT_FALSE(v["patterns"].empty());
    EXPECT_EQ(v["patterns"][0]["id"], c.pattern);
    if (*c.culprit) {
      EXPECT_EQ(v["culprit"]["ranks"]["ranges"], c.culprit);
    } else {
      EXPECT_TRUE(v["culprit"].is_null());
    }
  }
  const auto wrong_nic = Verdict("wrong-nic");
  EXPECT_EQ(wrong_nic["timeout"]["watchdog_applies"], false);  // no WorkNCCL during comm init
  // The chain quotes the interface setting first (node03 was built with docker0), not NCCL_DEBUG.
  ASSERT_GE(wrong_nic["culprit"]["evidence"].size(), 2u);
  EXPECT_EQ(wrong_nic["culprit"]["evidence"][1].get<std::string>().rfind(
                "  NCCL_SOCKET_IFNAME=docker0 on ranks 16-23", 0),
            0u)
      << wrong_nic["culprit"]["evidence"][1];
  const auto dead = Verdict("dead-rank");
  EXPECT_EQ(dead["ranks"]["dead"]["ranges"], "17");
  const auto clean = Verdict("clean");
  EXPECT_EQ(clean["hang"], false);
  EXPECT_TRUE(clean["patterns"].empty());
}

// One node's eight flight-recorder dumps of the reference incident (ranks 0-7 of 40): each waits
// at #1843 of the data-parallel group, whose other 32 members left no dump. The headline said
// the group is stalled (exit 1) while the finding said "healthy: no problem found in the
// evidence", which a script reading finding.kind takes for a healthy job. The finding is now the
// stall, with the ranks that wait and those not collected, and no culprit.
TEST(HangCliVerdicts, OneNodesDumpsOfAStallAreNotHealthy) {
  std::vector<std::string> args = {"hang", "--json"};
  const std::filesystem::path fr =
      TestPath("golden/hang/reference-oom-teardown/input/h20-node01/fr");
  for (const auto& entry : std::filesystem::directory_iterator(fr))
    args.push_back(entry.path().string());
  ASSERT_EQ(args.size(), 10u);
  const auto r = RunCli(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto v = nlohmann::json::parse(r.out);
  EXPECT_EQ(v["hang"], true);
  EXPECT_EQ(v["finding"]["kind"], "collective_timeout");
  EXPECT_EQ(v["finding"]["seq"], 1843);
  EXPECT_NE(v["finding"]["summary"].get<std::string>().find(
                "ranks 0-7 wait in it and ranks 8-39 left no evidence"),
            std::string::npos)
      << v["finding"]["summary"];
  EXPECT_TRUE(v["culprit"].is_null());
}

TEST(HangCliVerdicts, UnreadableFilesAreReportedWithTheReasonAndSkipped) {
  const auto v = Verdict("unreadable-files");
  std::map<std::string, std::string> reasons;
  for (const auto& u : v["unreadable_files"]) {
    const std::string file = u["file"];
    reasons[file.substr(file.rfind('/') + 1)] = u["reason"];
  }
  // One entry per bad file in the fixture, each saying why.
  EXPECT_EQ(reasons.size(), 6u);
  EXPECT_NE(reasons["rank3.txt"].find("not a py-spy dump line"), std::string::npos);
  EXPECT_NE(reasons["rank9.json"].find("malformed py-spy JSON"), std::string::npos);
  EXPECT_NE(reasons["core.bin"].find("binary file"), std::string::npos);
  EXPECT_NE(reasons["manifest-copy.json"].find("pass the bundle's directory"), std::string::npos);
  EXPECT_NE(reasons["manifest.json"].find("unknown key 'hots'"), std::string::npos);
  EXPECT_FALSE(reasons["nccl_trace_rank_3"].empty());
  // The three good dumps were still analysed.
  EXPECT_EQ(v["ranks"]["seen"]["ranges"], "0-2");
}

TEST(HangCli, PipesDevicesAndLinkLoopsAreReportedNeverReadOrFollowed) {
  // A FIFO would block a reader forever; a link to its own parent would recurse forever.
  const std::string dir = ::testing::TempDir() + "strata-hang-adversarial";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/loop");
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  std::filesystem::create_directory_symlink("..", dir + "/loop/up");
  const auto r = RunCli({"hang", "--json", dir, "/dev/null"});
  std::filesystem::remove_all(dir);
  ASSERT_EQ(r.exit_code, 2) << r.err;  // nothing readable is bad input, and no hang of our own
  const auto v = nlohmann::json::parse(r.out);
  ASSERT_EQ(v["unreadable_files"].size(), 3u);
  EXPECT_EQ(v["unreadable_files"][0]["reason"], "not a regular file (a pipe or device?)");
  EXPECT_EQ(v["unreadable_files"][1]["reason"],
            "a link to a directory: not followed (pass it directly)");
  EXPECT_EQ(v["unreadable_files"][2]["file"], "/dev/null");
  EXPECT_EQ(v["headline"], "no verdict: no readable evidence of any rank");
}

// An empty directory is no input (2); a log that was read but held nothing usable is no verdict
// (3, documented in --help): neither is ever "no hang".
TEST(HangCli, AnEmptyBundleIsExitTwoAndALogWithNothingRecognisedIsExitThreeNeverNoHang) {
  const std::string dir = ::testing::TempDir() + "strata-hang-empty";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/empty-bundle");
  const auto empty = RunCli({"hang", dir + "/empty-bundle"});
  EXPECT_EQ(empty.exit_code, 2) << empty.out;
  EXPECT_EQ(empty.out.find("no hang found"), std::string::npos) << empty.out;
  {
    std::ofstream(dir + "/train.log") << "epoch 1 loss 2.3\nepoch 2 loss 2.1\nsaving checkpoint\n";
  }
  const auto log = RunCli({"hang", "--json", dir + "/train.log"});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(log.exit_code, 3) << log.out;
  const auto v = nlohmann::json::parse(log.out);
  EXPECT_EQ(v["finding"]["kind"], "unknown");
  EXPECT_EQ(v["headline"], "no verdict: read 1 log; nothing in it could be used (see the notes)");
  ASSERT_FALSE(v["notes"].empty());
  EXPECT_EQ(v["notes"].back(), "read 3 lines of " + dir +
                                   "/train.log, recognised none: no watchdog, NCCL, "
                                   "CUDA, launcher or traceback line");
}

// A log that says the run finished, with no failure line, is "no hang": exit 0 (issue 33; it
// was "no verdict", exit 3). HF Trainer's closing line and metrics dict.
TEST(HangCli, ACleanExitIsExitZeroNoHang) {
  const std::string dir = ::testing::TempDir() + "strata-hang-clean";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir + "/train.log")
        << "Training completed. Do not forget to share your model on huggingface.co/models =)\n"
           "{'train_runtime': 5123.4, 'train_samples_per_second': 12.5, 'epoch': 3.0}\n";
  }
  const auto r = RunCli({"hang", "--json", dir + "/train.log"});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const auto v = nlohmann::json::parse(r.out);
  EXPECT_EQ(v["finding"]["kind"], "healthy");
  EXPECT_EQ(v["headline"],
            "no hang: the run finished (its log says so) and no failure line was found");
}

TEST(HangCli, UsageErrorsExitTwo) {
  struct Case {
    std::vector<std::string> args;
    const char* stderr_start;
  };
  const Case cases[] = {
      {{"hang"}, "strata: error: no evidence given"},
      {{"hang", "/nonexistent/bundle"},
       "strata: error: /nonexistent/bundle: no such file or directory"},
      {{"hang", "--synth", "oom-teardwn", "--out", "/tmp/x"},
       "strata: error: --synth: unknown synthetic case 'oom-teardwn'\n  hint: did you mean "
       "'oom-teardown'?"},
      {{"hang", "--bogus"}, "strata: error: The following argument was not expected: --bogus"},
  };
  for (const Case& c : cases) {
    const auto r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind(c.stderr_start, 0), 0u) << r.err;
  }
}

TEST(HangCli, HelpDocumentsEveryExitCode) {
  const auto r = RunCli({"hang", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* code :
       {"0 the evidence shows a healthy job", "1 a hang or problem found", "2 bad usage",
        "3 no verdict: files were read but nothing in them could be used"}) {
    EXPECT_NE(r.out.find(code), std::string::npos) << code << "\n" << r.out;
  }
}

// Fuzz finding 16 (912 bytes, 88 s under ASan): a corrupt NCCL RAS summary gave a process count
// of 3,181,122 (a PID); every rank up to it was listed as missing, 211 MB of JSON. A world
// beyond 2^20 ranks is dropped with a note, and nothing is said about ranks the evidence never
// named.
TEST(HangCli, AWorldBeyondAnyJobIsIgnoredWithANote) {
  const auto r =
      RunCli({"hang", "--json",
              testing::TestPath("../fuzz/regressions/evidence/f16_pid_read_as_world_size")});
  EXPECT_LT(r.out.size(), 100'000u);
  EXPECT_NE(r.out.find("a world of 3181122 ranks (NCCL RAS total processes) is beyond any job"),
            std::string::npos)
      << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("\"expected_world_size\": null"), std::string::npos);
}

// Fuzzing finding 19: a corrupt RAS summary's process count (318,112, under the 2^20 bound) and
// loose log lines, no rank's bundle or dump: every rank of that world was "missing", named as
// culprits and listed four times in the JSON (10 s under ASan). With nothing collected absence
// names nobody: the world is kept, no rank is missing, and a note says why.
TEST(HangCli, AWorldWithNoRankCollectedCountsNoneMissing) {
  const auto r = RunCli(
      {"hang", "--json",
       testing::TestPath("../fuzz/regressions/evidence/f19_world_size_with_no_rank_collected")});
  EXPECT_LT(r.out.size(), 100'000u);
  EXPECT_NE(r.out.find("\"expected_world_size\": 318112"), std::string::npos)
      << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("no rank's bundle, dump or stack was given (or no process's RANK is "
                       "known): none is counted as missing"),
            std::string::npos);
  EXPECT_EQ(r.out.find("dead_or_missing_ranks"), std::string::npos);
}

// Fuzzing finding 20: a rank's py-spy dump (its RANK from the file name) and a RAS summary whose
// process count is 2^20, the largest world taken. Ranks 1-1048575 were all "missing", named as
// culprits and listed in four places: 52 MB of JSON from 3 KB (47 s in the fuzzer under ASan).
// More ranks absent than collected is a partial collection: counted as uncollected, as runs,
// and named nowhere.
TEST(HangCli, AMillionAbsentRanksAreAPartialCollectionNotCulprits) {
  const std::string dir = ::testing::TempDir() + "strata-hang-bigworld";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string both = testing::ReadTestFile(
      "../fuzz/regressions/evidence/f20_million_rank_world_one_rank_collected");
  const size_t cut = both.find("\n----8<----\n");
  ASSERT_NE(cut, std::string::npos);
  { std::ofstream(dir + "/rank0.txt") << both.substr(0, cut); }
  { std::ofstream(dir + "/ras.txt") << both.substr(cut + 12); }
  const auto r = RunCli({"hang", "--json", dir + "/rank0.txt", dir + "/ras.txt"});
  std::filesystem::remove_all(dir);
  EXPECT_LT(r.out.size(), 100'000u);
  const auto v = nlohmann::json::parse(r.out);
  EXPECT_EQ(v["ranks"]["uncollected"]["count"], 1048575);
  EXPECT_EQ(v["ranks"]["uncollected"]["ranges"], "1-1048575");
  EXPECT_EQ(v["ranks"]["missing"]["count"], 0);
  EXPECT_EQ(r.out.find("1-1048575 have no live process"), std::string::npos);
}

}  // namespace
}  // namespace strata::hang::hang_cli_test

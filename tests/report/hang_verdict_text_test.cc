// The hang verdict's text (report/hang_verdict.h) on the first-cause inputs: what a reader sees
// must not invent a group description or call a process id a rank.
#include <gtest/gtest.h>

#include <string>

#include "hang/first_cause_inputs.h"
#include "strata/report/hang_verdict.h"

namespace strata::hang::hang_verdict_text_test {
namespace {

using namespace inputs;  // NOLINT: the inputs of these tests

// A group the evidence gives no description is "PG 0", never "PG 0 ()".
TEST(HangVerdictText, AGroupWithoutADescriptionPrintsNoEmptyParentheses) {
  const Verdict v = AnalyzeLog(StatusLine(0, 12, 12) + StatusLine(1, 12, 10));
  const std::string text = VerdictToText(v, 8);
  EXPECT_NE(text.find("PG 0 from the watchdog log"), std::string::npos) << text;
  EXPECT_EQ(text.find("()"), std::string::npos) << text;
}

// Three processes known only by pid (4100 in a FileLock, 4101 and 4102 in all_reduce): the
// culprit is "pid 4100", and no line calls a pid a rank (the headline: first_cause_test.cc).
TEST(HangVerdictText, ProcessIdsAreNotPrintedAsRanks) {
  EvidenceSet set;
  AddEvidenceFile(set, PySpy(4100, kInFileLock, true), "a.txt");
  AddEvidenceFile(set, PySpy(4101, kInAllReduce, false), "b.txt");
  AddEvidenceFile(set, PySpy(4102, kInAllReduce, false), "c.txt");
  const std::string text = VerdictToText(Analyze(set, {}), 8);
  EXPECT_NE(text.find("culprit: pid 4100"), std::string::npos) << text;
  EXPECT_EQ(text.find("rank 4100"), std::string::npos) << text;
  EXPECT_EQ(text.find("ranks 4101"), std::string::npos) << text;
  // The count of live ones is a count of processes, not of ranks (issue 33: "process ids are
  // printed as ranks when no rank is known").
  EXPECT_EQ(text.find("ranks: expected"), std::string::npos) << text;
  EXPECT_NE(text.find("processes (by pid, no RANK known): expected unknown, live 3 (4100-4102)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace strata::hang::hang_verdict_text_test

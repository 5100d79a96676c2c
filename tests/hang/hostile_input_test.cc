// Findings of the first fuzzing round in the hang parsers, each pinned by the smallest input that
// showed it (the same inputs are kept under fuzz/regressions/ and replayed through the targets).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "strata/hang/collect/bundle.h"
#include "strata/hang/parsers/pyspy.h"

namespace strata::hang {
namespace {

TEST(PySpyText, ErrorLineAfterLocalsStartsADumpWithoutReadingAMissingThread) {
  // "Locals:" sets the locals state; "Error:" starts a dump with no threads; the next indented
  // line used to read threads.back() of that empty dump (SIGSEGV).
  const auto dumps = ParsePySpy(
      "Thread 1 (active): \"MainThread\"\n    step (train.py:10)\n        Locals:\n"
      "            x: 1\nError: Failed to get process executable name\n            y: 2\n",
      "rank0.txt");
  ASSERT_TRUE(dumps.ok()) << dumps.error().Format();
  ASSERT_EQ(dumps->size(), 2u);
  EXPECT_EQ((*dumps)[0].threads.at(0).frames.at(0).locals.size(), 1u);
  EXPECT_TRUE((*dumps)[1].threads.empty());
  // The indented line after the error is part of the error's paragraph.
  EXPECT_EQ((*dumps)[1].error, "py-spy failed: Failed to get process executable name y: 2");
}

TEST(PySpyJson, NumberBeyondDoubleRangeIsAnError) {
  const auto r = ParsePySpy("[[4E932", "rank0.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Format().find("rank0.json: malformed py-spy JSON"), std::string::npos)
      << r.error().Format();
}

TEST(BundleManifest, NumberBeyondDoubleRangeIsAnError) {
  const auto r = ParseManifest(R"({"schema_version": 1, "kind": "hang_bundle", "x": 1e400})", "m");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Format().find("number overflow"), std::string::npos) << r.error().Format();
}

TEST(BundleManifest, PathsStayInsideTheBundle) {
  EXPECT_EQ(PathInBundle("/b", "fr/trace_0").value(), "/b/fr/trace_0");
  EXPECT_EQ(PathInBundle("/b", "/dev/zero").error().Format(),
            "/b/manifest.json: the manifest names '/dev/zero', an absolute path; expected a path "
            "inside the bundle");
  EXPECT_FALSE(PathInBundle("/b", "fr/../../etc/passwd").ok());
  EXPECT_FALSE(PathInBundle("/b", "").ok());
}

}  // namespace
}  // namespace strata::hang

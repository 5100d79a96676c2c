// What the twenty-seventh batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-07 (third)"`) showed strata reading wrong at its first run. Each test quotes the public
// thread's lines (the case named beside the test) and states what a reader derives from them by
// hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::first_run_twentyseventh_batch_test {
namespace {

using hang::FailureKind;
using hang::Verdict;
using hang::inputs::AnalyzeLog;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// sehoffmann/dmlcloud#61 (dmlcloud-61-pg-not-destroyed-warning-on-normal-exit): the whole paste
// is ProcessGroupNCCL's warning "process group has NOT been destroyed before we destruct
// ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group
// ...". By hand, from the message: it is printed while the group object is destructed, at the
// process's exit (its own words: "On normal program exit"); nothing before it failed, and a
// process that is exiting waits on no collective. No hang: healthy, exit 0. The first run said
// "no verdict" (exit 3), nothing in the log being read.
TEST(FirstRunTwentyseventhBatch, DestructorWarningAtExitAloneIsNoHang) {
  const std::string warning =
      "[rank0]:[W227 10:54:51.986111855 ProcessGroupNCCL.cpp:1374] Warning: WARNING: process "
      "group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, "
      "the application should call destroy_process_group to ensure that any pending NCCL "
      "operations have finished in this process. In rare cases this process can exit before this "
      "point and block the progress of another member of the process group. This constraint has "
      "always been present,  but this warning has only been added since PyTorch 2.4 (function "
      "operator())\n";
  const auto lines = hang::ScanFailures(warning, "log.txt");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].kind, FailureKind::kProcessExit);
  const Verdict v = AnalyzeLog(warning);
  EXPECT_EQ(v.finding.kind, "healthy") << v.finding.summary;
  EXPECT_FALSE(v.hang) << v.headline;
  EXPECT_TRUE(Has(v.finding.summary, "reached its exit")) << v.finding.summary;
  // The same warning after a CUDA error (printed at the exit that error caused, as a public
  // vLLM log shows it after rank 0's "illegal memory access") stays that error.
  const Verdict after_error = AnalyzeLog(
      "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n" + warning);
  EXPECT_EQ(after_error.finding.kind, "cuda_error") << after_error.finding.summary;
}

// vllm-project/vllm#20170 (vllm-20170-pg-id2-rank2-watchdog-illegal-memory-access): "what():
// [PG ID 2 PG GUID 3 Rank 2] Process group watchdog thread terminated with exception: CUDA
// error: an illegal memory access was encountered", with no "[rankN]:" prefix. By hand: torch >=
// 2.4 names the default group "PG ID 0 PG GUID 0(default_pg)" (basicsr-737's lines); "PG ID 2"
// is another group (vLLM's tensor-parallel group), and the rank after it is the process's rank
// inside that group, not its global rank. The line names no global rank: a CUDA error with no
// culprit rank. The first run said "CUDA error on rank 2".
TEST(FirstRunTwentyseventhBatch, RankInsideANonDefaultGroupIsNoGlobalCulprit) {
  const Verdict v = AnalyzeLog(
      "  what():  [PG ID 2 PG GUID 3 Rank 2] Process group watchdog thread terminated with "
      "exception: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
  EXPECT_FALSE(Has(v.finding.summary, "on rank 2")) << v.finding.summary;
  // torchrun's prefix names the global rank whatever the group (vllm-8177's "[rank0]:" before
  // "[PG ID 2 PG GUID 3 Rank 0]"): rank 0 stays the culprit.
  const Verdict prefixed = AnalyzeLog(
      "[rank0]:[E219 12:14:43.351647859 ProcessGroupNCCL.cpp:1595] [PG ID 2 PG GUID 3 Rank 0] "
      "Process group watchdog thread terminated with exception: CUDA error: an illegal memory "
      "access was encountered\n");
  EXPECT_EQ(prefixed.finding.ranks, std::vector<int64_t>{0}) << prefixed.finding.summary;
  // In the default group the group's rank is the global rank.
  const Verdict in_default = AnalyzeLog(
      "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated "
      "with exception: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(in_default.finding.ranks, std::vector<int64_t>{3}) << in_default.finding.summary;
}

}  // namespace
}  // namespace strata::first_run_twentyseventh_batch_test

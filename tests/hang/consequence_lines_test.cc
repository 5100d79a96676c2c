// Lines that follow a failure and are read as its consequence, not as a first cause: srun's
// "task N: Killed" for the tasks it killed itself after another task failed or the step was
// cancelled, and a CUDA error after an out-of-memory line the run recovered from.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// torch's watchdog line (the format of first_cause_inputs.h's TimeoutLine, as torch 2.x prints it
// with the "[E ProcessGroupNCCL.cpp:563]" tag) and srun's end of the step.
const std::string kTimeoutThenSrunKills =
    "[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
    "600003 milliseconds before timing out.\n"
    "srun: error: node1: task 3: Aborted (core dumped)\n"
    "slurmstepd: error: *** STEP 1234.0 ON node1 CANCELLED AT 2024-01-01T00:00:00 ***\n";

TEST(ConsequenceLines, SrunKilledAfterAStepCancelIsNotTheCause) {
  const Verdict without = AnalyzeLog(kTimeoutThenSrunKills);
  EXPECT_EQ(without.finding.kind, "collective_timeout") << without.finding.summary;
  // srun killed task 5 after task 3 aborted and the step was cancelled: the same verdict.
  const Verdict with = AnalyzeLog(kTimeoutThenSrunKills + "srun: error: node2: task 5: Killed\n");
  EXPECT_EQ(with.finding.kind, "collective_timeout") << with.finding.summary;
  EXPECT_EQ(with.finding.summary, without.finding.summary);
  // The plural form srun prints for a range of tasks it killed.
  const Verdict plural =
      AnalyzeLog(kTimeoutThenSrunKills + "srun: error: node2: tasks 0-7: Killed\n");
  EXPECT_EQ(plural.finding.kind, "collective_timeout") << plural.finding.summary;
}

TEST(ConsequenceLines, SrunKilledLinesAreReadAsConsequences) {
  // After another task's failure alone (no step cancel line).
  const auto after_abort = ScanFailures(
      "srun: error: node1: task 3: Aborted (core dumped)\n"
      "srun: error: node2: task 5: Killed\n",
      "log.txt");
  ASSERT_FALSE(after_abort.empty());
  EXPECT_EQ(after_abort.back().kind, FailureKind::kWorkerFailed);
  EXPECT_FALSE(after_abort.back().killed) << after_abort.back().detail;
  // "tasks 0-7: Killed" is recognised, and as a consequence even alone.
  const auto plural = ScanFailures("srun: error: node2: tasks 0-7: Killed\n", "log.txt");
  ASSERT_EQ(plural.size(), 1U);
  EXPECT_EQ(plural[0].kind, FailureKind::kWorkerFailed);
  EXPECT_FALSE(plural[0].killed);
  // A Killed line with no failure before it is still a process killed from outside.
  const Verdict alone = AnalyzeLog("srun: error: node2: task 5: Killed\n");
  EXPECT_EQ(alone.finding.kind, "dead_rank") << alone.finding.summary;
}

// accelerate's find_executable_batch_size catches an out-of-memory error, halves the batch and
// goes on ("Decreasing batch size to: 8"); loss lines follow. A CUDA error much later is its own
// failure, not the consequence of the allocation that failed before.
TEST(ConsequenceLines, OutOfMemoryTheRunWentOnFromDoesNotExplainALaterCudaError) {
  const Verdict v = AnalyzeLog(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total "
      "capacity of 79.15 GiB of which 10.12 GiB is free.\n"
      "Decreasing batch size to: 8\n"
      "{'loss': 0.2411, 'grad_norm': 0.306, 'learning_rate': 9.8e-06, 'epoch': 0.4}\n"
      "{'loss': 0.2307, 'grad_norm': 0.297, 'learning_rate': 9.6e-06, 'epoch': 0.5}\n"
      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  // Without the lines in between, the two are one failure: out of memory first.
  const Verdict together = AnalyzeLog(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total "
      "capacity of 79.15 GiB of which 10.12 GiB is free.\n"
      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(together.finding.kind, "oom") << together.finding.summary;
  // Different ranks' lines are not one process's failure.
  const Verdict other_rank = AnalyzeLog(
      "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB.\n"
      "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(other_rank.finding.kind, "cuda_error") << other_rank.finding.summary;
}

}  // namespace
}  // namespace strata::hang

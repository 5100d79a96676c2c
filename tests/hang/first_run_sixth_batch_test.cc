// What the sixth batch of real cases collected on 2026-12-05 showed strata reading wrong at its
// first run (tests/golden/hang-real/, `first_run_batch: "2026-12-05"`, the part not held back),
// and the classes of three held-back misses of earlier batches (hand-made lines of their
// formats). Each test quotes the public thread's lines (the case under tests/golden/hang-real/
// named beside the test) and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// Kay1794/Aware-of-the-history#2 (aware-of-the-history-2-mpirun-rank1-signal-9-masked-pid):
// Open MPI's "mpirun noticed that process rank 1 with PID ... on node ... exited on signal 9
// (Killed)." names the MPI rank (the global rank) and the signal: 9 is SIGKILL, a process killed
// from outside. Read as no verdict (exit 3).
TEST(FirstRunSixthBatch, OpenMpiNoticedSignalNamesTheKilledRank) {
  const Verdict v = AnalyzeLog(
      "Primary job  terminated normally, but 1 process returned\n"
      "a non-zero exit code. Per user-direction, the job has been aborted.\n"
      "mpirun noticed that process rank 1 with PID xxxxxx on node xxxxxxxx exited on signal 9 "
      "(Killed).\n");
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{1});
  // Signal 11 (SIGSEGV) is the process's own crash, not a kill from outside.
  const Verdict segv = AnalyzeLog(
      "mpirun noticed that process rank 3 with PID 4242 on node gpu07 exited on signal 11 "
      "(Segmentation fault).\n");
  EXPECT_EQ(segv.finding.kind, "crash") << segv.finding.summary;
  EXPECT_EQ(segv.finding.ranks, std::vector<int64_t>{3});
}

// horovod/horovod#1421 (horovod-1421-mpirun-first-process-exit-code-1-rank0): Open MPI's block
// "The first process to do so was: / Process name: [[29973,1],0] / Exit code: 1" names job 29973,
// step 1, rank 0, which exited with code 1 (an error of its own, no signal) first. Read as no
// verdict (exit 3).
TEST(FirstRunSixthBatch, OpenMpiFirstProcessToExitIsTheCrashedRank) {
  const std::string text =
      "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
      "the job to be terminated. The first process to do so was:\n"
      "\n"
      "  Process name: [[29973,1],0]\n"
      "  Exit code:    1\n";
  const auto signals = ScanFailures(text, "log.txt");
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].kind, FailureKind::kWorkerFailed);
  EXPECT_EQ(signals[0].global_rank, 0);
  EXPECT_EQ(signals[0].exit_code, 1);
  const Verdict v = AnalyzeLog(text);
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{0});
}

// brain-score/vision#950 (brain-score-950-slurmstepd-oom-kill-srun-task0-out-of-memory):
// slurmstepd's "Detected 1 oom-kill event(s) in StepId=37205392.0" and srun's "node107: task 0:
// Out Of Memory": the cgroup's out-of-memory handler killed a process of the step (SIGKILL from
// outside). Slurm's task number is not shown to be a training rank, so none is named. Read as no
// verdict (exit 3).
TEST(FirstRunSixthBatch, SlurmOomKillIsADeadProcess) {
  for (const std::string line :
       {"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.\n",
        "srun: error: node107: task 0: Out Of Memory\n"}) {
    const Verdict v = AnalyzeLog(line);
    EXPECT_EQ(v.finding.kind, "dead_rank") << line << v.finding.summary;
    EXPECT_TRUE(v.finding.ranks.empty()) << line;
  }
}

// The class of clessig/atmorep#55 (held back in the fifth batch, its first-run record kept): a
// terminal wrapped the watchdog's line inside "CUDA error" ("CUDA erro" / "r: unspecified launch
// failure"). Neither half is a failure line; joined, they are. A hand-made pair of that shape,
// the continuation without any prefix.
TEST(FirstRunSixthBatch, FailureLineWrappedInsideItsKeyWordsIsJoined) {
  const Verdict v = AnalyzeLog(
      "[rank3]:[E ProcessGroupNCCL.cpp:1414] [PG 0 Rank 3] Process group watchdog thread "
      "terminated with exception: CUDA er\n"
      "ror: an illegal memory access was encountered\n");
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{3});
  // Two lines that each say something are never joined: the second keeps its own line number.
  const auto signals = ScanFailures(
      "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
      "Segmentation fault (core dumped)\n",
      "log.txt");
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[1].line, 2);
}

// The class of facebookresearch/metaseq#90 (held back in the fourth batch, its first-run record
// kept): torch's "Process Group destroyed on rank 0" opens a line with "Process ", which is
// py-spy's header only when a pid and a colon follow ("Process 4242: python train.py"). A log
// with that line is a log: its NCCL error is read.
TEST(FirstRunSixthBatch, ProcessGroupDestroyedIsNoPySpyHeader) {
  EvidenceSet set;
  AddEvidenceFile(set,
                  "  what():  NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:181, "
                  "unhandled cuda error, NCCL version 21.0.3\n"
                  "Process Group destroyed on rank 0\n"
                  "Exception raised from ncclCommAbort at "
                  "../torch/csrc/distributed/c10d/NCCLUtils.hpp:181 (most recent call first):\n",
                  "log.txt");
  EXPECT_TRUE(set.unreadable.empty());
  EXPECT_FALSE(set.failures.empty());
  // Read as a log, NCCL's "unhandled cuda error" (ncclUnhandledCudaError) is a CUDA fault met
  // inside NCCL; the communicator's abort after it is the teardown, not a hang at exit.
  const Verdict v = Analyze(set, {});
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
}

// The class of NVIDIA/TensorRT-LLM#1670 (held back in the fourth batch, its first-run record
// kept): NCCL's "Cuda failure 'out of memory'" and, after it in the same process, "Cuda failure
// 'invalid resource handle'", the consequence of the allocation that failed. The earlier line is
// the cause: out of memory. A hand-made pair of lines of that format, another host and device.
TEST(FirstRunSixthBatch, OutOfMemoryBeforeACudaErrorOfTheSameProcessComesFirst) {
  const Verdict v = AnalyzeLog(
      "node3:5120:5188 [1] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'\n"
      "\n"
      "node3:5120:5188 [1] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle'\n");
  EXPECT_EQ(v.finding.kind, "oom") << v.finding.summary;
  // The other order is a CUDA fault first, the out-of-memory after it.
  const Verdict cuda_first = AnalyzeLog(
      "node3:5120:5188 [1] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle'\n"
      "node3:5120:5188 [1] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'\n");
  EXPECT_EQ(cuda_first.finding.kind, "cuda_error") << cuda_first.finding.summary;
}

}  // namespace
}  // namespace strata::hang

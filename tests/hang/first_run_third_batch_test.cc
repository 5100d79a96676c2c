// What the third batch of real cases collected on 2026-12-04 showed strata reading wrong at its
// first run (tests/golden/hang-real/, `first_run_batch: "2026-12-04 (third)"`, the part not held
// back). Each test quotes the public thread's lines (the case under tests/golden/hang-real/
// named beside the test) and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"
#include "strata/hang/parsers/horovod_stall.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// resistzzz/Prompt4NR#3 (prompt4nr-3-mp-spawn-process0-sigkill): torch.multiprocessing.spawn's
// join raises "ProcessExitedException: process 0 terminated with signal SIGKILL". SIGKILL comes
// from outside the process (the OOM killer, the scheduler): a dead process, as torchrun's
// "failed (exitcode: -9)". The 0 is the spawn index, a local number: no global rank is named.
// It was read as no verdict (exit 3).
TEST(FirstRunThirdBatch, SpawnedProcessKilledBySigkillIsADeadProcessWithoutARank) {
  const Verdict v = AnalyzeLog(
      "  File \"/home/season/miniconda3/envs/torch/lib/python3.7/site-packages/torch/"
      "multiprocessing/spawn.py\", line 146, in join\n"
      "    signal_name=name\n"
      "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal "
      "SIGKILL\n");
  EXPECT_EQ(v.finding.kind, "dead_rank");
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_TRUE(IsProblem(v.finding));
  EXPECT_NE(v.finding.summary.find("process 0 terminated with signal SIGKILL"), std::string::npos)
      << v.finding.summary;
  // An exit code, not a signal: the process ended by itself, a crash (not killed from outside).
  const auto exited = ScanFailures(
      "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with exit code "
      "1\n",
      "log.txt");
  ASSERT_EQ(exited.size(), 1u);
  EXPECT_EQ(exited[0].kind, FailureKind::kWorkerFailed);
  EXPECT_EQ(exited[0].exit_code, 1);
  EXPECT_EQ(exited[0].local_rank, 1);
  EXPECT_FALSE(exited[0].global_rank.has_value());
}

// horovod/horovod#2255 (horovod-2255-mpirun-tags-worker-bus-error-rank0): under Open MPI's
// --tag-output every line of rank 0 opens with "[1,0]<stderr>:" (job 1, rank 0), and torch's
// data loader prints "ERROR: Unexpected bus error encountered in worker. This might be caused by
// insufficient shared memory (shm)." when a worker dies of SIGBUS in /dev/shm. Rank 0's worker
// died; rank 0 is the one that failed. It was read as no verdict (exit 3).
TEST(FirstRunThirdBatch, DataLoaderBusErrorUnderAnMpiTagIsThatRanksCrash) {
  const Verdict v = AnalyzeLog(
      "[1,0]<stdout>:Train Epoch: 1 [59520/60000 (99%)]\tLoss: 0.319679\n"
      "[1,0]<stderr>:ERROR: Unexpected bus error encountered in worker. This might be caused by "
      "insufficient shared memory (shm).\n"
      "[1,0]<stderr>:[1,0]<stderr>:Traceback (most recent call last):\n");
  EXPECT_EQ(v.finding.kind, "crash");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{0});
  // The tag's second number is the rank; a tag needs both numbers and the stream name.
  EXPECT_EQ(MpiTagRank("[1,12]<stderr>:x"), 12);
  EXPECT_FALSE(MpiTagRank("[rank1]: x").has_value());
  EXPECT_FALSE(MpiTagRank("[1,x]<stderr>: x").has_value());
  EXPECT_FALSE(MpiTagRank("[1,2] <stderr>: x").has_value());
}

// horovod/horovod#336 (horovod-336-ready-ranks-rank3-alone-on-another-tensor): one stall line
// lists "HorovodAllreduce_loss_Mean_0 [ready ranks: 3]" and the gradient allreduces "[ready
// ranks: 2, 0, 1]". Ranks 0-3 all exist (3 is the highest ready one) and each is ready on one of
// the two sets: rank 3 waits on a tensor the others never submitted, and they on tensors rank 3
// never submitted. The ranks are at different collectives (a mismatch), and rank 3, alone
// against three, is the one on another path. It was read as ranks 0, 1 and 2 lagging.
TEST(FirstRunThirdBatch, ReadyRanksSplitIntoDisjointGroupsAreAMismatchNamingTheSmallerGroup) {
  const std::string warning =
      "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by "
      "subset of ranks and are waiting for remainder of ranks for more than 60 seconds. Stalled "
      "ops: HorovodAllreduce_loss_Mean_0 [ready ranks: 3], "
      "DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_0 [ready ranks: 2, 0, 1], "
      "DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_1 [ready ranks: 2, 0, "
      "1]\n";
  const Verdict v = AnalyzeLog(warning);
  EXPECT_EQ(v.finding.kind, "collective_mismatch");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{3});
  // Two groups of two: a split, but neither is the odd one: no rank is named.
  const Verdict even = AnalyzeLog(
      "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by "
      "subset of ranks and are waiting for remainder of ranks for more than 60 seconds. Stalled "
      "ops: a [ready ranks: 0, 1], b [ready ranks: 2, 3]\n");
  EXPECT_EQ(even.finding.kind, "collective_mismatch");
  EXPECT_TRUE(even.finding.ranks.empty());
  // Not a split (horovod/horovod#134's shape): ranks 0 and 1 lie below the highest ready rank 3
  // and are ready on no tensor at all. They are behind.
  const Verdict behind = AnalyzeLog(
      "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by "
      "subset of ranks and are waiting for remainder of ranks for more than 60 seconds. Stalled "
      "ops: a [ready ranks: 2], b [ready ranks: 2, 3]\n");
  EXPECT_EQ(behind.finding.kind, "lagging_rank");
  EXPECT_EQ(behind.finding.ranks, (std::vector<int64_t>{0, 1}));
}

// pytorch/pytorch#87995 (pytorch-87995-pyspy-rank0-in-data-queue-get): rank 0's py-spy dump, its
// main thread idle in threading's wait under queue.get, called from fairseq's data iterator's
// __next__ inside train: it waits for its next batch, outside any collective (the reporter: the
// other 31 ranks wait in all_reduce). Issue 33: a process stuck outside any collective, in its
// data loading, was called healthy (exit 0); it is where the job hangs.
TEST(FirstRunThirdBatch, ARankWaitingForItsNextBatchIsTheHangNotHealthy) {
  const std::string dump =
      "Thread 0x7FA6E7C01740 (idle): \"MainThread\"\n"
      "    wait (threading.py:302)\n"
      "    get (queue.py:170)\n"
      "    __next__ (fairseq/data/iterators.py:648)\n"
      "    __iter__ (fairseq/data/iterators.py:59)\n"
      "    _chunk_iterator (fairseq/data/iterators.py:528)\n"
      "    train (fairseq_cli/train.py:274)\n"
      "    main (fairseq_cli/train.py:165)\n";
  EvidenceSet set;
  AddEvidenceFile(set, dump, "pyspy-rank0.txt");
  const Verdict v = Analyze(set, {});
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "lagging_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{0});
  ASSERT_FALSE(v.groups.empty());
  EXPECT_EQ(v.groups[0].activity.op, "queue.get");
  // A queue read that no iterator's __next__ calls (a server loop, a logger) is not data loading:
  // the process stays unnamed (healthy), as before.
  EvidenceSet other;
  AddEvidenceFile(other,
                  "Thread 0x7FA6E7C01740 (idle): \"MainThread\"\n"
                  "    wait (threading.py:302)\n"
                  "    get (queue.py:170)\n"
                  "    serve (server.py:40)\n",
                  "pyspy-rank0.txt");
  EXPECT_EQ(Analyze(other, {}).finding.kind, "healthy");
}

// Issue 33's target: the exit code matches the verdict. Only torch 2.4's status lines of two
// ranks, "[PG 3 Rank 0] Timeout at NCCL work: 12, last enqueued NCCL work: 12, last completed
// NCCL work: 11." (the line LLM-Training#7 and lama#324 print after the WorkNCCL one, which a
// paste may lack, as accelerate-3380's stored copy cuts it): collective #12 of group 3 timed
// out on both. The headline said "HANG" (exit 1) while the finding said "unknown" (the "no
// verdict" of exit 3): the finding is the timeout of collective #12.
TEST(FirstRunThirdBatch, StatusLinesAloneAreACollectiveTimeoutAtTheirWork) {
  const Verdict v = AnalyzeLog(
      "[rank0]:[E ProcessGroupNCCL.cpp:1537] [PG 3 Rank 0] Timeout at NCCL work: 12, last "
      "enqueued NCCL work: 12, last completed NCCL work: 11.\n"
      "[rank1]:[E ProcessGroupNCCL.cpp:1537] [PG 3 Rank 1] Timeout at NCCL work: 12, last "
      "enqueued NCCL work: 12, last completed NCCL work: 11.\n");
  EXPECT_TRUE(v.hang);
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  EXPECT_EQ(v.finding.seq, 12);
  EXPECT_TRUE(v.finding.ranks.empty());
}

}  // namespace
}  // namespace strata::hang

// What the twenty-fifth batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-07"`) showed strata reading wrong at its first run. The batch's ten looked-at cases
// were all scored right; what follows is a statement in a right verdict's summary that the
// evidence does not support. Each test quotes the public thread's lines (the case named beside
// the test) and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// haotian-liu/LLaVA#1085 (llava-1085-deepspeed-sigkill-handler-wrapped-cmd-return-code-9):
//   "[2024-02-06 06:23:39,510] [ERROR] [launch.py:321:sigkill_handler] ['/mnt/d/anaconda3/envs/
//    llava2/bin/python', '-u', '.../train_mem.py', '--local_rank=7', '--deepspeed', ...] exits
//    with return code = -9"
// By hand, from DeepSpeed's launcher
// (deepspeedai/DeepSpeed@32c6645218a3c7b6e7eb6247b3523e73f8b1e882 deepspeed/launcher/launch.py):
// the spawn loop `for local_proc in range(0, num_local_procs)` assigns `cmd` for each worker it
// starts; the poll loop finds the process whose `returncode != 0` and calls sigkill_handler, which
// logs f"{cmd} exits with return code = {last_return_code}". `cmd` is the last command the loop
// built, the last worker started, whichever worker failed. So the line says a worker was killed by
// SIGKILL (-9) and names none: '--local_rank=7' is the highest local rank of the node, not the
// failed worker's. The first run said "the worker with local rank 7 exited with code -9".
TEST(FirstRunTwentyfifthBatch, DeepSpeedLauncherCommandNamesNoFailedWorker) {
  const Verdict v = AnalyzeLog(
      "[2024-02-06 06:23:39,510] [ERROR] [launch.py:321:sigkill_handler] ['/mnt/d/anaconda3/envs/"
      "llava2/bin/python', '-u', '/home/ubuntu/code/LLaVA-main/llava/train/train_mem.py', "
      "'--local_rank=7', '--deepspeed', './scripts/zero2.json', '--report_to', 'wandb'] exits "
      "with return code = -9\n");
  EXPECT_EQ(v.finding.kind, "dead_rank") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_NE(v.finding.summary.find("a worker exited with code -9 (SIGKILL)"), std::string::npos)
      << v.finding.summary;
  EXPECT_EQ(v.finding.summary.find("local rank 7"), std::string::npos) << v.finding.summary;
  // torchrun's own line is printed for the failed worker (x-flux-94: "failed (exitcode: -9)
  // local_rank: 0 (pid: 3787)"): its local rank stays named.
  const Verdict torchrun = AnalyzeLog(
      "E0902 00:42:54.953000 133343758611968 torch/distributed/elastic/multiprocessing/api.py:833] "
      "failed (exitcode: -9) local_rank: 0 (pid: 3787) of binary: /mnt/data/miniconda3/envs/"
      "x-flux/bin/python\n");
  EXPECT_EQ(torchrun.finding.kind, "dead_rank") << torchrun.finding.summary;
  EXPECT_NE(torchrun.finding.summary.find("the worker with local rank 0 exited with code -9"),
            std::string::npos)
      << torchrun.finding.summary;
}

// mlcommons/training#546
// (mlcommons-training-546-old-format-ranks-4-3-allreduce-then-aborted-rank2): ranks 4 and 3 print
// old-format watchdog timeouts in ALLREDUCE, then a traceback ends in
//   "RuntimeError: NCCL communicator was aborted on rank 2.  Original reason fo"
// (the stored excerpt ends there). By hand: c10d raises "NCCL communicator was aborted on rank
// <rank_>" in the process whose own communicator was aborted (NCCLComm::getNcclComm,
// pytorch/pytorch@37ee6bc70d614a05c23e73cd1248816398e50bd1
// torch/csrc/distributed/c10d/NCCLUtils.cpp), so rank 2 left a line of its own. Of a world of at
// least 5 (rank 4 appears), ranks 0 and 1 are the ones with no line. The first run's note said
// "ranks 0-2 ... left no line".
TEST(FirstRunTwentyfifthBatch, CommunicatorAbortedLineIsThatRanksOwn) {
  const Verdict v = AnalyzeLog(
      "[E ProcessGroupNCCL.cpp:587] [Rank 4] Watchdog caught collective operation timeout: "
      "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809150 milliseconds before timing "
      "out.\n"
      "[E ProcessGroupNCCL.cpp:587] [Rank 3] Watchdog caught collective operation timeout: "
      "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809152 milliseconds before timing "
      "out.\n"
      "Traceback (most recent call last):\n"
      "    self.process_group, tensors, buffer_size, authoritative_rank\n"
      "RuntimeError: NCCL communicator was aborted on rank 2.  Original reason fo");
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  bool ranks_0_1 = false;
  for (const std::string& note : v.notes) {
    EXPECT_EQ(note.find("ranks 0-2 "), std::string::npos) << note;
    ranks_0_1 = ranks_0_1 || note.starts_with("ranks 0-1 of a world of at least 5");
  }
  EXPECT_TRUE(ranks_0_1);
}

}  // namespace
}  // namespace strata::hang

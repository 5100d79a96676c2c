// Text that looks like the new rules' evidence but is not: a review wrote each input by hand in
// the formats the rules read (the store-based barrier's log lines, CalledProcessError, tqdm's
// bars), and each test states what a reader concludes from it. Every test here gave a false
// verdict before its fix.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/run_context.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;
using inputs::BarrierWait;

// Rank 0 logs the barrier twice at 3 of 4 (one rank late by a logging interval), then torch logs
// "Completed store-based barrier ... with 4 nodes" and training runs: the barrier finished, the
// run is healthy. It was read as a stuck barrier (a start-up failure) before.
TEST(InnocentText, AStoreBarrierThatCompletedIsNotStuck) {
  const std::string waits = BarrierWait(0, 4, 3) + BarrierWait(0, 4, 3);
  const Verdict completed =
      AnalyzeLog(waits +
                 "INFO:torch.distributed.distributed_c10d:Rank 0: Completed store-based barrier "
                 "for key:store_based_barrier_key:1 with 4 nodes.\n");
  EXPECT_NE(completed.finding.kind, "bootstrap") << completed.finding.summary;
  // No completion line, but a later count above the repeated one (3, 3, then 4 of a world of 5):
  // a rank arrived after the repeat, so the barrier was moving.
  const Verdict moved =
      AnalyzeLog(BarrierWait(0, 5, 3) + BarrierWait(0, 5, 3) + BarrierWait(0, 5, 4));
  EXPECT_NE(moved.finding.kind, "bootstrap") << moved.finding.summary;
  // Training printed its loss after the repeats: the barrier was passed.
  const Verdict trained = AnalyzeLog(waits +
                                     "{'loss': 2.31, 'learning_rate': 1e-05, 'epoch': "
                                     "0.01}\n");
  EXPECT_NE(trained.finding.kind, "bootstrap") << trained.finding.summary;
  // Without any of these the repeat at an unchanged count stays a stuck barrier.
  EXPECT_EQ(AnalyzeLog(waits).finding.kind, "bootstrap");
}

// CalledProcessError is raised for any subprocess. A compiler killed by the OOM killer while
// building an extension and ninja failing are no launcher's workers: no rank died. Before, each
// was read as "the launcher's worker" (a dead rank for the SIGKILL; a crash for ninja).
TEST(InnocentText, ACalledProcessErrorOfAnotherCommandIsNoWorker) {
  const Verdict gcc = AnalyzeLog(
      "subprocess.CalledProcessError: Command '['/usr/bin/gcc', '-O3', '-shared', 'cuda_utils.c', "
      "'-o', 'cuda_utils.so']' died with <Signals.SIGKILL: 9>.\n");
  EXPECT_NE(gcc.finding.kind, "dead_rank") << gcc.finding.summary;
  const Verdict ninja = AnalyzeLog(
      "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status "
      "1.\nRuntimeError: Error building extension 'fused_adam'\n");
  EXPECT_NE(ninja.finding.kind, "crash") << ninja.finding.summary;
  // The same SIGKILL before a network error is therefore not the network error's cause either:
  // the collective's remote error stays what the file shows.
  const Verdict before_network = AnalyzeLog(
      "subprocess.CalledProcessError: Command '['/usr/bin/gcc', 'cuda_utils.c']' died with "
      "<Signals.SIGKILL: 9>.\n"
      "[rank1]:[E1224 13:23:05.483840160 ProcessGroupNCCL.cpp:542] [Rank 1] Collective "
      "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=64, NumelOut=64, Timeout(ms)=1800000) raised "
      "the following async exception: NCCL error: remote process exited or there was a network "
      "error, NCCL version 2.21.5\n");
  EXPECT_NE(before_network.finding.kind, "dead_rank") << before_network.finding.summary;
}

// Bars of set-up stages part way (loading checkpoint shards 1/2, datasets' Map 4500/10000) run
// before any training step: they are no training progress. A store timeout after them is a
// start-up fault, not a rank missing from a mid-run barrier. Bars of the training loop (no
// description, as HF Trainer's; "Epoch 0:", "Steps:", "Training Progress:") are progress.
TEST(InnocentText, ASetUpStagesBarIsNoTrainingProgress) {
  using run_context::ShowsTrainingProgress;
  EXPECT_FALSE(ShowsTrainingProgress(
      "Loading checkpoint shards:  50%|█████     | 1/2 [00:03<00:03,  3.00s/it]"));
  EXPECT_FALSE(
      ShowsTrainingProgress("Map:  45%|████▌     | 4500/10000 [00:02<00:03, 1500.00 examples/s]"));
  EXPECT_FALSE(ShowsTrainingProgress("Preparing test set...:  10%|█         | 1/10 [00:01<00:09"));
  EXPECT_TRUE(ShowsTrainingProgress(" 65%|#####8    | 4339/6642 [2:40:27<2:11:03,  3.41s/it]"));
  EXPECT_TRUE(ShowsTrainingProgress("[1762]   1%|▏         | 23/1752 [01:05<1:23:14,  2.89s/it]"));
  EXPECT_TRUE(ShowsTrainingProgress("Epoch 0:  12%|█▏        | 120/1000 [01:00<07:20,  2.00it/s]"));
  EXPECT_TRUE(ShowsTrainingProgress("Steps:   3%|▎         | 30/1000 [00:30<16:10,  1.00s/it]"));
  EXPECT_TRUE(
      ShowsTrainingProgress("Training Progress:  10%|█         | 10/100 [05:00<45:00, 30.00s/it]"));

  const Verdict v = AnalyzeLog(
      "Loading checkpoint shards:  50%|█████     | 1/2 [00:03<00:03,  3.00s/it]\n"
      "Loading checkpoint shards: 100%|██████████| 2/2 [00:06<00:00,  3.00s/it]\n"
      "torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: "
      "/default_pg//cuda//0\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
}

}  // namespace
}  // namespace strata::hang

// Formats the batch of real cases collected on 2026-12-04 showed strata could not read at their
// first run (tests/golden/hang-real/, `first_run_batch: "2026-12-04"`). Each test quotes the
// public thread's lines (the case under tests/golden/hang-real/ names it) and states what a
// reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::hang::first_run_formats_test {
namespace {

using inputs::AnalyzeLog;

std::vector<FailureSignal> Scan(const std::string& text) { return ScanFailures(text, "log.txt"); }

// horovod/horovod#312: Horovod before 0.15 printed the whole stall warning on one line, the
// sentence, "Stalled ops:" and every "name [ready ranks: ...]". Each list holds 15 ranks, 0-2
// and 4-15: with 15 the highest listed, ranks 0..15 exist and 3 is never ready. The paste ends
// in "[ready " (cut): that list adds nothing.
TEST(FirstRunFormats, OneLineHorovodWarningReadsEveryReadyList) {
  const std::string line =
      "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by "
      "subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may "
      "indicate that different ranks are trying to submit different tensors or that only subset "
      "of ranks is submitting tensors, which will cause deadlock. Stalled ops: "
      "allreduce.module.conv1_block.0.weight [ready ranks: 12, 15, 5, 7, 1, 4, 8, 9, 10, 11, 13, "
      "2, 14, 6, 0], allreduce.module.conv3_block.0.bias [ready ranks: 5, 7, 12, 15, 1, 10, 13, 2, "
      "4, 8, 9, 11, 14, 0, 6], allreduce.module.conv4_block.0.weight [ready \n";
  const Verdict v = AnalyzeLog(line);
  EXPECT_EQ(v.finding.kind, "lagging_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{3});
}

// NCCL's allocator out of memory is an OOM, in NCCL 2's format (NVIDIA/nccl#1235, GPU 3 of host
// ng30903 while its neighbour's socket to it closes) and in NCCL 1's (pytorch/pytorch#4921).
// The socket error on the other process follows from the OOM: the verdict is the OOM.
TEST(FirstRunFormats, NcclCudaFailureOutOfMemoryIsAnOom) {
  for (const FailureSignal& s :
       Scan("ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of "
            "memory'\n"
            "c460c041:101211:106353 [0] init.cu:218 WARN Cuda failure 'out of memory'\n")) {
    EXPECT_NE(s.kind, FailureKind::kCudaError) << s.text;
  }
  const Verdict v = AnalyzeLog(
      "ng30903:3063025:3066048 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed "
      "by remote peer ng30903-ib.narval.calcul.quebec<51159>\n"
      "ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n"
      "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 "
      "bytes\n");
  EXPECT_EQ(v.finding.kind, "oom");
  EXPECT_TRUE(v.finding.ranks.empty());  // "[3]" is NCCL's device index, not a rank
  // Another CUDA failure stays a CUDA error (NVIDIA/nccl#1283).
  EXPECT_EQ(AnalyzeLog("n176-080-198:2657296:2658232 [0] include/alloc.h:102 NCCL WARN Cuda "
                       "failure 1 'invalid argument'\n")
                .finding.kind,
            "cuda_error");
}

// NCCL's "Message truncated": more bytes arrived than the operation posted. In bootstrap.cc it is
// communicator set-up (NVIDIA/nccl#1176, behind srun's "1: " label); in the socket transport the
// two ranks disagree on the collective, and the line names the peer (NVIDIA/nccl#626, wrapped by
// the reporter after "truncated :").
TEST(FirstRunFormats, MessageTruncatedIsBootstrapOrAMismatchWithThePeer) {
  const Verdict boot = AnalyzeLog(
      "1: compute-st-p4de24xlarge-2:4827:6900 [4] bootstrap.cc:77 NCCL WARN Message truncated : "
      "received 256 bytes instead of 4\n"
      "1: compute-st-p4de24xlarge-2:4827:6900 [4] NCCL INFO bootstrap.cc:554 -> 3\n");
  EXPECT_EQ(boot.finding.kind, "bootstrap");
  // Not the interface: the reporter's fix was another NCCL version.
  EXPECT_EQ(boot.finding.setting, "the NCCL version and NCCL_* environment of every node");
  const Verdict net = AnalyzeLog(
      "transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message "
      "truncated :\nreceiving 1048576 bytes instead of 65536\n");
  EXPECT_EQ(net.finding.kind, "collective_mismatch");
  EXPECT_EQ(net.finding.peer, "192.168.161.30");  // the port is not part of the address
  // The summary says what the warning means, not the line's cut end ("message truncated :").
  EXPECT_NE(net.finding.summary.find("sent more bytes than this rank posted"), std::string::npos)
      << net.finding.summary;
}

// pytorch/pytorch#121209: the paste starts inside torchrun's summary, below "Failures:". Records
// [2] and [3] exited with code 1 at 07:01:51, the second the "Root Cause" rank 0 did: four
// workers failing at once, so rank 0 is only the first torchrun looked at, not a culprit.
TEST(FirstRunFormats, SummaryCutBelowItsHeaderStillShowsSimultaneousExits) {
  std::string text;
  for (int r : {2, 3}) {
    text += "[" + std::to_string(r) +
            "]:\n  time      : 2024-03-05_07:01:51\n  host      : vm\n  rank      : " +
            std::to_string(r) + " (local_rank: " + std::to_string(r) +
            ")\n  exitcode  : 1 (pid: 6981" + std::to_string(r) +
            ")\n  error_file: <N/A>\n  traceback : To enable traceback see: "
            "https://pytorch.org/docs/stable/elastic/errors.html\n";
  }
  text +=
      "------------------------------------------------------------\n"
      "Root Cause (first observed failure):\n[0]:\n  time      : 2024-03-05_07:01:51\n"
      "  host      : vm\n  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 69811)\n"
      "  error_file: <N/A>\n  traceback : To enable traceback see: "
      "https://pytorch.org/docs/stable/elastic/errors.html\n"
      "============================================================\n";
  const Verdict v = AnalyzeLog(text);
  EXPECT_EQ(v.finding.kind, "crash");
  EXPECT_TRUE(v.finding.ranks.empty());
}

// gdb's thread header, "Thread 1 (Thread 0x7feb... (LWP 23530) "python"):", is not py-spy's: the
// file is a log, and its frames show ncclCommAbort joining NCCL's threads (NVIDIA/nccl#1777), a
// hang on the way out.
TEST(FirstRunFormats, GdbThreadHeaderIsALogNotAPySpyDump) {
  const Verdict v = AnalyzeLog(
      "Thread 1 (Thread 0x7feb810ff640 (LWP 23530) \"python\"):\n"
      "#0  0x00007ff0b872aa1f in syscall () from /lib64/libc.so.6\n"
      "#2  0x00007fefe4a7fe62 in c10d::ProcessGroupNCCL::abort() at ProcessGroupNCCL.cpp:XXX\n"
      "#4  0x00007fefe4a7fe62 in ncclCommAbort() at init.cc:XXX\n"
      "#6  0x00007fefe4a7fe62 in pthread_join() at pthread_join.c:XXX\n");
  EXPECT_TRUE(v.unreadable.empty());
  EXPECT_EQ(v.finding.kind, "hang_at_exit");
}

// py-spy without a native thread id prints it in hex: "Thread 0x7F81445A8440 (active):
// "MainThread"" (pytorch/torchtitan#1342). Its main thread in destroy_process_group at the
// script's module level is a process stuck tearing down at exit.
TEST(FirstRunFormats, PySpyHexThreadIdsAreAPySpyDump) {
  const Verdict v = AnalyzeLog(
      "Thread 0x7F81445A8440 (active): \"MainThread\"\n"
      "    destroy_process_group (torch/distributed/distributed_c10d.py:2184)\n"
      "    <module> (torchtitan/train.py:554)\n"
      "Thread 0x7F7D9CFF9640 (idle): \"Thread-2\"\n"
      "    wait (threading.py:324)\n"
      "    run (tqdm/_monitor.py:60)\n");
  EXPECT_TRUE(v.unreadable.empty());
  EXPECT_EQ(v.finding.kind, "hang_at_exit");
  // The dump has no "Process <pid>:" header and no RANK: no rank (nor pid 0) is named.
  for (const Pattern& p : v.patterns) {
    EXPECT_EQ(p.title.find("rank 0"), std::string::npos) << p.title;
    EXPECT_NE(p.title.find("its dump gives no pid"), std::string::npos) << p.title;
  }
}

}  // namespace
}  // namespace strata::hang::first_run_formats_test

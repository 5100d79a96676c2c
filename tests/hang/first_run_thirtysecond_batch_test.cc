// What the thirty-second batch of real cases (tests/golden/hang-real/, `first_run_batch:
// "2026-12-07 (eighth)"`) showed strata reading wrong at its first run. Each test quotes the
// public thread's lines (the case named beside the test) and states what a reader derives from
// them by hand.
#include <gtest/gtest.h>

#include <string>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::first_run_thirtysecond_batch_test {
namespace {

using hang::FailureKind;
using hang::Verdict;
using hang::inputs::AnalyzeLog;

// vllm-project/vllm-ascend#382 (vllm-ascend-382-hccl-watchdog-allreduce-seq196-ranks-1-0):
// torch_npu's ProcessGroupHCCL prints ProcessGroupNCCL's watchdog lines with HCCL's names,
// "[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank 1] Watchdog caught collective
// operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=3600000) ran for 3600185
// milliseconds before timing out.", the same for rank 0. By hand: both ranks waited in the
// work's collective, OpType ALLREDUCE, SeqNum 196, past Timeout(ms) 3600000; neither is shown
// behind, so no culprit. The first run read the timeout but none of the work's fields. Lines of
// that format, other ranks, number, collective and timeout.
std::string HcclTimeout(int rank, const std::string& ran_for) {
  return "[rank" + std::to_string(rank) +
         "]:[E101 09:00:00.000000001 compiler_depend.ts:574] [Rank " + std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=57, "
         "OpType=ALLGATHER, Timeout(ms)=1800000) ran for " +
         ran_for + " milliseconds before timing out.\n";
}

TEST(FirstRunThirtysecondBatch, HcclsWorkLinesNameTheCollectiveItsNumberAndTimeout) {
  const Verdict v = AnalyzeLog(HcclTimeout(3, "1800185") + HcclTimeout(2, "1800993"));
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_EQ(v.finding.op, "ALLGATHER") << v.finding.summary;
  EXPECT_EQ(v.finding.seq, 57) << v.finding.summary;
  EXPECT_EQ(v.finding.timeout_ms, 1800000) << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
}

// pytorch/pytorch#17041 (pytorch-17041-tcp-rendezvous-address-already-in-use) and
// NVIDIA/Megatron-LM#343 (megatron-lm-343-init-tcpstore-address-already-in-use): a traceback
// into torch's _tcp_rendezvous_handler, "store = TCPStore(result.hostname, result.port,
// world_size, start_daemon, timeout)", then "RuntimeError: Address already in use". By hand:
// torch before 1.11 raised the store's failed bind with these words alone; the process that
// starts the rendezvous store could not take its port, so the group never formed: a start-up
// fault (bootstrap), no rank named. The first run read nothing (exit 3). Lines of that format,
// another path.
const std::string kBareBind =
    "File \"/opt/envs/lib/python3.7/site-packages/torch/distributed/rendezvous.py\", line 142, in "
    "_tcp_rendezvous_handler\n"
    "store = TCPStore(result.hostname, result.port, world_size, start_daemon, timeout)\n"
    "RuntimeError: Address already in use\n";

TEST(FirstRunThirtysecondBatch, TorchOnesBareAddressInUseIsAStartUpFault) {
  const auto lines = hang::ScanFailures(kBareBind, "log.txt");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].kind, FailureKind::kBootstrap);
  EXPECT_EQ(lines[0].line, 3);
  const Verdict v = AnalyzeLog(kBareBind);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty()) << v.finding.summary;
  // Prose that mentions the words is no failure.
  EXPECT_TRUE(hang::ScanFailures(
                  "we moved to another port after Address already in use last week\n", "log.txt")
                  .empty());
  // Nor is another library's exception with the same words: pyzmq's ZMQError is an inference
  // server's socket (vLLM's, SGLang's), not the rendezvous store, and "choose a free MASTER_PORT"
  // would be the wrong advice (review finding; it was read as the store's bind before).
  EXPECT_TRUE(
      hang::ScanFailures("zmq.error.ZMQError: Address already in use\n", "log.txt").empty());
}

// aws/aws-ofi-nccl#24 (aws-ofi-nccl-24-mpirun-tag-rank23-net-ofi-couldnt-open-av): mpirun-tagged
// NCCL INFO lines of ranks building their rings, then "[1,23]<stdout>:ip-172-32-45-165:72593:73427
// [7] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid
// argument". By hand: mpirun's tag "[1,23]" is job 1, rank 23; the OFI plugin could not open its
// address vector while rank 23's communicator connected its network channels, before any data
// moved: a start-up fault of rank 23. The first run read nothing (exit 3). Lines of that format,
// another host, rank and resource.
const std::string kOfiOpen =
    "[1,4]<stdout>:node-b:1201:1300 [4] NCCL INFO Ring 00 : 4 -> 5 [send] via NET/AWS "
    "Libfabric/0\n"
    "[1,5]<stdout>:node-b:1202:1301 [5] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't "
    "open CQ. RC: -22, ERROR: Invalid argument\n";

TEST(FirstRunThirtysecondBatch, TheOfiPluginsCouldntOpenIsAStartUpFaultOfItsRank) {
  const Verdict v = AnalyzeLog(kOfiOpen);
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{5}) << v.finding.summary;
  // A rank refused by a peer that never listened is left waiting, not the one that failed: the
  // start-up fault names no rank (wenet-959, nccl-948 read the same way).
  const Verdict refused = AnalyzeLog(
      "[1,5]<stdout>:node-b:1202:1301 [5] NCCL WARN Call to connect returned Connection refused, "
      "retrying\n");
  EXPECT_EQ(refused.finding.kind, "bootstrap") << refused.finding.summary;
  EXPECT_TRUE(refused.finding.ranks.empty()) << refused.finding.summary;
  // The plugin's search for a provider that finds none is no fault: NCCL then runs on its own
  // transports (aws-ofi-nccl's init prints "NET/OFI Couldn't find any optimal provider" and
  // returns, and NCCL falls back to its socket or IB transport). Review finding: it was read as a
  // start-up fault of its rank before.
  EXPECT_TRUE(hang::ScanFailures("node-b:1202:1301 [5] NCCL WARN NET/OFI Couldn't find any "
                                 "optimal provider\n",
                                 "log.txt")
                  .empty());
}

// sql-machine-learning/elasticdl#1895 (elasticdl-1895-gloo-recv-timeout-60000ms-in-barrier-other-
// worker-no-tasks, held back and missed at its run): "ERROR:root:[/pytorch/third_party/gloo/gloo/
// transport/tcp/unbound_buffer.cc:84] Timed out waiting 60000ms for recv operation to complete",
// then a traceback through the program's own barrier helper, whose source line is
// "    dist.barrier()", cut by the excerpt at "  Fil" before torch's distributed_c10d.py frame.
// By hand: the statement the process was executing is the call torch.distributed.barrier(), so
// the Gloo recv that timed out after 60000 ms is the barrier's. The run named no collective.
// Lines of that format, another helper and path.
const std::string kCutBeforeC10d =
    "ERROR:root:[/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:84] Timed out "
    "waiting 60000ms for recv operation to complete\n"
    "Traceback (most recent call last):\n"
    "  File \"/opt/app/comm.py\", line 40, in sync_all\n"
    "    dist.barrier()\n"
    "  Fil\n";

TEST(FirstRunThirtysecondBatch, TheCallersSourceLineNamesTheCollectiveWhenC10dsFrameIsCut) {
  const Verdict v = AnalyzeLog(kCutBeforeC10d);
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_EQ(v.finding.op, "barrier") << v.finding.summary;
  EXPECT_EQ(v.finding.timeout_ms, 60000) << v.finding.summary;
  // A call that is no collective (a rank query) names none.
  const auto lines = hang::ScanFailures("    rank = dist.get_rank()\n", "log.txt");
  EXPECT_TRUE(lines.empty());
  // Review findings (each read wrong before): a keyword argument's " = " is no assignment, a
  // returned call is the statement's call, and printed text that goes on after a call is no
  // source line.
  struct Case {
    const char* line;
    const char* op;  // "" = no frame
  };
  const Case cases[] = {
      {"    dist.all_reduce(t, op = dist.ReduceOp.SUM)\n", "all_reduce"},
      {"    return dist.barrier()\n", "barrier"},
      {"    work = torch.distributed.all_gather(out, t,\n", "all_gather"},
      {"dist.barrier() done, leaving\n", ""},
  };
  for (const Case& c : cases) {
    const auto read = hang::ScanFailures(c.line, "log.txt");
    if (std::string(c.op).empty()) {
      EXPECT_TRUE(read.empty()) << c.line;
    } else {
      ASSERT_EQ(read.size(), 1u) << c.line;
      EXPECT_EQ(read[0].op, c.op) << c.line;
    }
  }
}

}  // namespace
}  // namespace strata::first_run_thirtysecond_batch_test

// What the second batch of real cases collected on 2026-12-04 showed strata reading wrong at its
// first run (tests/golden/hang-real/, `first_run_batch: "2026-12-04 (second)"`), and the items of
// issue 33's "wrong or misleading" list those cases met again. Each test quotes the public
// thread's lines (the case under tests/golden/hang-real/ or the URL named beside the test) and
// states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"
#include "strata/hang/parsers/failure_log.h"

namespace strata::hang::first_run_second_batch_test {
namespace {

using inputs::AnalyzeLog;

std::vector<FailureSignal> Scan(const std::string& text) { return ScanFailures(text, "log.txt"); }

// NVIDIA/nccl#1920: "socketProgressOpt: Call to send to 10.44.137.149<52905> failed : Connection
// reset by peer". The peer is the address after "send to", not the word after the first " to "
// ("Call to send"), which read as the peer "send". A receive names its peer after "from"
// (NVIDIA/nccl#795: "Call to recv from 10.200.84.247<58355> failed : Broken pipe").
TEST(FirstRunSecondBatch, SocketErrorNamesTheAddressItSentTo) {
  const auto sent = Scan(
      "2025-11-24T03:20:21.001125857Z [2025-11-24 11:20:21] gpu-server320 [5] misc/socket.cc:46 "
      "NCCL WARN socketProgressOpt: Call to send to 10.44.137.149<52905> failed : Connection "
      "reset by peer\n");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].kind, FailureKind::kNetwork);
  EXPECT_EQ(sent[0].peer, "10.44.137.149");
  const auto received = Scan(
      "a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv "
      "from 10.200.84.247<58355> failed : Broken pipe\n");
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].peer, "10.200.84.247");
  // In NCCL's bootstrap (the trace climbs to bootstrap.cc) it is a start-up fault naming that
  // peer.
  const Verdict v = AnalyzeLog(
      "2025-11-24T03:20:21.001125857Z [2025-11-24 11:20:21] gpu-server320 [5] misc/socket.cc:46 "
      "NCCL WARN socketProgressOpt: Call to send to 10.44.137.149<52905> failed : Connection "
      "reset by peer\n"
      "2025-11-24T03:20:21.001135879Z gpu-server320 [5] NCCL INFO bootstrap.cc:868 -> 6 "
      "ncclSocketConnect()\n");
  EXPECT_EQ(v.finding.kind, "bootstrap");
  EXPECT_EQ(v.finding.peer, "10.44.137.149");
}

// pytorch/pytorch#108732: dist.new_group(backend="gloo") builds ProcessGroupGloo, whose TCP pairs
// connect to every peer while the group is created; "connect [172.31.71.170]:13195: Connection
// refused" is that set-up failing, a start-up fault naming 172.31.71.170, not "no verdict".
TEST(FirstRunSecondBatch, GlooPairConnectRefusedIsAStartUpFaultNamingThePeer) {
  const Verdict v = AnalyzeLog(
      "    backend_class = ProcessGroupGloo(backend_prefix_store, group_rank, group_size, "
      "timeout=timeout)\n"
      "RuntimeError: [/opt/conda/conda-bld/pytorch_1682343967769/work/third_party/gloo/gloo/"
      "transport/tcp/pair.cc:799] connect [172.31.71.170]:13195: Connection refused\n");
  EXPECT_EQ(v.finding.kind, "bootstrap");
  EXPECT_EQ(v.finding.peer, "172.31.71.170");  // without the port
  EXPECT_TRUE(IsProblem(v.finding));
  // An IPv6 peer keeps its colons: the same message built for the link-local address of
  // NVIDIA/nccl#928's hosts (Gloo writes the address in brackets, then ":port").
  const auto v6 = Scan(
      "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
      "[fe80::966d:ae03:8b:df78%ib0]:40231: Connection timed out\n");
  ASSERT_EQ(v6.size(), 1u);
  EXPECT_EQ(v6[0].kind, FailureKind::kBootstrap);
  EXPECT_EQ(v6[0].peer, "fe80::966d:ae03:8b:df78%ib0");
}

// deepspeedai/DeepSpeedExamples#302: one process's py-spy dump, its main thread in
// torch/utils/file_baton.py's wait under cpp_extension's _jit_compile, for as long as the
// reporter waited. FileBaton polls for a lock file another process created; no process in the
// evidence is building, so the lock is stale (a build killed mid-way leaves it). Issue 33: a lone
// process waiting on a file lock was called healthy (exit 0); it is the hang, and the headline
// names it by pid, since the dump gives no RANK.
TEST(FirstRunSecondBatch, AProcessWaitingOnAStaleBuildLockIsAHangNotHealthy) {
  const std::string dump =
      "Process 46930: /home/qi/anaconda3/envs/deepspeed/bin/python -u main.py --local_rank=0\n"
      "Python v3.11.2 (/home/qi/anaconda3/envs/deepspeed/bin/python3.11)\n\n"
      "Thread 46930 (idle): \"MainThread\"\n"
      "    wait (torch/utils/file_baton.py:42)\n"
      "    _jit_compile (torch/utils/cpp_extension.py:1522)\n"
      "    load (torch/utils/cpp_extension.py:1284)\n"
      "    jit_load (deepspeed/ops/op_builder/builder.py:480)\n"
      "    load (deepspeed/ops/op_builder/builder.py:449)\n"
      "    __init__ (deepspeed/runtime/engine.py:377)\n"
      "    initialize (deepspeed/__init__.py:156)\n"
      "    main (main.py:273)\n"
      "    <module> (main.py:328)\n"
      "Thread 47073 (idle): \"Thread-1\"\n"
      "    wait (threading.py:324)\n"
      "    wait (threading.py:622)\n"
      "    run (tqdm/_monitor.py:60)\n";
  EvidenceSet set;
  AddEvidenceFile(set, dump, "pyspy.txt");
  const Verdict v = Analyze(set, {});
  EXPECT_TRUE(v.hang) << v.headline;
  EXPECT_TRUE(IsProblem(v.finding)) << v.finding.kind;
  EXPECT_EQ(v.finding.kind, "lagging_rank");
  EXPECT_TRUE(v.finding.ranks.empty());  // a pid, not a rank
  EXPECT_EQ(v.headline.rfind("hang: culprit pid 46930 (RANK unknown)", 0), 0u) << v.headline;
  ASSERT_FALSE(v.groups.empty());
  EXPECT_EQ(v.groups[0].activity.op, "FileBaton.wait");
  EXPECT_EQ(v.headline.find("rank 46930"), std::string::npos) << v.headline;
}

// The same wait with a RANK, while the others wait in all_reduce (the shape of issue 33's
// DeepSpeed extension build: one rank died mid-build, the next waits on its lock): the waiting
// rank is the culprit, named by rank.
TEST(FirstRunSecondBatch, ARankOnAStaleBuildLockIsTheCulpritOfTheOthersWait) {
  const std::vector<std::string> in_baton = {
      "wait (torch/utils/file_baton.py:42)", "_jit_compile (torch/utils/cpp_extension.py:1522)",
      "load (torch/utils/cpp_extension.py:1284)", "main (main.py:273)", "<module> (main.py:328)"};
  EvidenceSet set;
  AddEvidenceFile(set, inputs::PySpy(4100, in_baton, true), "pyspy-rank0.txt", 0);
  AddEvidenceFile(set, inputs::PySpy(4101, inputs::kInAllReduce, false), "pyspy-rank1.txt", 1);
  AddEvidenceFile(set, inputs::PySpy(4102, inputs::kInAllReduce, false), "pyspy-rank2.txt", 2);
  const Verdict v = Analyze(set, {});
  ASSERT_TRUE(v.culprit.has_value()) << v.headline;
  EXPECT_EQ(v.culprit->ranks, std::vector<int64_t>{0});
  EXPECT_EQ(v.finding.kind, "lagging_rank");
  EXPECT_EQ(v.finding.ranks, std::vector<int64_t>{0});
  // The chain says what rank 0 waits on, not only that it is outside a collective.
  ASSERT_FALSE(v.culprit->chain.empty());
  EXPECT_NE(v.culprit->chain.front().find("waiting on a lock file (FileBaton.wait)"),
            std::string::npos)
      << v.culprit->chain.front();
}

// Issue 33: "process ids are printed as ranks when no rank is known". One dump without a RANK,
// its process computing (not waiting on anyone): no hang, and the headline says "pid 4100",
// never "rank 4100".
TEST(FirstRunSecondBatch, NoHangHeadlineNamesProcessesByPid) {
  const std::vector<std::string> computing = {"forward (model.py:88)",
                                              "_call_impl (torch/nn/modules/module.py:1501)",
                                              "train_step (train.py:40)", "<module> (train.py:90)"};
  EvidenceSet set;
  AddEvidenceFile(set, inputs::PySpy(4100, computing, false), "a.txt");
  const Verdict v = Analyze(set, {});
  EXPECT_FALSE(v.hang) << v.headline;
  EXPECT_EQ(v.headline.find("rank 4100"), std::string::npos) << v.headline;
  EXPECT_NE(v.headline.find("pid 4100"), std::string::npos) << v.headline;
}

// deepspeedai/DeepSpeed#5394 (held back, missed when the held-back cases were run): the paste
// opens with the Hugging Face Trainer's metrics, a Python dict's repr ("{'loss': 1.7157, ...}"),
// and was refused as "JSON of no known kind" (exit 2). A JSON object's first key is
// double-quoted; this is a log, and its last line is rank 0's watchdog timeout at SeqNum 9314.
TEST(FirstRunSecondBatch, ALogOpeningWithAPythonDictIsALogNotJson) {
  const Verdict v = AnalyzeLog(
      "{'loss': 1.7157, 'grad_norm': 0.0, 'learning_rate': 0.0, 'epoch': 0.02}\n"
      "{'eval_loss': 1.8737543821334839, 'eval_runtime': 14.4006, 'epoch': 0.02}\n"
      " 2%|▏         | 1/42 [02:52<1:48:00, 158.06s/i[rank0]:[E ProcessGroupNCCL.cpp:523] [Rank "
      "0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9314, "
      "OpType=_REDUCE_SCATTER_BASE, NumelIn=131072000, NumelOut=32768000, Timeout(ms)=600000) \n");
  EXPECT_TRUE(v.unreadable.empty());
  EXPECT_EQ(v.finding.kind, "collective_timeout");
  EXPECT_EQ(v.finding.op, "_REDUCE_SCATTER_BASE");
  EXPECT_EQ(v.finding.seq, 9314);
  EXPECT_EQ(v.finding.timeout_ms, 600000);
  // A JSON object of no known kind is still refused, naming what was expected.
  const Verdict json = AnalyzeLog("{\"step\": 3, \"loss\": 1.2}\n");
  ASSERT_EQ(json.unreadable.size(), 1u);
  EXPECT_NE(json.unreadable[0].reason.find("JSON of no known kind"), std::string::npos);
}

}  // namespace
}  // namespace strata::hang::first_run_second_batch_test

// What the fourteenth batch of real cases (tests/golden/hang-real/, `first_run_batch: "2026-12-05
// (ninth)"`, the part not held back) showed strata reading wrong at its first run. Each test
// quotes the public thread's lines (the case named beside the test) and states what a reader
// derives from them by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// huggingface/accelerate#1645 (accelerate-1645-elastic-agent-share-and-gather-socket-timeout):
// torchrun's agent fails in "_assign_worker_ranks -> _share_and_gather -> store_util.synchronize
// -> get_all -> store.get" with "RuntimeError: Socket Timeout". SimpleElasticAgent assigns the
// workers' ranks right after its rendezvous, before any worker starts
// (torch/distributed/elastic/agent/server/api.py, _initialize_workers): the agents never
// exchanged their role infos, a start-up fault. By hand: bootstrap, no rank. The first run took
// "_share_and_gather" for a running all-gather and said a mid-run collective timeout.
TEST(FirstRunFourteenthBatch, TorchrunAgentRankAssignmentStoreTimeoutIsAStartUpFault) {
  const std::string api =
      "/mnt/cache/share_data/home_origin/env/.grouplib/lib/python3.8/site-packages/torch/"
      "distributed/elastic/";
  const Verdict v = AnalyzeLog(
      "  File \"" + api + "agent/server/api.py\", line 624, in _assign_worker_ranks\n" +
      "    role_infos = self._share_and_gather(store, group_rank, group_world_size, spec)\n" +
      "  File \"" + api + "agent/server/api.py\", line 661, in _share_and_gather\n" +
      "    role_infos_bytes = store_util.synchronize(\n" + "  File \"" + api +
      "utils/store.py\", line 64, in synchronize\n" +
      "    agent_data = get_all(store, rank, key_prefix, world_size)\n" + "  File \"" + api +
      "utils/store.py\", line 34, in get_all\n" + "    data = store.get(f\"{prefix}{idx}\")\n" +
      "RuntimeError: Socket Timeout\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: the same timeout under a training step's all_gather stays a mid-run wait.
  const Verdict mid = AnalyzeLog(
      "  File \"train.py\", line 88, in training_step\n"
      "  File \"train.py\", line 40, in all_gather_stats\n"
      "RuntimeError: Socket Timeout\n");
  EXPECT_EQ(mid.finding.kind, "collective_timeout") << mid.finding.summary;
}

// AI-Hypercomputer/gpu-recipes#2 (gpu-recipes-2-jax-cluster-registration-barrier-timeout):
// "Stopping coordination service as cluster registration failed. This may be due to 1) some tasks
// crashed earlier before connecting, 2) some tasks were never scheduled, or 3) scheduling
// delays." then "Original error: DEADLINE_EXCEEDED: Barrier timed out. Id:
// [Init]Wait_for_all_tasks_to_register::0". Every JAX process registers with the coordination
// service at jax.distributed.initialize; that barrier timing out means the job never formed. By
// hand: a start-up fault, no task named. The first run read nothing (no verdict, exit 3).
TEST(FirstRunFourteenthBatch, JaxClusterRegistrationBarrierIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "Stopping coordination service as cluster registration failed. This may be due to 1) some "
      "tasks crashed earlier before connecting, 2) some tasks were never scheduled, or 3) "
      "scheduling delays. Consider setting a longer initialization timeout if such delays are "
      "expected, the timeout is currently set to: 1h.\n\n"
      "Original error: DEADLINE_EXCEEDED: Barrier timed out. Id: "
      "[Init]Wait_for_all_tasks_to_register::0. This usually happens because a task triggered the "
      "barrier too early or too slowly. Please look at the task logs (both timed out and first "
      "task) to debug further.\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_NE(v.finding.summary.find("registration"), std::string::npos) << v.finding.summary;
}

// horovod/horovod#410 and #3412 (horovod-410-dashed-primary-job-aborted-then-horovod-shut-down,
// horovod-3412-tagged-rank0-allreduce-horovod-shut-down): Open MPI's box "Primary job  terminated
// normally, but 1 process returned / a non-zero exit code. Per user-direction, the job has been
// aborted.", around Horovod's "has been shut down. This was caused by an exception on one of the
// ranks". A process ended with an error exit code of its own (a signal would read "mpirun
// noticed ... exited on signal"); the box names no rank. By hand: a crash, no rank. The first run
// read nothing in either (no verdict, exit 3).
TEST(FirstRunFourteenthBatch, OpenMpiJobAbortedBoxIsACrashOfAnUnnamedProcess) {
  const std::string box =
      "-------------------------------------------------------\n"
      "Primary job  terminated normally, but 1 process returned\n"
      "a non-zero exit code. Per user-direction, the job has been aborted.\n"
      "-------------------------------------------------------\n";
  const Verdict v = AnalyzeLog(
      "[1,0]<stderr>:Horovod has been shut down. This was caused by an exception on one of the "
      "ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks "
      "finished execution. If the shutdown was caused by an exception, you should see the "
      "exception in the log before the first shutdown message.\n" +
      box);
  EXPECT_EQ(v.finding.kind, "crash") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // horovod/horovod#1421's block after the box names the first process to exit: rank 0, exit
  // code 1. That record, not the box, gives the verdict.
  const Verdict named = AnalyzeLog(
      box +
      "--------------------------------------------------------------------------\n"
      "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
      "the job to be terminated. The first process to do so was:\n\n"
      "  Process name: [[29973,1],0]\n"
      "  Exit code:    1\n");
  EXPECT_EQ(named.finding.kind, "crash") << named.finding.summary;
  EXPECT_EQ(named.finding.ranks, (std::vector<int64_t>{0}));
}

// NVIDIA/nccl#1710 (nccl-1710-blockquoted-markdown-links-ib-async-event-status9-peer): the paste
// sits outside a code block, so GitHub turned file:line names and addresses into links: "...
// transport/[net_ib.cc:1909](http://net_ib.cc:1909/) NCCL WARN NET/IB : Got completion from peer
// [10.1.3.201](http://10.1.3.201/)<33057> with status=9 ...". The program wrote "peer
// 10.1.3.201<33057>". By hand: a network failure with peer 10.1.3.201. The first run kept the
// link's bracket and target as the peer ("[10.1.3.201](http").
TEST(FirstRunFourteenthBatch, MarkdownLinksInAPasteAreReadAsTheirText) {
  const Verdict v = AnalyzeLog(
      "> node023:10214:10303 [0] transport/[net_ib.cc:1909](http://net_ib.cc:1909/) NCCL WARN "
      "NET/IB : Got completion from peer [10.1.3.201](http://10.1.3.201/)<33057> with status=9 "
      "opcode=0 len=0 vendor err 138 (Send) localGid ::ffff:[10.206.1.23](http://10.206.1.23/) "
      "remoteGids::ffff:[10.206.1.11](http://10.206.1.11/)\n"
      "> node023:10214:10303 [0] NCCL INFO transport/[net.cc:1137](http://net.cc:1137/) -> 6\n");
  EXPECT_EQ(v.finding.kind, "network") << v.finding.summary;
  EXPECT_EQ(v.finding.peer, "10.1.3.201");
  // Hand-made from NVIDIA/physicsnemo#691's watchdog line, its file:line linked the way GitHub
  // renders it: the "[rank3]:" prefix, a bracket that is no link, stays torchrun's rank.
  const Verdict watchdog = AnalyzeLog(
      "[rank3]:[E1016 03:33:45.317536384 [ProcessGroupNCCL.cpp:568](http://processgroupnccl.cpp:"
      "568/)] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=50, "
      "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600011 milliseconds "
      "before timing out.\n");
  EXPECT_EQ(watchdog.finding.kind, "collective_timeout") << watchdog.finding.summary;
  EXPECT_EQ(watchdog.finding.seq, 50);
}

// NVIDIA/nccl-tests#188 (nccl-tests-188-socket-finalize-accept-wrong-type-proxy-connect): while the
// communicator is built, "misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3",
// then "[Proxy Service 2] Failed to execute operation Connect from rank 2, retcode 3". NCCL's
// include/socket.h numbers socket types 1 Bootstrap, 2 Proxy, 3 NetSocket, 4 NetIb: a socket-
// transport listener (3) was reached by a peer on the InfiniBand transport (4). By hand: the
// ranks chose different network transports at set-up, a start-up fault of the settings
// (NCCL_NET / NCCL_IB_DISABLE), no rank to blame. The first run read the proxy's retcode as a
// network failure.
TEST(FirstRunFourteenthBatch, SocketTypeMismatchAtAcceptIsAStartUpFaultOfTheTransports) {
  const Verdict v = AnalyzeLog(
      "user:16902:16954 [3] NCCL INFO Connected all trees\n"
      "user:16901:16967 [2] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3\n"
      "user:16901:16967 [2] NCCL INFO misc/socket.cc:561 -> 3\n"
      "user:16901:16967 [2] NCCL INFO transport/net_socket.cc:375 -> 3\n"
      "user:16901:16967 [2] proxy.cc:1519 NCCL WARN [Proxy Service 2] Failed to execute "
      "operation Connect from rank 2, retcode 3\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_NE(v.finding.setting.find("NCCL_IB_DISABLE"), std::string::npos) << v.finding.setting;
}

// The batch's held-back cases missed when they were run once the code above was done, read since
// (their case.yaml says held_back_first_run).

// marin-community/marin#1933 (marin-1933-jax-barrier-multihost-broadcast-tasks-3-0): levanter's
// multihost_broadcast_sync waits at a coordination-service barrier; "DEADLINE_EXCEEDED: Barrier
// timed out. Barrier_id: multihost_broadcast_sync0. Timed out task names:" then
// "/job:jax_worker/replica:0/task:3" and ".../task:0". The service lists the tasks still pending
// when the barrier expired; a task's number is its process index. By hand: processes 0 and 3
// never reached the barrier the others waited at, lagging. The held-back run read nothing.
TEST(FirstRunFourteenthBatch, JaxBarrierOfTheProgramNamesTheTasksThatNeverArrived) {
  const Verdict v = AnalyzeLog(
      "    client.wait_at_barrier(f\"multihost_broadcast_sync{_sync_counter}\", "
      "timeout_in_ms=int(timeout * 1000.0))\n"
      "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
      "multihost_broadcast_sync0. Timed out task names:\n"
      "/job:jax_worker/replica:0/task:3\n"
      "/job:jax_worker/replica:0/task:0\n"
      "\n"
      "Additional GRPC error information from remote target "
      "unknown_target_for_coordination_leader while calling "
      "/tensorflow.CoordinationService/Barrier:\n");
  EXPECT_EQ(v.finding.kind, "lagging_rank") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, (std::vector<int64_t>{0, 3}));
  // The start-up barrier keeps its reading: the tasks it lists never connected, none is blamed.
  const Verdict connect = AnalyzeLog(
      "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
      "PjRT_Client_Connect. Timed out task names:\n/job:jax_worker/replica:0/task:1\n");
  EXPECT_EQ(connect.finding.kind, "bootstrap") << connect.finding.summary;
  EXPECT_TRUE(connect.finding.ranks.empty());
}

// NVIDIA/nccl#230 (nccl-230-mpirun-timestamped-tags-ib-local-catastrophic-error): behind a
// timestamp and mpirun's tag, "transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local
// catastrophic error" on ranks 12, 14 and 13 of one host. ibv_event_type_str's "local
// catastrophic error" is IBV_EVENT_DEVICE_FATAL: the adapter failed. By hand: a network (HCA)
// fault, no rank blamed by the corpus's convention. The held-back run read nothing.
TEST(FirstRunFourteenthBatch, InfinibandAdapterErrorEventIsANetworkFault) {
  const Verdict v = AnalyzeLog(
      "2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:"
      "864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic "
      "error\n"
      "2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:"
      "864 [0] misc/ibvwrap.cu:220 NCCL WARN Call to ibv_get_async_event failed\n");
  EXPECT_EQ(v.finding.kind, "network") << v.finding.summary;
  EXPECT_NE(v.finding.summary.find("catastrophic"), std::string::npos) << v.finding.summary;
  // Hand-made: a routine event ("port active") is no fault.
  EXPECT_EQ(AnalyzeLog("node1:1:2 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : port "
                       "active\n")
                .finding.kind,
            "unknown");
}

// sgl-project/sglang#7478 (sglang-7478-ipv6-multihost-waitforinput-store-timeout-node0):
// "[rank1]:[W623 15:37:01.824135523 socket.cpp:485] [c10d] waitForInput: socket
// SocketImpl(fd=100, addr=[node-0.company.net]:43590, remote=[node-0.company.net]:20000) timed
// out after 1800000ms". The socket's remote end is the store the rank waited on. By hand: a
// start-up fault with the store at node-0.company.net. The held-back run gave no peer.
TEST(FirstRunFourteenthBatch, StoreWaitNamesTheStoreHostAsThePeer) {
  const Verdict v = AnalyzeLog(
      "[rank1]:[W623 15:37:01.823833318 socket.cpp:460] [c10d] waitForInput: poll for socket "
      "SocketImpl(fd=100, addr=[node-0.company.net]:43590, remote=[node-0.company.net]:20000) "
      "returned 0, likely a timeout\n"
      "[rank1]:[W623 15:37:01.824135523 socket.cpp:485] [c10d] waitForInput: socket "
      "SocketImpl(fd=100, addr=[node-0.company.net]:43590, remote=[node-0.company.net]:20000) "
      "timed out after 1800000ms\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_EQ(v.finding.peer, "node-0.company.net");
  // modelscope/ms-swift#3343's IPv4 address mapped into IPv6 is given as the IPv4 address.
  const Verdict mapped = AnalyzeLog(
      "[W228 18:45:15.741177013 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=11, "
      "addr=[xxxxxx.com]:38674, remote=[::ffff:33.148.62.162]:23456) timed out after 900000ms\n");
  EXPECT_EQ(mapped.finding.peer, "33.148.62.162") << mapped.finding.summary;
}

// An open miss of an earlier batch, read by the same kind of rule.

// vllm-project/vllm#4108 (vllm-4108-ray-abort-then-illegal-memory-access-rank0): a Ray worker of
// unknown rank aborts first, "(RayWorkerVllm pid=7046) Fatal Python error: Aborted", and only
// then "[E ProcessGroupNCCL.cpp:916] [Rank 0] NCCL watchdog thread terminated with exception:
// CUDA error: an illegal memory access was encountered". The worker failed before rank 0's line,
// for a reason the paste does not hold. By hand: a CUDA fault, no rank shown to be the first.
// Before: cuda_error [0].
TEST(FirstRunFourteenthBatch, CrashOfAnUnknownRankBeforeACudaErrorLeavesTheRankUnnamed) {
  const std::string abort = "(RayWorkerVllm pid=7046) Fatal Python error: Aborted\n";
  const std::string cuda =
      "[E ProcessGroupNCCL.cpp:916] [Rank 0] NCCL watchdog thread terminated with exception: CUDA "
      "error: an illegal memory access was encountered\n";
  const Verdict v = AnalyzeLog(abort + cuda);
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  // Hand-made: the abort printed after rank 0's CUDA error follows it; rank 0 stays named.
  const Verdict after = AnalyzeLog(cuda + abort);
  EXPECT_EQ(after.finding.kind, "cuda_error") << after.finding.summary;
  EXPECT_EQ(after.finding.ranks, (std::vector<int64_t>{0}));
}

}  // namespace
}  // namespace strata::hang

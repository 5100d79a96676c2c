// What the thirteenth batch of real cases (tests/golden/hang-real/, `first_run_batch: "2026-12-05
// (eighth)"`, the part not held back) showed strata reading wrong at its first run. Each test
// quotes the public thread's lines (the case named beside the test) or says how its lines were
// made, and states what a reader derives from them by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "first_cause_inputs.h"
#include "strata/hang/analysis/finding.h"

namespace strata::hang {
namespace {

using inputs::AnalyzeLog;

// NVIDIA/nccl#1241, verl-project/verl#161, NVIDIA/Megatron-LM#661, facebookresearch/ViewDiff#24,
// Intellindust-AI-Lab/DEIMv2#155: "ncclInvalidUsage: This usually reflects invalid usage of NCCL
// library. / Last error: / Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 10".
// NCCL refuses, while it builds the communicator, a clique in which two ranks share one device
// (init.cc checks every rank's busId against the others'). By hand: the launch put two ranks on
// one GPU; nothing ran yet, so a start-up fault, not a hang; the pair shares the fault, so no
// rank is named; what to check is the rank-to-GPU mapping, not MASTER_ADDR. The first run read
// nothing in the five pastes (no verdict, exit 3).
TEST(FirstRunThirteenthBatch, DuplicateGpuIsAStartUpFaultOfTheRankToGpuMapping) {
  const Verdict v = AnalyzeLog(
      "torch.distributed.DistBackendError: NCCL error in: "
      "../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, invalid usage (run with "
      "NCCL_DEBUG=WARN for details), NCCL version 2.20.5\n"
      "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
      "Last error:\n"
      "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 10\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_NE(v.finding.summary.find("one GPU"), std::string::npos) << v.finding.summary;
  EXPECT_EQ(v.finding.setting.find("MASTER_ADDR"), std::string::npos) << v.finding.setting;
  // The words inside prose about a job are no NCCL report.
  const Verdict prose = AnalyzeLog("we saw no duplicate GPU detected in the inventory\n");
  EXPECT_NE(prose.finding.kind, "bootstrap") << prose.finding.summary;
}

// NVIDIA/nccl#348: mpirun -tag-output, "[1,13]<stdout>:192.168.0.138: Test CUDA failure
// common.cu:732 'invalid device ordinal'" for ranks 8 to 15. nccl-tests' CUDACHECK prints
// "<host>: Test CUDA failure <file>:<line> '<cudaGetErrorString>'" and exits: a CUDA call failed
// in that process. By hand: a CUDA error on the ranks of the tags, 8 to 15. The first run read
// nothing (no verdict, exit 3).
TEST(FirstRunThirteenthBatch, NcclTestsCudaCheckFailureIsACudaErrorOfTheTaggedRanks) {
  std::string log =
      "[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 33554432 maxBytes 33554432 step: "
      "1048576(bytes) warmup iters: 5 iters: 20 validation: 1 \n"
      "[1,0]<stdout>:# Using devices\n";
  for (int rank : {13, 8, 9}) {
    log += "[1," + std::to_string(rank) +
           "]<stdout>:192.168.0.138: Test CUDA failure common.cu:732 'invalid device ordinal'\n";
  }
  const Verdict v = AnalyzeLog(log);
  EXPECT_EQ(v.finding.kind, "cuda_error") << v.finding.summary;
  EXPECT_EQ(v.finding.ranks, (std::vector<int64_t>{8, 9, 13}));
  EXPECT_NE(v.finding.summary.find("invalid device ordinal"), std::string::npos)
      << v.finding.summary;
}

// JF-D/Parcae#1: "etcd.EtcdKeyNotFound: Key not found :
// /torchelastic/p2p/run_c63361db-da0b-40ca-90a6-a59be99e2a0b/rdzv/next_strategy" then "Node
// x08j11224.cloud.sqa.na131 Attempting to join next rendezvous", at every rendezvous. torch's
// etcd rendezvous keeps its state under /torchelastic/p2p/run_<id>/rdzv and its store under
// /torch/elastic/store (pytorch/pytorch#132950's key): python-etcd's exception on such a key is
// the launcher's rendezvous failing. By hand: the workers never formed, a start-up fault, the
// etcd server at rdzv_endpoint to check. The first run read nothing (no verdict, exit 3).
TEST(FirstRunThirteenthBatch, EtcdRendezvousBackendFailureIsAStartUpFault) {
  const Verdict v = AnalyzeLog(
      "    raise exc(msg, payload)\n"
      "etcd.EtcdKeyNotFound: Key not found : "
      "/torchelastic/p2p/run_c63361db-da0b-40ca-90a6-a59be99e2a0b/rdzv/next_strategy\n"
      "INFO 2024-06-12 12:55:46,077 Node x08j11224.cloud.sqa.na131 Attempting to join next "
      "rendezvous\n");
  EXPECT_EQ(v.finding.kind, "bootstrap") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_EQ(v.finding.setting, "rdzv_endpoint") << v.finding.summary;
  // An application's own etcd key is no rendezvous of torch's.
  const Verdict other = AnalyzeLog("etcd.EtcdKeyNotFound: Key not found : /vulcand\n");
  EXPECT_NE(other.finding.kind, "bootstrap") << other.finding.summary;
}

// horovod/horovod#1182: gdb's partial backtrace of rank 0, "#4  0x00007fe93f3e518d in PMPI_Gather
// () / from /usr/local/openmpi/lib/libmpi.so.40" under Horovod's RunLoopOnce (the coordinator).
// An MPI collective completes on no member before every member has entered it (the gather's root
// receives from each), so a thread dumped inside one waits on members that have not come. By
// hand: a collective that does not complete, MPI_Gather, no rank named (only rank 0 is shown).
// The first run read nothing (no verdict, exit 3).
TEST(FirstRunThirteenthBatch, GdbThreadInsideAnMpiCollectiveWaitsOnItsPeers) {
  const Verdict v = AnalyzeLog(
      "Thread 2 (Thread 0x7fe9be0b1700 (LWP 442)):\n"
      "#0  0x00007fe934790bce in mca_btl_smcuda_component_progress ()\n"
      "   from /usr/local/openmpi/lib/openmpi/mca_btl_smcuda.so\n"
      "#3  0x00007fe93f41b8ff in ompi_coll_base_gather_intra_basic_linear ()\n"
      "   from /usr/local/openmpi/lib/libmpi.so.40\n"
      "#4  0x00007fe93f3e518d in PMPI_Gather ()\n"
      "   from /usr/local/openmpi/lib/libmpi.so.40\n");
  EXPECT_EQ(v.finding.kind, "collective_timeout") << v.finding.summary;
  EXPECT_TRUE(v.finding.ranks.empty());
  EXPECT_EQ(v.finding.op, "MPI_Gather") << v.finding.summary;
  // A point-to-point call (made: the same frame in PMPI_Recv) is no collective.
  const Verdict p2p = AnalyzeLog("#4  0x00007fe93f3e518d in PMPI_Recv ()\n");
  EXPECT_NE(p2p.finding.kind, "collective_timeout") << p2p.finding.summary;
  // A watchdog's timeout in the same log is the stronger evidence and keeps its collective.
  const Verdict both = AnalyzeLog(inputs::TimeoutLine(0, 7, "ALLREDUCE") +
                                  "#4  0x00007fe93f3e518d in PMPI_Gather ()\n");
  EXPECT_EQ(both.finding.op, "ALLREDUCE") << both.finding.summary;
}

}  // namespace
}  // namespace strata::hang

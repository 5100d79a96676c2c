#include "strata/comm/collective.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

// nccl-tests doc/PERFORMANCE.md: busbw = algbw x factor, by collective and rank count n.
TEST(Collective, BusBwFactorsAreNcclTests) {
  struct Case {
    CollectiveOp op;
    int64_t ranks;
    double factor;  // worked by hand from the doc's formulas
  };
  const Case cases[] = {
      {CollectiveOp::kAllReduce, 8, 1.75},     // 2 x 7 / 8
      {CollectiveOp::kAllReduce, 40, 1.95},    // 2 x 39 / 40
      {CollectiveOp::kAllReduce, 2, 1.0},      // 2 x 1 / 2
      {CollectiveOp::kAllGather, 8, 0.875},    // 7 / 8
      {CollectiveOp::kReduceScatter, 5, 0.8},  // 4 / 5
      {CollectiveOp::kAllToAll, 8, 0.875},     // 7 / 8
      {CollectiveOp::kBroadcast, 40, 1.0},
      {CollectiveOp::kReduce, 40, 1.0},
      {CollectiveOp::kSendRecv, 2, 1.0},
      {CollectiveOp::kAllGather, 1, 0.0},  // one rank moves nothing
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(ToString(c.op) + " n=" + std::to_string(c.ranks));
    EXPECT_NEAR(BusBwFactor(c.op, c.ranks), c.factor, 1e-12);
  }
}

// Rows copied from published nccl-tests output; our algbw and busbw from (size, time) must give
// the printed columns (nccl-tests prints two decimals, hence the 0.006 GB/s tolerance).
TEST(Collective, ReproducesPublishedNcclTestsRows) {
  struct Row {
    const char* source;
    CollectiveOp op;
    int64_t ranks;
    double size_bytes;
    double time_us;
    double algbw_gbps;
    double busbw_gbps;
  };
  const Row rows[] = {
      // NVIDIA/nccl#1161: all_reduce_perf -g 2 on two NVLink-bridged H100 PCIe.
      {"nccl#1161", CollectiveOp::kAllReduce, 2, 1073741824, 9306.7, 115.37, 115.37},
      // NVIDIA/nccl-tests#290: all_reduce_perf on 2 nodes x 8 H100 (16 ranks): 8 GiB row.
      {"nccl-tests#290", CollectiveOp::kAllReduce, 16, 8589934592, 103530, 82.97, 155.57},
      // li-plus/playground cuda/nccl.md: sendrecv_perf -g 8 on 8 A100 (NVSwitch), 1 GiB row.
      {"playground sendrecv", CollectiveOp::kSendRecv, 8, 1073741824, 5503.4, 195.10, 195.10},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.source);
    const Bytes size = Bytes::Count(r.size_bytes);
    const Seconds time = Seconds::Us(r.time_us);
    EXPECT_NEAR(AlgBw(size, time).gb_per_s(), r.algbw_gbps, 0.006);
    EXPECT_NEAR(BusBw(r.op, r.ranks, size, time).gb_per_s(), r.busbw_gbps, 0.006);
  }
}

TEST(Collective, ParsesOpNamesLeniently) {
  EXPECT_EQ(*ParseCollectiveOp("all_reduce"), CollectiveOp::kAllReduce);
  EXPECT_EQ(*ParseCollectiveOp("allreduce"), CollectiveOp::kAllReduce);
  EXPECT_EQ(*ParseCollectiveOp("All-Gather"), CollectiveOp::kAllGather);
  EXPECT_EQ(*ParseCollectiveOp("alltoall"), CollectiveOp::kAllToAll);
  EXPECT_EQ(*ParseCollectiveOp("sendrecv"), CollectiveOp::kSendRecv);
  auto bad = ParseCollectiveOp("all_reduse");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().Format(),
            "op: unknown collective 'all_reduse'\n  hint: did you mean 'all_reduce'?");
}

}  // namespace
}  // namespace strata

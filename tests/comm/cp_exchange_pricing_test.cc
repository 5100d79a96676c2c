// Context parallelism across nodes, priced: megatron-core's default ring (--cp-comm-type p2p)
// against the all-gather it was priced as before.
#include <gtest/gtest.h>

#include "comm/comm_test_support.h"
#include "strata/comm/collective_cost.h"
#include "strata/comm/layout_traffic.h"
#include "strata/model/model_config.h"

namespace strata {
namespace {

// Qwen3-30B-A3B (4 K/V heads of 128: K+V 1,024 elements a token) with CP 64 on 8 nodes x 8 H100
// (8 x 400 Gb/s InfiniBand a node), micro batch 8 x 32,768 tokens: a rank holds
// 8 x 32,768 / 64 = 4,096 tokens, its K/V chunk 4,096 x 1,024 x 2 B = 8,388,608 B (8 MiB).
// Transformer Engine's ring sends that chunk to the next CP rank 63 times a pass; 8 of the 64
// ring hops cross a node boundary, each through one GPU's NIC, and every step waits for them:
//   one hop: 8,388,608 B / (50 GB/s x 0.94 = 47 GB/s) = 178.5 us of bandwidth + latency
//   one pass: 63 hops >= 63 x 178.5 us = 11.24 ms
// Before, the pass was one NCCL all-gather of the whole 512 MiB K/V over every NIC of the node,
// NVLink-bound: 1.7 ms (the audit: CP64 "tied" with CP8 in `plan`, 4.90 s a step where the
// exchange alone is ~14.6 s).
TEST(CpExchangePricing, TheRingAcrossNodesWaitsOnOneNicPerHop) {
  auto config = LoadModelConfig("qwen3-30b-a3b");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  TrafficInputs in;
  in.layout.cp = 64;
  in.layout.ep = 16;
  in.micro_batch = 8;
  in.tokens_per_sample = 32768;
  in.micro_batches_per_step = 1;
  const auto items = LayoutTraffic(TrafficShapeOf(*config, false), in);
  const TrafficItem* kv = nullptr;
  for (const auto& i : items) {
    if (i.group == GroupKind::kCp && kv == nullptr) kv = &i;
  }
  ASSERT_NE(kv, nullptr);
  EXPECT_EQ(kv->op, CollectiveOp::kSendRecv);
  EXPECT_NEAR(kv->size.count(), 8388608.0, 1e-6);
  // 48 layers, 2 passes (no recompute), 63 sends each.
  EXPECT_NEAR(kv->calls_per_step, 48.0 * 2 * 63, 1e-9);

  const CollectiveModel model = testing::ClusterModel("h100-8x8-ib400");
  auto hop = model.Cost(kv->op, kv->size, {64, 8, 8});
  ASSERT_TRUE(hop.ok()) << hop.error().Format();
  EXPECT_NEAR(hop->bandwidth_time.us(), 8388608.0 / 47e9 * 1e6, 1e-3);
  EXPECT_EQ(hop->level, "InfiniBand 8 x 400Gb/s");
  const double pass_ms = 63 * hop->time.ms();
  EXPECT_GT(pass_ms, 11.24);
  EXPECT_LT(pass_ms, 14.0);
  auto gather = model.Cost(CollectiveOp::kAllGather, Bytes::MiB(512), {64, 8, 8});
  ASSERT_TRUE(gather.ok());
  EXPECT_GT(pass_ms, 6 * gather->time.ms());
}

}  // namespace
}  // namespace strata

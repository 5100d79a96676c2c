#include "strata/comm/layout_traffic.h"

#include <gtest/gtest.h>

#include "strata/model/model_config.h"

namespace strata::layout_traffic_test {
namespace {

const TrafficItem* Find(const std::vector<TrafficItem>& items, GroupKind g, CollectiveOp op) {
  for (const auto& i : items) {
    if (i.group == g && i.op == op) return &i;
  }
  return nullptr;
}

// The reference job: Qwen3.6-35B-A3B, TP1 PP1 EP8 DP40, micro batch 1, ~29K-token samples, 2
// micro batches per step (80 = 40 x 1 x 2), full recompute, bf16 gradients, distributed optimizer.
TEST(LayoutTraffic, ReferenceJobByHand) {
  auto config = LoadModelConfig("qwen3.6-35b-a3b");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  const ModelTrafficShape shape = TrafficShapeOf(*config, /*with_mtp=*/false);
  // From the config: hidden 2048, 40 layers, all MoE, 10 full-attention, top-8 routing.
  EXPECT_EQ(shape.hidden_size, 2048);
  EXPECT_EQ(shape.layers, 40);
  EXPECT_EQ(shape.moe_layers, 40);
  EXPECT_EQ(shape.full_attention_layers, 10);
  EXPECT_EQ(shape.top_k, 8);
  // The reference parameter counts (reference/models/README.md): non-expert text
  // 2,448,355,968 + vision 446,571,248 = 2,894,927,216; experts 32,212,254,720.
  EXPECT_EQ(shape.non_expert_params, 2894927216);
  EXPECT_EQ(shape.expert_params, 32212254720);

  TrafficInputs in;
  in.layout.ep = 8;
  in.layout.dp = 40;
  in.micro_batch = 1;
  in.tokens_per_sample = 29000;
  in.micro_batches_per_step = 2;
  in.grad_bytes = 2;
  in.full_recompute = true;
  const auto items = LayoutTraffic(shape, in);
  ASSERT_EQ(items.size(), 5u);  // EP all-to-all; DP RS + AG; expert-DP RS + AG

  // EP: 29,000 tokens x top-8 x 2048 x 2 B = 950,272,000 B per all-to-all; dispatch + combine
  // in forward, backward and the recomputed forward: 6 per layer, x 40 layers x 2 micro batches.
  const TrafficItem* ep = Find(items, GroupKind::kEp, CollectiveOp::kAllToAll);
  ASSERT_NE(ep, nullptr);
  EXPECT_NEAR(ep->size.count(), 950272000.0, 0.5);
  EXPECT_NEAR(ep->calls_per_unit, 6.0, 1e-12);
  EXPECT_NEAR(ep->calls_per_step, 480.0, 1e-12);
  EXPECT_EQ(ep->frequency, TrafficFrequency::kPerLayerPerMicroBatch);

  // DP: 2,894,927,216 non-expert params x 2 B bf16 gradients = 5,789,854,432 B, once a step.
  const TrafficItem* dp = Find(items, GroupKind::kDp, CollectiveOp::kReduceScatter);
  ASSERT_NE(dp, nullptr);
  EXPECT_NEAR(dp->size.count(), 5789854432.0, 0.5);
  EXPECT_EQ(dp->frequency, TrafficFrequency::kPerStep);
  // Expert-DP: 32,212,254,720 / 8 x 2 B = 8,053,063,680 B.
  const TrafficItem* edp = Find(items, GroupKind::kExpertDp, CollectiveOp::kAllGather);
  ASSERT_NE(edp, nullptr);
  EXPECT_NEAR(edp->size.count(), 8053063680.0, 0.5);
}

TEST(LayoutTraffic, DenseModelWithTpPpCpByHand) {
  // A made-up dense model: h = 1000, 8 layers, 4 of them full attention, K+V 256 wide;
  // 1e9 non-expert params. Layout TP2 PP2 CP2 DP2, 4 samples of 8,000 tokens per micro batch,
  // 3 micro batches, no recompute, fp32 gradients, plain all-reduce (no distributed optimizer).
  ModelTrafficShape m;
  m.hidden_size = 1000;
  m.layers = 8;
  m.dense_ffn_layers = 8;  // every layer has a dense MLP: 2 TP blocks per layer
  m.full_attention_layers = 4;
  m.kv_width = 256;
  m.non_expert_params = 1000000000;
  TrafficInputs in;
  in.layout.tp = 2;
  in.layout.pp = 2;
  in.layout.cp = 2;
  in.layout.cp_comm_type = CpCommType::kAllGather;  // the p2p ring: CpP2pRingSendsChunks...
  in.layout.dp = 2;
  in.micro_batch = 4;
  in.tokens_per_sample = 8000;
  in.micro_batches_per_step = 3;
  in.distributed_optimizer = false;
  const auto items = LayoutTraffic(m, in);
  // Tokens on one rank: 4 x 8,000 / CP2 = 16,000.
  // TP: 16,000 x 1000 x 2 B = 32 MB, 4 per layer (2 forward + 2 backward), 4 layers per stage
  // (8 / PP2), 3 micro batches: 48 calls.
  const TrafficItem* tp = Find(items, GroupKind::kTp, CollectiveOp::kAllReduce);
  ASSERT_NE(tp, nullptr);
  EXPECT_NEAR(tp->size.count(), 32e6, 1e-3);
  EXPECT_NEAR(tp->calls_per_step, 48.0, 1e-12);
  // CP: K/V of the whole sequence 16,000 x 2 x 256 x 2 B = 16,384,000 B; 2 attention layers per
  // stage x 3 micro batches x 2 passes = 12 all-gathers (the forward's ring, and the backward's,
  // which sends K/V around again with the dK/dV partial sums: Transformer Engine's
  // AttnFuncWithCPAndKVP2P.backward) and 6 reduce-scatters. Before: 6 all-gathers (forward only).
  const TrafficItem* cp = Find(items, GroupKind::kCp, CollectiveOp::kAllGather);
  ASSERT_NE(cp, nullptr);
  EXPECT_NEAR(cp->size.count(), 16384000.0, 1e-3);
  EXPECT_NEAR(cp->calls_per_step, 12.0, 1e-12);
  const TrafficItem* dkv = Find(items, GroupKind::kCp, CollectiveOp::kReduceScatter);
  ASSERT_NE(dkv, nullptr);
  EXPECT_NEAR(dkv->calls_per_step, 6.0, 1e-12);
  // PP: 32 MB activations, forward + backward per micro batch: 6 send/recvs.
  const TrafficItem* pp = Find(items, GroupKind::kPp, CollectiveOp::kSendRecv);
  ASSERT_NE(pp, nullptr);
  EXPECT_NEAR(pp->size.count(), 32e6, 1e-3);
  EXPECT_NEAR(pp->calls_per_step, 6.0, 1e-12);
  // Gradients over DP x CP: 1e9 / (TP2 x PP2) x 4 B = 1 GB all-reduce.
  const TrafficItem* grads = Find(items, GroupKind::kDpCp, CollectiveOp::kAllReduce);
  ASSERT_NE(grads, nullptr);
  EXPECT_NEAR(grads->size.count(), 1e9, 1e-3);
  EXPECT_EQ(Find(items, GroupKind::kEp, CollectiveOp::kAllToAll), nullptr);  // dense: no EP
}

// Context parallelism exchanges K and V of the heads a TP rank holds, not of all heads.
// Llama 3.1 70B (config.json: 8 K/V heads of 128): K+V are 2 x 8 x 128 = 2,048 elements per
// token. CP4 over one 131,072-token sample: the all-gather carries the whole sequence's K/V,
// 131,072 x 2,048 x 2 B = 536,870,912 B at TP1; TP2 ranks hold 4 heads (half), TP8 one head
// (an eighth); at TP16 the 8 heads are replicated, one per rank (still an eighth).
// DeepSeek-V3 (MLA): the up-projected K and V of 128 heads, 128 x (128 + 64 + 128) = 40,960
// elements per token: 131,072 x 40,960 x 2 B = 10,737,418,240 B at TP1, / 8 at TP8 (16 heads).
TEST(LayoutTraffic, CpKvExchangeCarriesOnlyTheTpRanksHeads) {
  struct Case {
    const char* model;
    int64_t tp;
    double expected_bytes;
  };
  const Case cases[] = {
      {"llama-3.1-70b", 1, 536870912.0}, {"llama-3.1-70b", 2, 268435456.0},
      {"llama-3.1-70b", 8, 67108864.0},  {"llama-3.1-70b", 16, 67108864.0},
      {"deepseek-v3", 1, 10737418240.0}, {"deepseek-v3", 8, 1342177280.0},
  };
  for (const Case& c : cases) {
    auto config = LoadModelConfig(c.model);
    ASSERT_TRUE(config.ok()) << config.error().Format();
    TrafficInputs in;
    in.layout.tp = c.tp;
    in.layout.cp = 4;
    in.layout.cp_comm_type = CpCommType::kAllGather;
    in.tokens_per_sample = 131072;
    const auto items = LayoutTraffic(TrafficShapeOf(*config, false), in);
    for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
      const TrafficItem* cp = Find(items, GroupKind::kCp, op);
      ASSERT_NE(cp, nullptr) << c.model << " TP" << c.tp;
      EXPECT_NEAR(cp->size.count(), c.expected_bytes, 0.5) << c.model << " TP" << c.tp;
    }
  }
}

// megatron-core's default --cp-comm-type p2p runs Transformer Engine's ring attention
// (AttnFuncWithCPAndKVP2P): CP - 1 steps a pass, each rank sending its current K/V chunk to the
// next CP rank; the backward sends K/V around again with the dK/dV partial sums. Before, every
// CP job was priced as an all-gather of the whole K/V (the all_gather comm type).
// The dense toy model of DenseModelWithTpPpCpByHand (K+V 256 wide, 4 full-attention layers),
// TP1 PP1 CP4, one 16,000-token sample a micro batch, 2 micro batches, no recompute:
//   tokens on a rank 16,000 / 4 = 4,000; whole K/V 16,000 x 256 x 2 B = 8,192,000 B; a chunk
//   (one rank's) 4,000 x 256 x 2 B = 2,048,000 B
//   K/V: (CP - 1) = 3 sends a pass x 2 passes = 6 a layer, x 4 layers x 2 micro batches = 48
//   dK/dV: 3 a layer (backward), 24 a step
// a2a (Ulysses): Q (16 heads x 64 = 1,024 wide) of the rank's tokens plus its share of K/V
// before attention. K+V 256 wide is 2 heads of 64 each, fewer than the 4 CP ranks: verl's
// Ulysses repeats them 4 // 2 = 2 times so that each rank gets one (volcengine/verl@b178a3cd
// verl/models/transformers/monkey_patch.py:126-128): 4,000 x 1,024 x 2 + 2 x 8,192,000 / 4 =
// 12,288,000 B; the output 8,192,000 B after it; each once a pass: 16 a step. (Before the
// repeat was priced, and with the shape's K/V heads left at 1: 10,240,000 B.)
TEST(LayoutTraffic, CpP2pRingSendsChunksRankToRank) {
  ModelTrafficShape m;
  m.hidden_size = 1000;
  m.layers = 4;
  m.full_attention_layers = 4;
  m.kv_width = 256;
  m.q_width = 1024;
  m.q_heads = 16;
  m.kv_heads = 2;
  m.non_expert_params = 1000000;
  TrafficInputs in;
  in.layout.cp = 4;
  in.micro_batch = 1;
  in.tokens_per_sample = 16000;
  in.micro_batches_per_step = 2;
  EXPECT_EQ(in.layout.cp_comm_type, CpCommType::kP2p);  // megatron-core's default
  {
    const auto items = LayoutTraffic(m, in);
    std::vector<const TrafficItem*> cp;
    for (const auto& i : items) {
      if (i.group == GroupKind::kCp) cp.push_back(&i);
    }
    ASSERT_EQ(cp.size(), 2u);
    for (const TrafficItem* i : cp) {
      EXPECT_EQ(i->op, CollectiveOp::kSendRecv);
      EXPECT_NEAR(i->size.count(), 2048000.0, 1e-6);
    }
    EXPECT_NEAR(cp[0]->calls_per_step, 48.0, 1e-12);
    EXPECT_NEAR(cp[1]->calls_per_step, 24.0, 1e-12);
  }
  in.layout.cp_comm_type = CpCommType::kA2a;
  const auto items = LayoutTraffic(m, in);
  std::vector<const TrafficItem*> cp;
  for (const auto& i : items) {
    if (i.group == GroupKind::kCp) cp.push_back(&i);
  }
  ASSERT_EQ(cp.size(), 2u);
  EXPECT_EQ(cp[0]->op, CollectiveOp::kAllToAll);
  EXPECT_NEAR(cp[0]->size.count(), 12288000.0, 1e-6);
  EXPECT_NEAR(cp[1]->size.count(), 8192000.0, 1e-6);
  EXPECT_NEAR(cp[0]->calls_per_step, 16.0, 1e-12);
}

// Expert tensor parallelism puts its own collectives around each expert MLP (megatron-core's
// token dispatcher with an expert-TP group): the routed token copies are all-gathered over the
// ETP group before it and the outputs reduce-scattered after it. The reference model
// (hidden 2048, 40 MoE layers, top-8), one 4,096-token sample per micro batch, no recompute:
//   EP1 ETP8 TP1: gathered buffer 8 x 4,096 x 8 x 2048 x 2 B = 1,073,741,824 B; one all-gather
//                 and one reduce-scatter per pass (forward, backward): 2 x 40 = 80 calls each.
//   TP2 ETP2 SP: each rank holds 4,096 / 2 = 2,048 tokens outside the TP blocks:
//                 2 x 2,048 x 8 x 2048 x 2 B = 134,217,728 B; the MoE blocks are no TP block.
TEST(LayoutTraffic, ExpertTensorParallelGathersTheRoutedTokens) {
  auto config = LoadModelConfig("qwen3.6-35b-a3b");
  ASSERT_TRUE(config.ok()) << config.error().Format();
  const ModelTrafficShape shape = TrafficShapeOf(*config, false);
  struct Case {
    int64_t tp, etp, dp;
    double bytes;
  };
  for (const Case& c : {Case{1, 8, 8, 1073741824.0}, Case{2, 2, 4, 134217728.0}}) {
    TrafficInputs in;
    in.layout.tp = c.tp;
    in.layout.etp = c.etp;
    in.layout.dp = c.dp;
    in.layout.sequence_parallel = c.tp > 1;
    in.tokens_per_sample = 4096;
    const auto items = LayoutTraffic(shape, in);
    for (CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
      const TrafficItem* etp = Find(items, GroupKind::kEtp, op);
      ASSERT_NE(etp, nullptr) << "TP" << c.tp << " ETP" << c.etp;
      EXPECT_NEAR(etp->size.count(), c.bytes, 0.5) << "TP" << c.tp << " ETP" << c.etp;
      EXPECT_NEAR(etp->calls_per_step, 80.0, 1e-12);
    }
    if (c.tp > 1) {
      // Attention blocks only, 40 layers: per layer the forward's all-gather and the backward's
      // two (the output gradient's, and the QKV input's again for the weight gradient, which
      // megatron's SP layers keep as a shard): 3 x 40 = 120; reduce-scatters 2 x 40 = 80.
      const TrafficItem* tp = Find(items, GroupKind::kTp, CollectiveOp::kAllGather);
      ASSERT_NE(tp, nullptr);
      EXPECT_NEAR(tp->calls_per_step, 120.0, 1e-12);
      EXPECT_NEAR(Find(items, GroupKind::kTp, CollectiveOp::kReduceScatter)->calls_per_step, 80.0,
                  1e-12);
      EXPECT_NEAR(tp->size.count(), 4096.0 * 2048 * 2, 0.5);
    }
  }
}

TEST(LayoutTraffic, SingleGpuIssuesNothing) {
  ModelTrafficShape m;
  m.hidden_size = 1000;
  m.layers = 2;
  m.non_expert_params = 1000;
  EXPECT_TRUE(LayoutTraffic(m, TrafficInputs{}).empty());
}

TEST(LayoutTraffic, TrainedAndTpWholeParametersByHand) {
  // 1e9 non-expert parameters, 2e8 of them whole on every TP rank, 4e8 experts; TP2 PP2 EP2.
  // All of it: (1e9 - 2e8) / 2 + 2e8 = 6e8 a TP rank, / PP 2 = 3e8; experts 4e8 / (2 x 2) = 1e8.
  ModelTrafficShape m;
  m.non_expert_params = 1000000000;
  m.tp_whole_params = 200000000;
  m.expert_params = 400000000;
  ParallelLayout l;
  l.tp = 2;
  l.pp = 2;
  l.ep = 2;
  l.dp = 2;
  EXPECT_DOUBLE_EQ(m.NonExpertPerRank(l), 3e8);
  EXPECT_DOUBLE_EQ(m.ExpertPerRank(l), 1e8);
  // Unset, everything is trained; the TP-averaged (trained, whole) part is what stays whole.
  m.tp_averaged_params = 200000000;
  EXPECT_DOUBLE_EQ(m.TrainableNonExpertPerRank(l), 3e8);
  EXPECT_DOUBLE_EQ(m.TrainableExpertPerRank(l), 1e8);
  // Only 5e8 non-expert parameters trained, 1e8 of them the whole layers': (4e8 / 2 + 1e8) / 2
  // = 1.5e8; no expert trained: no expert-DP traffic, and the DP reduce-scatter of fp32
  // gradients carries 1.5e8 x 4 B = 6e8 B.
  m.trainable_non_expert_params = 500000000;
  m.tp_averaged_params = 100000000;
  m.trainable_expert_params = 0;
  EXPECT_DOUBLE_EQ(m.TrainableNonExpertPerRank(l), 1.5e8);
  EXPECT_DOUBLE_EQ(m.TrainableExpertPerRank(l), 0.0);
  TrafficInputs in;
  in.layout = l;
  const auto items = LayoutTraffic(m, in);
  const TrafficItem* grads = Find(items, GroupKind::kDp, CollectiveOp::kReduceScatter);
  ASSERT_NE(grads, nullptr);
  EXPECT_NEAR(grads->size.count(), 6e8, 1e-3);
  EXPECT_EQ(Find(items, GroupKind::kExpertDp, CollectiveOp::kReduceScatter), nullptr);
}

}  // namespace
}  // namespace strata::layout_traffic_test

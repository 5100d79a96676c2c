// The step-time side of ZeRO-2/3, FSDP2, HSDP, offload and FP8 (sim/step_modes.h), each against
// a value derived by hand in the comment above it.
#include "strata/sim/step_modes.h"

#include <gtest/gtest.h>

#include "sim/step_test_support.h"
#include "strata/sim/step_model.h"

namespace strata::step_modes_test {
namespace {

using testing::LoadReferenceStep;

// The reference job's parameters (../shared/reference/seed-case.md): text non-expert
// 2,448,355,968 + vision 446,571,248 = 2,894,927,216; routed experts 32,212,254,720; 40 layers.
constexpr double kNonExpert = 2'894'927'216.0;
constexpr double kExpert = 32'212'254'720.0;

std::vector<const PricedTraffic*> Find(const StepResult& r, GroupKind g, CollectiveOp op) {
  std::vector<const PricedTraffic*> out;
  for (const PricedTraffic& p : r.traffic) {
    if (p.item.group == g && p.item.op == op) out.push_back(&p);
  }
  return out;
}

// exposed = x + (L - 1) max(0, x - y):
//   L 40, x 0.1 s, y 0.05 s: 0.1 + 39 x 0.05 = 2.05 s (communication-bound)
//   L 40, x 0.1 s, y 0.2 s: 0.1 s (only the first layer's gather waits)
TEST(StepModes, LayerPipelinedExposure) {
  EXPECT_NEAR(LayerPipelinedExposure(40, 0.1, 0.05), 2.05, 1e-12);
  EXPECT_NEAR(LayerPipelinedExposure(40, 0.1, 0.2), 0.1, 1e-12);
  EXPECT_EQ(LayerPipelinedExposure(40, 0.0, 0.2), 0.0);
}

// The reference job as DeepSpeed ZeRO-3 (EP 1, DP 40 over 5 nodes, 8 per node, bf16):
//   per layer: experts 32,212,254,720 / 40 layers x 2 B = 1,610,612,736 B per gather;
//              non-expert 2,894,927,216 / 40 x 2 B = 144,746,360.8 B.
//   calls: gathers 3 (forward, the recomputed forward of full recompute, whose forward hooks
//          fetch and release again, and backward) x 40 layers x 2 micro batches = 240 per step
//          (before: 160, the recompute's fetch missed while the host-hook model counted it);
//          reduce-scatters 1 x 40 x 2 = 80 per step.
//   one expert gather, ring over 40 ranks on RoCE (beta = 8 x 12.5 GB/s x 0.86 = 86.0 GB/s,
//   docs/formulas.md "Collective cost"):
//     8.4 us + 35 x 3.4 us + 4 x 14 us (NCCL's ring crosses the network once per node
//     boundary: 4 of its 39 steps) + 39/40 x 1,610,612,736 B / 86.0 GB/s = 0.1834 ms +
//     18.2597 ms = 18.443 ms
//   No per-step "updated parameters" gather remains: ZeRO-3 gathers at the next forward.
// verl's FSDP workers (strategy fsdp: PyTorch FSDP1, imported as zero3) recompute inside the
// unit's unshard for its backward, as FSDP does: 2 gathers per layer and micro batch (forward,
// backward) = 2 x 40 x 2 = 160, not DeepSpeed's third. Before, the third gather was keyed on
// "not megatron-core" and verl paid it.
TEST(StepModes, VerlFsdpGathersTwicePerMicroBatchUnderRecompute) {
  auto ref = LoadReferenceStep({"framework.name=verl", "sharding.mode=zero3", "parallel.ep=1"});
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const auto gathers = Find(*r, GroupKind::kExpertDp, CollectiveOp::kAllGather);
  ASSERT_EQ(gathers.size(), 1u);
  EXPECT_DOUBLE_EQ(gathers[0]->item.calls_per_step, 160);
}

// FSDP1 moves each unit's FlatParameter padded to a multiple of the shard group
// (pytorch/pytorch fe03cf69 torch/distributed/fsdp/_flat_param.py, _get_unpadded_shard;
// 00ae0bc9 _runtime_utils.py, _post_backward_hook's F.pad). Per layer of the reference job (EP 1,
// DP 40):
//   experts 32,212,254,720 / 40 layers = 805,306,368 = 40 x 20,132,659.2 -> 40 x 20,132,660 =
//   805,306,400 (32 padding): 1,610,612,800 B per bf16 gather (DeepSpeed's ZeRO-3, per
//   parameter and unpadded: 1,610,612,736 B);
//   non-expert 2,894,927,216 / 40 = 72,373,180.4 -> 40 x 1,809,330 = 72,373,200: 144,746,400 B.
// Before, verl's FSDP1 gathered DeepSpeed's unpadded sizes.
TEST(StepModes, Fsdp1GathersPaddedFlatParameters) {
  auto ref = LoadReferenceStep({"framework.name=verl", "sharding.mode=zero3", "parallel.ep=1"});
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const auto expert = Find(*r, GroupKind::kExpertDp, CollectiveOp::kAllGather);
  ASSERT_EQ(expert.size(), 1u);
  EXPECT_DOUBLE_EQ(expert[0]->item.size.count(), 1610612800.0);
  const auto dense = Find(*r, GroupKind::kDp, CollectiveOp::kAllGather);
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_DOUBLE_EQ(dense[0]->item.size.count(), 144746400.0);
  const auto rs = Find(*r, GroupKind::kExpertDp, CollectiveOp::kReduceScatter);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_DOUBLE_EQ(rs[0]->item.size.count(),
                   805306400.0 * static_cast<double>(ref.setup.layout.grad_bytes));
}

TEST(StepModes, Zero3GathersEveryLayerThricePerMicroBatchUnderRecompute) {
  auto ref = LoadReferenceStep({"sharding.mode=zero3", "parallel.ep=1"});
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const auto expert_gathers = Find(*r, GroupKind::kExpertDp, CollectiveOp::kAllGather);
  ASSERT_EQ(expert_gathers.size(), 1u);
  const PricedTraffic& g = *expert_gathers[0];
  EXPECT_NEAR(g.item.size.count(), kExpert / 40 * 2, 1);
  EXPECT_DOUBLE_EQ(g.item.calls_per_step, 240);
  EXPECT_NEAR(g.cost.time.ms(), 18.443, 18.443 * 0.01);
  EXPECT_NE(g.cost.level.find("RoCE"), std::string::npos) << g.cost.level;
  const auto dense_gathers = Find(*r, GroupKind::kDp, CollectiveOp::kAllGather);
  ASSERT_EQ(dense_gathers.size(), 1u);
  EXPECT_NEAR(dense_gathers[0]->item.size.count(), kNonExpert / 40 * 2, 1);
  const auto expert_rs = Find(*r, GroupKind::kExpertDp, CollectiveOp::kReduceScatter);
  ASSERT_EQ(expert_rs.size(), 1u);
  EXPECT_DOUBLE_EQ(expert_rs[0]->item.calls_per_step, 80);
  EXPECT_NEAR(expert_rs[0]->item.size.count(), kExpert / 40 * 2, 1);  // bf16 gradients
  // The parts carry the totals: 240 expert gathers x 18.4 ms = 4.43 s before overlap.
  EXPECT_NEAR((*r)[StepPart::kExpertDpParam].total.s(), 240 * g.cost.time.s(), 1e-9);
  EXPECT_LE((*r)[StepPart::kExpertDpParam].exposed.s(), (*r)[StepPart::kExpertDpParam].total.s());
}

// reshard_after_forward off: the forward's gather is kept for the backward, one gather per layer
// per micro batch: 40 x 2 = 80 calls.
TEST(StepModes, NoReshardGathersOnce) {
  auto ref = LoadReferenceStep(
      {"sharding.mode=fsdp2", "parallel.ep=1", "sharding.reshard_after_forward=false"});
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const auto gathers = Find(*r, GroupKind::kExpertDp, CollectiveOp::kAllGather);
  ASSERT_EQ(gathers.size(), 1u);
  EXPECT_DOUBLE_EQ(gathers[0]->item.calls_per_step, 80);
}

// ZeRO-2 on the reference layout (EP 8, expert-DP 5): gradients reduce-scattered every micro
// batch, per layer: experts 32,212,254,720 / 8 / 40 x 2 B = 201,326,592 B, 40 x 2 = 80 calls;
// updated weights gathered once per step, all of them: 32,212,254,720 / 8 x 2 B = 8,053,063,680 B.
TEST(StepModes, Zero2ReducesEveryMicroBatchAndGathersOnce) {
  auto ref = LoadReferenceStep({"sharding.mode=zero2"});
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const auto rs = Find(*r, GroupKind::kExpertDp, CollectiveOp::kReduceScatter);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NEAR(rs[0]->item.size.count(), 201'326'592.0, 1);
  EXPECT_DOUBLE_EQ(rs[0]->item.calls_per_step, 80);
  const auto ag = Find(*r, GroupKind::kExpertDp, CollectiveOp::kAllGather);
  ASSERT_EQ(ag.size(), 1u);
  EXPECT_NEAR(ag[0]->item.size.count(), 8'053'063'680.0, 1);
  EXPECT_DOUBLE_EQ(ag[0]->item.calls_per_step, 1);
}

// DeepSpeed's overlap_comm false puts ZeRO-3's gathers and reduce-scatters on the compute stream
// (deepspeed/runtime/zero/stage3.py: reduce_and_partition_stream = the default stream unless
// overlap_comm; parameter_offload.py: the all-gather stream likewise), so each DP part is exposed
// whole: exposed == total, where the default (overlapped) hides most of it behind the layers.
// Before, the flag was read by nobody and both jobs gave the same step.
TEST(StepModes, Zero3WithoutOverlapCommExposesEveryCollective) {
  auto hidden = LoadReferenceStep({"sharding.mode=zero3", "parallel.ep=1"});
  auto serial =
      LoadReferenceStep({"sharding.mode=zero3", "parallel.ep=1", "sharding.overlap_comm=false"});
  auto a = EvaluateStep(hidden.setup.tables, hidden.setup.layout, *hidden.comm);
  auto b = EvaluateStep(serial.setup.tables, serial.setup.layout, *serial.comm);
  ASSERT_TRUE(a.ok() && b.ok());
  for (StepPart part : {StepPart::kDpGrad, StepPart::kDpParam}) {
    EXPECT_GT((*b)[part].total.s(), 0);
    EXPECT_DOUBLE_EQ((*b)[part].exposed.s(), (*b)[part].total.s());
    EXPECT_DOUBLE_EQ((*a)[part].total.s(), (*b)[part].total.s());
  }
  EXPECT_LT((*a)[StepPart::kDpParam].exposed.s(), (*a)[StepPart::kDpParam].total.s());
  EXPECT_GT(b->step.s(), a->step.s());
}

// PyTorch's FSDP under zero2 (FSDP1's SHARD_GRAD_OP, what Accelerate's
// fsdp_sharding_strategy SHARD_GRAD_OP imports as) keeps the weights sharded at rest and
// gathers each unit for its forward, keeping it to its backward (pytorch/pytorch 00ae0bc9
// torch/distributed/fsdp/_runtime_utils.py: _post_forward_reshard frees the unsharded
// FlatParameter only for FULL_SHARD and HYBRID_SHARD). The reference job, EP 1, DP 40, 2 micro
// batches: one expert gather per layer per micro batch, 40 x 2 = 80 a step, each the layer's
// FlatParameter padded to a multiple of 40: 32,212,254,720 / 40 = 805,306,368 parameters ->
// 40 x ceil(805,306,368 / 40) = 805,306,400 x 2 B = 1,610,612,800 B. Before, the step priced
// DeepSpeed's ZeRO-2 (weights replicated, one all-gather of the updated 60 GiB a step: 1 call
// of 64,424,509,440 B). DeepSpeed's own ZeRO-2 keeps that.
TEST(StepModes, Fsdp1ShardGradOpGathersEachLayerOncePerMicroBatch) {
  auto ref = LoadReferenceStep({"sharding.mode=zero2", "sharding.runtime=fsdp1", "parallel.ep=1"});
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const auto gathers = Find(*r, GroupKind::kExpertDp, CollectiveOp::kAllGather);
  ASSERT_EQ(gathers.size(), 1u);
  EXPECT_DOUBLE_EQ(gathers[0]->item.calls_per_step, 80);
  EXPECT_NEAR(gathers[0]->item.size.count(), 1'610'612'800.0, 1);

  auto ds =
      LoadReferenceStep({"sharding.mode=zero2", "sharding.runtime=deepspeed", "parallel.ep=1"});
  auto d = EvaluateStep(ds.setup.tables, ds.setup.layout, *ds.comm);
  ASSERT_TRUE(d.ok()) << d.error().Format();
  const auto ds_gathers = Find(*d, GroupKind::kExpertDp, CollectiveOp::kAllGather);
  ASSERT_EQ(ds_gathers.size(), 1u);
  EXPECT_DOUBLE_EQ(ds_gathers[0]->item.calls_per_step, 1);
  EXPECT_NEAR(ds_gathers[0]->item.size.count(), kExpert * 2, 1);
}

// HSDP, replicate 5 x shard 8 on ZeRO-3 with EP 1: the shard group is one node's 8 GPUs
// (NVSwitch); the replicas average the 1/8 gradient shard over 5 nodes once per step:
// (2,894,927,216 / 8) x 2 B = 723,731,804 B all-reduce on RoCE.
TEST(StepModes, HsdpShardsInsideANodeAndAllReducesAcross) {
  auto ref = LoadReferenceStep({"sharding.mode=zero3", "parallel.ep=1", "sharding.replicate=5"});
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  const auto gathers = Find(*r, GroupKind::kDp, CollectiveOp::kAllGather);
  ASSERT_EQ(gathers.size(), 1u);
  EXPECT_EQ(gathers[0]->cost.shape.ranks, 8);
  EXPECT_NE(gathers[0]->cost.level.find("NVSwitch"), std::string::npos) << gathers[0]->cost.level;
  const auto ar = Find(*r, GroupKind::kDp, CollectiveOp::kAllReduce);
  ASSERT_EQ(ar.size(), 1u);
  EXPECT_EQ(ar[0]->cost.shape.ranks, 5);
  EXPECT_NEAR(ar[0]->item.size.count(), kNonExpert / 8 * 2, 1);
  EXPECT_NE(ar[0]->cost.level.find("RoCE"), std::string::npos) << ar[0]->cost.level;
}

// Exposure on made-up numbers: L = 4 layers, m = 2 micro batches, one dense gather of 10 ms
// (twice per layer) and one reduce-scatter of 10 ms per layer per micro batch.
//   forward: g = 10 ms, y = 20 ms / 4 = 5 ms: 10 + 3 x 5 = 25 ms per micro batch -> 50 ms (param)
//   backward: g = 10, r = 10, y = 80 ms / 4 = 20 ms: the first layer's 10 + 10, then
//   max(0, 20 - 20) = 0: param 50 + 2 x 10 = 70 ms, grad 2 x 10 = 20 ms.
//   prefetch 0: every gather waits: forward 4 x 10 = 40 ms per micro batch, backward 4 x 10;
//   the reduce-scatters still hide after the first layer (max(0, 10 - 20) = 0):
//   param 2 x (40 + 40) = 160 ms, grad 2 x 10 = 20 ms.
//   prefetch 0.5: forward 10 + 3 x (5 + max(0, 5 - 5)) = 25; backward 10 + 3 x 5 = 25 (and
//   max(0, 5 + 10 - 20) = 0): param 2 x (25 + 25) = 100 ms, grad 20 ms.
//   Under megatron-core the reduce-scatters hide only with overlap.grad_reduce (set here); off,
//   all 2 x 4 x 10 = 80 ms of them are exposed, the gathers unchanged.
TEST(StepModes, ShardedExposureByHand) {
  StepLayout s;
  s.micro_batches = 2;
  s.sharding.mode = ShardingMode::kZero3;
  s.overlap.grad_reduce = true;
  PricedTraffic gather;
  gather.item = {GroupKind::kDp,
                 "gather",
                 CollectiveOp::kAllGather,
                 Bytes::Count(1),
                 TrafficFrequency::kPerLayerPerMicroBatch,
                 2,
                 16};
  gather.time_per_step = Seconds::Of(0.160);
  PricedTraffic rs;
  rs.item = {GroupKind::kDp,
             "rs",
             CollectiveOp::kReduceScatter,
             Bytes::Count(1),
             TrafficFrequency::kPerLayerPerMicroBatch,
             1,
             8};
  rs.time_per_step = Seconds::Of(0.080);
  ShardedExposure e =
      ExposeShardedTraffic({gather, rs}, s, 4, Seconds::Of(0.020), Seconds::Of(0.080));
  EXPECT_NEAR(e.dp_param, 0.070, 1e-12);
  EXPECT_NEAR(e.dp_grad, 0.020, 1e-12);
  EXPECT_EQ(e.edp_param, 0.0);
  s.sharding.prefetch_layers = 0;
  e = ExposeShardedTraffic({gather, rs}, s, 4, Seconds::Of(0.020), Seconds::Of(0.080));
  EXPECT_NEAR(e.dp_param, 0.160, 1e-12);
  EXPECT_NEAR(e.dp_grad, 0.020, 1e-12);
  s.sharding.prefetch_layers = 0.5;
  e = ExposeShardedTraffic({gather, rs}, s, 4, Seconds::Of(0.020), Seconds::Of(0.080));
  EXPECT_NEAR(e.dp_param, 0.100, 1e-12);
  EXPECT_NEAR(e.dp_grad, 0.020, 1e-12);
  s.overlap.grad_reduce = false;
  e = ExposeShardedTraffic({gather, rs}, s, 4, Seconds::Of(0.020), Seconds::Of(0.080));
  EXPECT_NEAR(e.dp_param, 0.100, 1e-12);
  EXPECT_NEAR(e.dp_grad, 0.080, 1e-12);
}

// One layer pass split by cause: L = 3, g = 4, r = 6, y = 5, f = 0.5: the first layer 4 + 6;
// each later layer (1 - 0.5) x 4 = 2 of gather serial, then max(0, 2 + 6 - 5) = 3 overlapped
// remainder split 2 : 6 -> 0.75 gather, 2.25 reduce-scatter: gather 4 + 2 x 2.75 = 9.5,
// other 6 + 2 x 2.25 = 10.5; the sum 20 = (g + r) + 2 x (2 + 3).
TEST(StepModes, PartlyPrefetchedExposureByHand) {
  const PassExposure p = PartlyPrefetchedExposure(3, 4, 6, 5, 0.5);
  EXPECT_NEAR(p.gather, 9.5, 1e-12);
  EXPECT_NEAR(p.other, 10.5, 1e-12);
  // f = 1 is the pipelined formula: 10 + 2 x max(0, 10 - 5) = 20.
  const PassExposure full = PartlyPrefetchedExposure(3, 4, 6, 5, 1);
  EXPECT_NEAR(full.gather + full.other, LayerPipelinedExposure(3, 10, 5), 1e-12);
  // More than one layer of prefetch hides no more than one.
  const PassExposure two = PartlyPrefetchedExposure(3, 4, 6, 5, 2);
  EXPECT_NEAR(two.gather + two.other, 20, 1e-12);
}

// offload_optimizer cpu on the reference job (ZeRO-1, EP 8): the local shard is
// 2,894,927,216 / 40 + 32,212,254,720 / (8 x 5) = 72,373,180.4 + 805,306,368 = 877,679,548.4
// parameters; bf16 gradients down and bf16 weights up: 1,755,359,096.8 B each way at PCIe Gen5
// x16 63 GB/s = 27.863 ms each, 55.726 ms per step; the GPU optimizer step is gone.
TEST(StepModes, OffloadOptimizerCopiesOverPcie) {
  auto ref = LoadReferenceStep({"sharding.offload_optimizer=cpu"});
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  ASSERT_EQ(r->host_traffic.size(), 2u);
  EXPECT_NEAR(r->host_traffic[0].size_per_step.count(), 1'755'359'096.8, 1);
  EXPECT_NE(r->host_traffic[0].level.find("PCIe Gen5"), std::string::npos);
  EXPECT_NEAR((*r)[StepPart::kOffload].total.s(), 0.055726, 1e-6);
  EXPECT_EQ((*r)[StepPart::kOptimizer].total.s(), 0.0);
  EXPECT_FALSE(r->caveats.empty());
}

// FP8 on the H20: the linear layers' GEMMs run on 296 instead of 148 TFLOP/s at the same
// efficiency, so their time halves exactly; the router, the output layer and attention stay
// bf16. The "dense GEMMs" row holds the router too, so 2 x fp8 - bf16 = the router's time:
//   2 x 2048 x 256 x 40 layers x 29,000 tokens = 1.21634e12 FLOP at 148 TFLOP/s x 0.878 x
//   f(29000) f(256) f(2048), f(d) = d / (d + 253): 0.878 x 0.991351 x 0.502947 x 0.890048 =
//   0.389635 -> 21.09 ms.
TEST(StepModes, Fp8HalvesTheLinearGemmsOnH20) {
  auto ref = LoadReferenceStep();
  auto bf16 = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  StepLayout fp8 = ref.setup.layout;
  fp8.fp8.recipe = Fp8Recipe::kBlockwise;
  auto r = EvaluateStep(ref.setup.tables, fp8, *ref.comm);
  ASSERT_TRUE(bf16.ok() && r.ok());
  EXPECT_NEAR(2 * r->forward.dense_gemm.s() - bf16->forward.dense_gemm.s(), 0.021093,
              0.021093 * 0.01);
  EXPECT_NEAR(r->forward.expert_gemm.s(), bf16->forward.expert_gemm.s() / 2, 1e-6);
  EXPECT_DOUBLE_EQ(r->forward.attention.s(), bf16->forward.attention.s());
  EXPECT_DOUBLE_EQ(r->forward.logits_and_loss.s(), bf16->forward.logits_and_loss.s());
  EXPECT_GT((*r)[StepPart::kFp8Cast].total.s(), 0);
  // A GPU without FP8 tensor cores: an error naming the recipe and the GPU, not a number.
  StepTables no_fp8 = ref.setup.tables;
  no_fp8.fp8_peak = FlopPerSecond();
  auto refused = EvaluateStep(no_fp8, fp8, *ref.comm);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().Format().find("no FP8 tensor cores"), std::string::npos);
}

// One dense GEMM group: 3 GEMMs of n 4096, k 1024 per token (flop 2 x 4096 x 1024 x 3 =
// 25,165,824), 1,000 tokens, 1e6 weights, 2 micro batches:
//   forward inputs 3 x 1024 = 3,072 elements, backward output gradients 3 x 4096 = 12,288;
//   4 B x (3,072 + 12,288) x 1,000 = 61,440,000 B; TE weights 4 B x 1e6 / 2 = 2,000,000 B
//   -> 63,440,000 B. torchao casts weights every micro batch: 61,440,000 + 4,000,000 =
//   65,440,000 B. Full recompute casts the forward inputs again: 4 x (6,144 + 12,288) x 1,000
//   + 2,000,000 = 75,728,000 B.
TEST(StepModes, Fp8CastBytesByHand) {
  StepTables t;
  t.gemms = {{GemmKind::kDense, 25'165'824, 4096, 1024}, {GemmKind::kLogits, 1e9, 1000, 1000}};
  t.traffic.non_expert_params = 1'000'000;
  StepLayout s;
  s.micro_batches = 2;
  s.fp8.recipe = Fp8Recipe::kTensorwise;
  EXPECT_DOUBLE_EQ(Fp8CastBytesPerMicroBatch(t, s, 1000, 1, 0), 63'440'000);
  EXPECT_DOUBLE_EQ(Fp8CastBytesPerMicroBatch(t, s, 1000, 1, 1), 75'728'000);
  s.fp8.recipe = Fp8Recipe::kTorchaoRowwise;
  EXPECT_DOUBLE_EQ(Fp8CastBytesPerMicroBatch(t, s, 1000, 1, 0), 65'440'000);
  s.fp8.recipe = Fp8Recipe::kNone;
  EXPECT_EQ(Fp8CastBytesPerMicroBatch(t, s, 1000, 1, 0), 0);
}

}  // namespace
}  // namespace strata::step_modes_test

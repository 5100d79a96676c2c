// A Gated DeltaNet every TP rank holds whole (transformers' module inside megatron-core, what
// ms-swift <= 4.0 builds for Qwen3.5 / Qwen3.6) in the step model: the TP all-reduce of its
// gradients once a step, and the adapters on it, which run whole on each rank as the layer does.
//
// megatron-core marks every parameter of a HuggingFaceModule (megatron/core/models/huggingface/
// module.py: __setattr__ sets average_gradients_across_tp_domain on the params of any module
// assigned to it, so a PEFT adapter swapped in for one of its projections too), and
// finalize_model_grads, after the DP gradient sync and before the optimizer, all-reduces the
// gradients of the marked parameters that require one over the TP group, coalesced into one call
// (finalize_model_grads.py, _allreduce_non_tensor_model_parallel_grads, ReduceOp.AVG;
// NVIDIA/Megatron-LM@d98e8a64). ms-swift's Qwen3NextGatedDeltaNet is such a module
// (modelscope/ms-swift@15898fee swift/megatron/model/gpts/qwen3_next.py).
//
// The data-parallel reduce and the optimizer count the trained parameters as each rank holds
// them: the replicated layer whole, a frozen module or an adapter's base not at all.
//
// By hand (tests/memory/gdn_tensor_parallel_test.cc): 30 GDN layers of 33,718,464 parameters,
// 1,011,553,920 in all, on the one pipeline stage; the reference job's gradients are bf16 (2 B).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/sim/step_model.h"

namespace strata::gdn_tp_step_test {
namespace {

using testing::LoadReferenceStep;
using testing::ReferenceStep;

constexpr std::string_view kPart = "replicated-gradient all-reduce (TP, shared embedding)";

// The vision tower frozen: the averaged all-reduce is the Gated DeltaNet's alone (the tower's
// joins it when trained: finalize_grads_step_test.cc).
std::vector<std::string> Tp2(std::vector<std::string> more = {}) {
  std::vector<std::string> sets = {"parallel.tp=2", "parallel.dp=20",
                                   "parallel.sequence_parallel=true", "frozen=[vision]"};
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

// Adapters on the three GDN projections only, r = 8, no dropout: per layer
// r x (d_in + d_out) = 8 x ((2,048 + 12,288) + (2,048 + 64) + (4,096 + 2,048)) = 8 x 22,592
// = 180,736 parameters; 30 layers: 5,422,080. Forward FLOP per token 2 x that = 10,844,160.
const std::vector<std::string> kGdnLora = {"adapter.kind=lora", "adapter.rank=8",
                                           "adapter.targets=[in_proj_qkvz,in_proj_ba,out_proj]",
                                           "adapter.dropout=0"};

StepResult Evaluate(const ReferenceStep& ref) {
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().Format());
  return r.ok() ? *r : StepResult{};
}

// The breakdown row of this name (looked up by name: the rows are the step's printed lines).
StepPartTime PartNamed(const StepResult& r, std::string_view name) {
  for (size_t i = 0; i < kStepPartCount; ++i) {
    if (StepPartName(static_cast<StepPart>(i)) == name) return r.parts[i];
  }
  ADD_FAILURE() << "no breakdown row '" << name << "'";
  return {};
}

// The TP all-reduce (AVG) of the layers every TP rank holds whole; finalize_model_grads sums
// the norms' and the router's over TP apart (finalize_grads_step_test.cc).
std::vector<PricedTraffic> TpOnceAStep(const StepResult& r) {
  std::vector<PricedTraffic> out;
  for (const PricedTraffic& p : r.traffic) {
    if (p.item.group == GroupKind::kTp && p.item.frequency == TrafficFrequency::kPerStep &&
        p.item.purpose.find("averaged") != std::string::npos)
      out.push_back(p);
  }
  return out;
}

// Every TP all-reduce once a step: the averaged one and the summed one.
double TpOnceAStepS(const StepResult& r) {
  double s = 0;
  for (const PricedTraffic& p : r.traffic) {
    if (p.item.group == GroupKind::kTp && p.item.frequency == TrafficFrequency::kPerStep)
      s += p.time_per_step.s();
  }
  return s;
}

TEST(GdnTpGradients, MsSwiftAllReducesTheReplicatedGradientsOverTpOnceAStep) {
  // 1,011,553,920 parameters x 2 B = 2,023,107,840 B, one all-reduce a step over the TP pair
  // (GPUs 2i and 2i + 1 of one node, on NVSwitch). Its time is the collective model's for that
  // size on that group (comm/collective_cost.h): 2 ranks move 2 (n - 1) / n = 1 x the size on
  // the bus, ~2.02 GB / 370 GB/s (H20 NVLink 450 GB/s x 0.822 ring efficiency) = 5.5 ms plus
  // the latency, or NVLS where faster. finalize_model_grads runs it after the last backward and
  // before the optimizer: nothing hides it.
  const ReferenceStep swift = LoadReferenceStep(Tp2());
  const StepResult r = Evaluate(swift);
  const std::vector<PricedTraffic> items = TpOnceAStep(r);
  ASSERT_EQ(items.size(), 1u);
  const PricedTraffic& p = items[0];
  EXPECT_EQ(p.item.op, CollectiveOp::kAllReduce);
  EXPECT_DOUBLE_EQ(p.item.size.count(), 2'023'107'840.0);
  EXPECT_DOUBLE_EQ(p.item.calls_per_step, 1.0);
  EXPECT_EQ(p.cost.shape.ranks, 2);
  EXPECT_EQ(p.cost.shape.nodes, 1);
  auto cost = swift.comm->Cost(CollectiveOp::kAllReduce, p.item.size, p.cost.shape);
  ASSERT_TRUE(cost.ok());
  EXPECT_NEAR(p.time_per_step.s(), cost->time.s(), 1e-12);
  EXPECT_GT(cost->time.s(), 2'023'107'840.0 / (450e9 * 1.067));  // not faster than NVLS's rate
  EXPECT_LT(cost->time.s(), 2'023'107'840.0 / (450e9 * 0.822) + 1e-3);
  const StepPartTime part = PartNamed(r, kPart);
  EXPECT_NEAR(part.total.s(), TpOnceAStepS(r), 1e-12);
  EXPECT_GT(part.total.s(), cost->time.s());
  EXPECT_NEAR(part.exposed.s(), part.total.s(), 1e-12);
  // It is not counted again in the per-layer TP traffic's row.
  double per_layer_tp = 0;
  for (const PricedTraffic& t : r.traffic) {
    if ((t.item.group == GroupKind::kTp || t.item.group == GroupKind::kEtp) &&
        t.item.frequency != TrafficFrequency::kPerStep)
      per_layer_tp += t.time_per_step.s();
  }
  EXPECT_NEAR(r[StepPart::kTp].total.s(), per_layer_tp, 1e-12);
}

TEST(GdnTpGradients, NoneWhereTheLayerIsSplitFrozenOrTpIsOne) {
  // megatron-core's own GatedDeltaNet splits the layer over TP: nothing to average.
  const StepResult bridge = Evaluate(LoadReferenceStep(Tp2({"framework.name=megatron-bridge"})));
  EXPECT_TRUE(TpOnceAStep(bridge).empty());
  EXPECT_NEAR(PartNamed(bridge, kPart).total.s(), TpOnceAStepS(bridge), 1e-12);
  // A frozen layer has no gradient (finalize_model_grads skips params without requires_grad).
  const StepResult frozen = Evaluate(LoadReferenceStep(Tp2({"frozen=[linear_attention, vision]"})));
  EXPECT_TRUE(TpOnceAStep(frozen).empty());
  // TP 1: no TP group.
  const StepResult tp1 = Evaluate(LoadReferenceStep());
  EXPECT_TRUE(TpOnceAStep(tp1).empty());
}

TEST(GdnTpGradients, UnderAnAdapterOnlyTheAdaptersGradientsAreAveraged) {
  // The base projections are frozen; the adapters on them are the replicated layer's trainable
  // parameters: 5,422,080 x 2 B = 10,844,160 B.
  const StepResult r = Evaluate(LoadReferenceStep(Tp2(kGdnLora)));
  const std::vector<PricedTraffic> items = TpOnceAStep(r);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_DOUBLE_EQ(items[0].item.size.count(), 10'844'160.0);
}

TEST(GdnTpGradients, AdaptersOnAReplicatedLayerRunWholeOnEachRank) {
  // The adapters' forward: 10,844,160 FLOP a token x 29,000 tokens a micro batch, thin GEMMs at
  // the rate GemmEfficiency(29,000 rows, r = 8, h = 2,048) of the bf16 peak; the layer is whole
  // on each TP rank, so are its adapters (not / TP 2). Their forward is all the forward dense
  // GEMMs gain over the same job without them.
  const ReferenceStep with = LoadReferenceStep(Tp2(kGdnLora));
  const ReferenceStep without = LoadReferenceStep(Tp2());
  const StepTables& t = with.setup.tables;
  const double rate = t.peak.flop_per_s() * GemmEfficiency(t.efficiency, 29000, 8, 2048);
  const double expected = 10'844'160.0 * 29000 / rate;
  const double gained =
      (ComputeMicroBatch(t, with.setup.layout).forward.dense_gemm -
       ComputeMicroBatch(without.setup.tables, without.setup.layout).forward.dense_gemm)
          .value();
  EXPECT_NEAR(gained, expected, expected * 1e-9);
}

// The data-parallel reduce and the optimizer carry what is trained, as each rank holds it
// (megatron-core's grad and param buffers hold the parameters that require a gradient,
// distributed/param_and_grad_buffer.py).
const PricedTraffic* DpItem(const StepResult& r, GroupKind group, CollectiveOp op) {
  for (const PricedTraffic& p : r.traffic) {
    if (p.item.group == group && p.item.op == op && p.item.frequency == TrafficFrequency::kPerStep)
      return &p;
  }
  return nullptr;
}

TEST(TrainedParameters, TheReplicatedLayersGradientsAreWholeInTheDpReduce) {
  // At TP 2 ms-swift's GDN layers (1,011,553,920 parameters) are whole on each rank, megatron-
  // bridge's split: each rank's DP reduce-scatter carries 1,011,553,920 x (1 - 1/2) x 2 B =
  // 1,011,553,920 B more under ms-swift, everything else alike. Before, both were / TP.
  const StepResult swift = Evaluate(LoadReferenceStep(Tp2()));
  const StepResult bridge = Evaluate(LoadReferenceStep(Tp2({"framework.name=megatron-bridge"})));
  const PricedTraffic* a = DpItem(swift, GroupKind::kDp, CollectiveOp::kReduceScatter);
  const PricedTraffic* b = DpItem(bridge, GroupKind::kDp, CollectiveOp::kReduceScatter);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NEAR(a->item.size.count() - b->item.size.count(), 1'011'553'920.0, 1.0);
}

TEST(TrainedParameters, UnderAnAdapterTheDpReduceCarriesTheAdaptersAlone) {
  // TP 1: adapters on the GDN projections only, 5,422,080 parameters (above), bf16 gradients:
  // 10,844,160 B reduce-scattered over DP 40 and 5,422,080 x 2 B gathered back; the routed
  // experts carry no adapter: no expert-DP traffic at all. Before, the whole model's non-expert
  // and expert parameters were reduced (gigabytes) as if the base were trained.
  const StepResult r = Evaluate(LoadReferenceStep(kGdnLora));
  const PricedTraffic* grads = DpItem(r, GroupKind::kDp, CollectiveOp::kReduceScatter);
  const PricedTraffic* params = DpItem(r, GroupKind::kDp, CollectiveOp::kAllGather);
  ASSERT_NE(grads, nullptr);
  ASSERT_NE(params, nullptr);
  EXPECT_NEAR(grads->item.size.count(), 10'844'160.0, 1.0);
  EXPECT_NEAR(params->item.size.count(), 10'844'160.0, 1.0);
  EXPECT_EQ(DpItem(r, GroupKind::kExpertDp, CollectiveOp::kReduceScatter), nullptr);
  // The optimizer's shard: 5,422,080 / DP 40 = 135,552 parameters.
  EXPECT_NEAR(r.local_params, 135'552.0, 0.5);
}

TEST(TrainedParameters, AFrozenModuleIsNeitherReducedNorUpdated) {
  // Freezing the GDN layers (1,011,553,920 parameters, bf16 gradients) takes exactly their
  // 2,023,107,840 B out of the DP reduce-scatter and their share out of the optimizer:
  // 1,011,553,920 / 40 = 25,288,848 parameters.
  const StepResult all = Evaluate(LoadReferenceStep());
  const StepResult frozen = Evaluate(LoadReferenceStep({"frozen=[linear_attention]"}));
  const PricedTraffic* a = DpItem(all, GroupKind::kDp, CollectiveOp::kReduceScatter);
  const PricedTraffic* f = DpItem(frozen, GroupKind::kDp, CollectiveOp::kReduceScatter);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(a->item.size.count() - f->item.size.count(), 2'023'107'840.0, 1.0);
  EXPECT_NEAR(all.local_params - frozen.local_params, 25'288'848.0, 0.5);
}

}  // namespace
}  // namespace strata::gdn_tp_step_test

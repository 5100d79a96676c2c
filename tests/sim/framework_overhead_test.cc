// The framework's rows of the step breakdown, on hand-built kernel times so that each expected
// value is worked out in the comment beside it (docs/formulas.md, "Framework overhead").
#include "strata/sim/framework_overhead.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/step_test_support.h"
#include "strata/sim/step_model.h"
#include "strata/sim/step_tables.h"

namespace strata {
namespace {

constexpr double kTol = 1e-12;

FrameworkProfile Profile(double layer_ops, double expert_loop_ops = 0) {
  FrameworkProfile p;
  p.on = true;
  p.host_op_s = 10e-6;
  p.layer_ops = layer_ops;
  p.expert_loop_ops = expert_loop_ops;
  return p;
}

// 10 dense layers, one stage, no recompute. Forward GPU time 1 ms (0.1 ms a layer), backward
// 2 ms (0.2 ms a layer).
TEST(FrameworkOverhead, HostBoundLayers) {
  StepTables t;
  t.framework = Profile(40);
  t.framework_counts = {10, 0, 9};
  StepLayout s;
  MicroBatchCompute c;
  c.forward.dense_gemm = Seconds::Of(1e-3);
  c.backward.dense_gemm = Seconds::Of(2e-3);
  const FrameworkOverhead o = ComputeFrameworkOverhead(t, s, c);
  // forward: 40 ops x 10 us = 0.4 ms of host per layer against 0.1 ms of GPU: 0.3 ms exposed;
  // backward: 80 ops = 0.8 ms against 0.2 ms: 0.6 ms. 10 layers x 0.9 ms = 9 ms.
  EXPECT_NEAR(o.host_bound_layers.s(), 9e-3, kTol);
  EXPECT_NEAR(o.fetch_hooks.s(), 0, kTol);
  // A GPU-bound layer (10 ms forward, 20 ms backward) hides the same host time entirely.
  c.forward.dense_gemm = Seconds::Of(10e-3);
  c.backward.dense_gemm = Seconds::Of(20e-3);
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).host_bound_layers.s(), 0, kTol);
  // Off (the kernels alone): nothing.
  t.framework = FrameworkProfile{};
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).total().s(), 0, kTol);
}

// Uneven pipeline stages: 40 layers over PP 4 with 4 on the first and last stage, so the
// critical stage holds the middle 16 (a share of 0.4). Its kernel times are those 16 layers':
// forward 1.6 ms and backward 3.2 ms, 0.1 and 0.2 ms a layer as above, so each layer exposes
// 0.3 + 0.6 = 0.9 ms of host time and the stage 16 x 0.9 = 14.4 ms. Before, the layers were
// counted as the even 40 / 4 = 10, each "0.16 ms" forward: 10 x (0.24 + 0.48) = 7.2 ms.
TEST(FrameworkOverhead, UnevenStagesCountTheCriticalStagesLayers) {
  StepTables t;
  t.framework = Profile(40);
  t.framework_counts = {40, 0, 9};
  StepLayout s;
  s.layout.pp = 4;
  MicroBatchCompute c;
  c.critical.layers = 0.4;
  c.critical.last = false;
  c.forward.dense_gemm = Seconds::Of(1.6e-3);
  c.backward.dense_gemm = Seconds::Of(3.2e-3);
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).host_bound_layers.s(), 14.4e-3, kTol);
}

// The ZeRO-3 fetch work joins each layer's host ops: 9 parameters x 17 ops (DP 8) = 153 ops.
TEST(FrameworkOverhead, ZeroThreeFetchHooks) {
  StepTables t;
  t.framework = Profile(40);
  t.framework.zero3_ops_per_param = 17;
  t.framework_counts = {10, 0, 9};
  StepLayout s;
  MicroBatchCompute c;
  c.forward.dense_gemm = Seconds::Of(1e-3);
  c.backward.dense_gemm = Seconds::Of(2e-3);
  const FrameworkOverhead o = ComputeFrameworkOverhead(t, s, c);
  // forward (40 + 153) x 10 us = 1.93 ms - 0.1 = 1.83 ms; backward (80 + 153) = 2.33 - 0.2 =
  // 2.13 ms; 10 layers x 3.96 ms = 39.6 ms, of which 9 ms are the layers' own ops (above).
  EXPECT_NEAR(o.host_bound_layers.s(), 9e-3, kTol);
  EXPECT_NEAR(o.fetch_hooks.s(), 39.6e-3 - 9e-3, 1e-12);
}

// FSDP2's fetch work (3 ops per layer fetch + 1 per parameter: 3 + 9 = 12 ops) joins the forward
// and, resharded after forward, the backward; the full recompute's forward runs on the parameters
// the backward gathered and fetches nothing. 10 layers; GPU per layer 0.1 ms forward, 0.2 ms
// backward, 0.1 ms recompute. Forward (40 + 12) x 10 us - 0.1 = 0.42 ms against 0.30 ms
// without the hooks (+0.12); backward (80 + 12) - 0.2 = 0.72 against 0.60 (+0.12); the
// recompute's 40 ops unchanged. 10 layers x 0.24 ms = 2.4 ms (3.6 ms when the recompute was
// charged a third fetch). Kept after forward, only the forward fetches: 10 x 0.12 = 1.2 ms.
TEST(FrameworkOverhead, Fsdp2FetchesInForwardAndBackwardNotInTheRecompute) {
  StepTables t;
  t.framework = Profile(40);
  t.framework.fsdp2_ops_per_fetch = 3;
  t.framework.fsdp2_ops_per_param = 1;
  t.framework_counts = {10, 0, 9};
  StepLayout s;
  s.sharding.mode = ShardingMode::kFsdp2;
  s.recompute = RecomputeGranularity::kFull;
  s.recompute_layer_fraction = 1;
  MicroBatchCompute c;
  c.forward.dense_gemm = Seconds::Of(1e-3);
  c.backward.dense_gemm = Seconds::Of(2e-3);
  c.recompute.dense_gemm = Seconds::Of(1e-3);
  const FrameworkOverhead o = ComputeFrameworkOverhead(t, s, c);
  // The layers' own ops: 10 x (0.3 + 0.6 + 0.3) ms = 12 ms.
  EXPECT_NEAR(o.host_bound_layers.s(), 12e-3, kTol);
  EXPECT_NEAR(o.fetch_hooks.s(), 2.4e-3, kTol);
  s.sharding.reshard_after_forward = false;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).fetch_hooks.s(), 1.2e-3, kTol);
}

// HF's per-expert loop: 4 MoE layers of 128 experts on one rank (EP 1). The experts' GEMMs take
// 51.2 ms forward, 0.1 ms an expert, and 102.4 ms backward, 0.2 ms an expert.
TEST(FrameworkOverhead, PerExpertLoopScalesWithExperts) {
  StepTables t;
  t.num_experts = 128;
  t.framework = Profile(0, 10);
  t.framework_counts = {4, 4, 0};
  StepLayout s;
  MicroBatchCompute c;
  c.forward.expert_gemm = Seconds::Of(51.2e-3);
  c.backward.expert_gemm = Seconds::Of(102.4e-3);
  const FrameworkOverhead o = ComputeFrameworkOverhead(t, s, c);
  // forward per expert: 10 ops x 10 us = 0.1 ms, covered by its 0.1 ms of GEMMs, + one launch
  // after the torch.where sync (10 us); backward 20 ops = 0.2 ms, covered. 512 experts x 10 us.
  EXPECT_NEAR(o.expert_loop.s(), 512 * 10e-6, kTol);
  // Half the tokens: the GEMMs halve, the host time does not; forward 0.1 - 0.05 + 0.01 ms and
  // backward 0.2 - 0.1 ms an expert: 512 x 0.16 ms = 81.92 ms. Time follows experts, not tokens.
  c.forward.expert_gemm = Seconds::Of(25.6e-3);
  c.backward.expert_gemm = Seconds::Of(51.2e-3);
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).expert_loop.s(), 512 * 0.16e-3, 1e-12);
  // With EP 8 a rank loops over 16 experts: 64 loop bodies, each with 8x the GEMM time.
  s.layout.ep = 8;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).expert_loop.s(), 64 * 10e-6, 1e-12);
}

// megatron-core's SequentialMLP: the same loop without a host sync per expert (the token counts
// are on the host already). 4 MoE layers x 128 experts (EP 1), 6 ops an expert; GEMMs 0.025 ms
// forward and 0.05 ms backward an expert (12.8 ms and 25.6 ms in all). Forward: 6 x 10 us =
// 0.06 ms of host against 0.025 ms: 0.035 ms exposed, no launch after a sync; backward 12 ops =
// 0.12 ms against 0.05 ms: 0.07 ms. 512 x 0.105 ms = 53.76 ms. With one sync an expert (HF's
// torch.where) each forward adds a launch: 512 x 0.115 ms = 58.88 ms.
TEST(FrameworkOverhead, SequentialExpertsLoopWithoutSyncs) {
  StepTables t;
  t.num_experts = 128;
  t.framework = Profile(0, 6);
  t.framework.expert_loop_syncs = 0;
  t.framework_counts = {4, 4, 0};
  StepLayout s;
  MicroBatchCompute c;
  c.forward.expert_gemm = Seconds::Of(12.8e-3);
  c.backward.expert_gemm = Seconds::Of(25.6e-3);
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).expert_loop.s(), 512 * 0.105e-3, 1e-12);
  t.framework.expert_loop_syncs = 1;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).expert_loop.s(), 512 * 0.115e-3, 1e-12);
}

// FlashAttention-2 at 0.52 / 0.56 of cuDNN's rate: attention takes 1 / 0.52 and 1 / 0.56 as long.
TEST(FrameworkOverhead, AttentionBackend) {
  StepTables t;
  t.framework = Profile(0);
  t.framework.attention_forward_factor = 0.52;
  t.framework.attention_backward_factor = 0.56;
  t.framework_counts = {1, 0, 0};
  StepLayout s;
  MicroBatchCompute c;
  c.forward.attention = Seconds::Of(0.52);
  c.backward.attention = Seconds::Of(1.12);
  // 0.52 / 0.52 - 0.52 = 0.48 s; 1.12 / 0.56 - 1.12 = 0.88 s.
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).attention_backend.s(), 0.48 + 0.88, 1e-12);
}

// The reference job through each stack: megatron-core adds almost nothing at 29K-token micro
// batches (GPU-bound layers); DeepSpeed ZeRO-3 on HF code adds its fetch hooks, a row of the
// breakdown, and the step is several times longer (the course measured about 5x for ZeRO-3).
TEST(FrameworkOverhead, ReferenceJobRows) {
  auto mc = testing::LoadReferenceStep();
  auto ds = testing::LoadReferenceStep({"framework.name=deepspeed", "sharding.mode=zero3"});
  auto r_mc = EvaluateStep(mc.setup.tables, mc.setup.layout, *mc.comm);
  auto r_ds = EvaluateStep(ds.setup.tables, ds.setup.layout, *ds.comm);
  ASSERT_TRUE(r_mc.ok() && r_ds.ok());
  EXPECT_LT((*r_mc)[StepPart::kFrameworkHostBound].exposed.s(), 0.01);
  EXPECT_GT((*r_ds)[StepPart::kFrameworkFetchHooks].exposed.s(), 10);
  EXPECT_GT(r_ds->step.s(), 2 * r_mc->step.s());
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// Eager element-wise traffic on hand-set byte counts: norms 100 B, rotary 40 B, MLP activation
// 60 B, attention copies 20 B per token (forward, all layers), TP 2 without sequence
// parallelism, 1,000,000 tokens, HBM 1e12 B/s at 0.5 (5e11 B/s achieved), one stage. Factors 9,
// 5, 1.5 with the copies: extra per token = 8 x 100 + (4 x 40 + 0.5 x 60 + 20) / 2 = 800 + 105 =
// 905 B; forward 905 x 1e6 / 5e11 = 1.81 ms. The fused term's recompute is half its forward
// (0.5 ms of 1 ms), so the three passes are 1 + 2 + 0.5: 6.335 ms. Under compile the profile
// carries factors of 1 and no copies: nothing.
TEST(FrameworkOverhead, EagerElementwiseTraffic) {
  StepTables t;
  t.framework = Profile(0);
  t.framework.eager_norm = 9;
  t.framework.eager_rotary = 5;
  t.framework.eager_activation = 1.5;
  t.framework.eager_attention_copies = true;
  t.framework_counts = {10, 0, 9};
  t.norm_bytes_per_token = 100;
  t.rotary_bytes_per_token = 40;
  t.dense_mlp_act_bytes_per_token = 60;
  t.attention_copy_bytes_per_token = 20;
  t.mean_tokens = 1e6;
  t.hbm = BytesPerSecond::Of(1e12);
  t.efficiency.hbm_efficiency = 0.5;
  StepLayout s;
  s.layout.tp = 2;
  s.micro_batch = 1;
  MicroBatchCompute c;
  c.forward.memory_bound = Seconds::Of(1e-3);
  c.recompute.memory_bound = Seconds::Of(0.5e-3);
  const FrameworkOverhead o = ComputeFrameworkOverhead(t, s, c);
  EXPECT_NEAR(o.eager_elementwise.s(), 1.81e-3 * 3.5, 1e-12);
  EXPECT_NEAR(o.fsdp2_copy_out.s(), 0, kTol);  // not FSDP2
  // Sequence parallelism splits the norms' tokens by TP as well: 800 / 2 + 105 = 505 B; on a
  // critical stage holding half the layers: 505 x 1e6 / 5e11 x 0.5 = 0.505 ms forward, x 3.5.
  s.layout.sequence_parallel = true;
  c.critical.layers = 0.5;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).eager_elementwise.s(), 0.505e-3 * 3.5, 1e-12);
  // GQA's repeated K and V (30 B per token) move only where the release repeats them (torchtitan
  // before 0.2.2; from 0.2.2 SDPA takes enable_gqa): 505 + 30 / 2 = 520 B -> 520 x 1e6 / 5e11 x
  // 0.5 = 0.52 ms forward, x 3.5.
  t.gqa_repeat_bytes_per_token = 30;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).eager_elementwise.s(), 0.505e-3 * 3.5, 1e-12);
  t.framework.eager_gqa_repeat = true;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).eager_elementwise.s(), 0.52e-3 * 3.5, 1e-12);
  t.framework.eager_norm = t.framework.eager_rotary = t.framework.eager_activation = 1;
  t.framework.eager_attention_copies = false;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).eager_elementwise.s(), 0, kTol);
}

// The eager traffic is GPU work, so a host-bound layer hides it. 10 layers of 40 ops at 10 us
// (0.4 ms of host a layer forward, 0.8 ms backward) over 0.1 / 0.2 ms of kernels a layer, and
// eager traffic of 1 ms forward (norm bytes 100 x (2 - 1) x 5e6 tokens / 5e11 B/s), 2 ms
// backward: the GPU now works 0.2 / 0.4 ms a layer, so the host leaves 0.2 + 0.4 = 0.6 ms a
// layer exposed, 6 ms in all (9 ms without the eager work). Kernels 3 ms + eager 3 ms + host 6
// ms = 12 ms = 10 x (max(0.4, 0.2) + max(0.8, 0.4)). Before, the host rows ignored the eager
// work: 3 + 3 + 9 = 15 ms.
TEST(FrameworkOverhead, HostBoundLayersHideTheEagerTraffic) {
  StepTables t;
  t.framework = Profile(40);
  t.framework.eager_norm = 2;
  t.framework_counts = {10, 0, 9};
  t.norm_bytes_per_token = 100;
  t.mean_tokens = 5e6;
  t.hbm = BytesPerSecond::Of(1e12);
  t.efficiency.hbm_efficiency = 0.5;
  StepLayout s;
  s.micro_batch = 1;
  MicroBatchCompute c;
  c.forward.dense_gemm = Seconds::Of(1e-3);
  c.backward.dense_gemm = Seconds::Of(2e-3);
  const FrameworkOverhead o = ComputeFrameworkOverhead(t, s, c);
  EXPECT_NEAR(o.eager_elementwise.s(), 3e-3, 1e-12);
  EXPECT_NEAR(o.host_bound_layers.s(), 6e-3, 1e-12);
  EXPECT_NEAR(o.fixed().s(), 6e-3, 1e-12);  // the stragglers' per-token fit keeps the eager part
}

// FSDP2's copy-out: 8e9 non-expert parameters at TP 1, bf16 gathers (2 B), resharded after
// forward (2 gathers a micro batch), 2 bytes moved per gathered byte, HBM 2.4e12 B/s at 0.7
// (1.68e12): 2 x 8e9 x 2 x 2 / 1.68e12 = 38.10 ms. Kept after forward: one gather, half that.
// With torchao's FP8 all-gather the gathered bytes are 1 per parameter: half again.
TEST(FrameworkOverhead, Fsdp2CopyOut) {
  StepTables t;
  t.framework = Profile(0);
  t.framework.fsdp2_copy_out_bytes_per_byte = 2;
  t.framework_counts = {32, 0, 9};
  t.traffic.non_expert_params = 8'000'000'000;
  t.hbm = BytesPerSecond::Of(2.4e12);
  t.efficiency.hbm_efficiency = 0.7;
  StepLayout s;
  s.sharding.mode = ShardingMode::kFsdp2;
  s.param_bytes = 2;
  MicroBatchCompute c;
  const double two_gathers = 2 * 8e9 * 2 * 2 / 1.68e12;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).fsdp2_copy_out.s(), two_gathers, 1e-12);
  s.sharding.reshard_after_forward = false;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).fsdp2_copy_out.s(), two_gathers / 2, 1e-12);
  s.fp8.recipe = Fp8Recipe::kTorchaoTensorwise;
  s.fp8.param_gather = true;
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).fsdp2_copy_out.s(), two_gathers / 4, 1e-12);
  s.sharding.mode = ShardingMode::kZero3;  // DeepSpeed's gathers are views: no copy-out
  EXPECT_NEAR(ComputeFrameworkOverhead(t, s, c).fsdp2_copy_out.s(), 0, kTol);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// The breakdown part printed as `name`, or nullptr when no part has that name.
const StepPartTime* PartNamed(const StepResult& r, std::string_view name) {
  for (size_t i = 0; i < kStepPartCount; ++i) {
    if (StepPartName(static_cast<StepPart>(i)) == name) return &r.parts[i];
  }
  return nullptr;
}

// The breakdown names the framework's memory traffic by what the job runs. megatron-core has no
// FSDP2, yet its runs printed "framework: eager ops + FSDP2 copies" (the Megatron-Bridge rows of
// docs/step-validation-cards.md). The eager module code's extra bytes are the part "framework:
// unfused elementwise ops"; FSDP2's copy of each gathered unit into its parameters
// (framework_overhead.cc, only under sharding.mode fsdp2) is "framework: FSDP2 copy-out". Each
// part is m x its micro batch cost, m read off the forward part (m x one micro batch's forward).
TEST(FrameworkOverhead, BreakdownNamesTheTrafficTheJobRuns) {
  // The reference job with GPT-OSS-120B, whose clamped GLU and expert biases megatron-core runs
  // in eager code (data/frameworks.yaml).
  auto step = [](const std::vector<std::string>& sets) {
    JobRequest request;
    request.job = "qwen3.6-35b-a3b-sft-h20x40";
    request.model = "gpt-oss-120b";
    request.overrides = sets;
    auto job = ResolveJob(request);
    EXPECT_TRUE(job.ok()) << (job.ok() ? "" : job.error().Format());
    return job.ok() ? testing::EvaluateJobStep(*job) : std::nullopt;
  };
  const auto r_mc = step({"framework.name=megatron-core"});
  const auto r_tt = step({"framework.name=torchtitan", "sharding.mode=fsdp2"});
  ASSERT_TRUE(r_mc.has_value() && r_tt.has_value());
  // Preconditions: megatron-core's eager clamp moves bytes; torchtitan's FSDP2 copies out.
  ASSERT_GT(r_mc->framework.eager_elementwise.s(), 0);
  ASSERT_EQ(r_mc->framework.fsdp2_copy_out.s(), 0);
  ASSERT_GT(r_tt->framework.fsdp2_copy_out.s(), 0);

  for (size_t i = 0; i < kStepPartCount; ++i) {
    if (r_mc->parts[i].total.s() <= 0) continue;
    EXPECT_EQ(StepPartName(static_cast<StepPart>(i)).find("FSDP2"), std::string_view::npos)
        << StepPartName(static_cast<StepPart>(i));
  }
  auto expect_parts = [](const StepResult& r) {
    const double m = r[StepPart::kForward].total / r.forward.total();
    const StepPartTime* eager = PartNamed(r, "framework: unfused elementwise ops");
    const StepPartTime* copy = PartNamed(r, "framework: FSDP2 copy-out");
    ASSERT_NE(eager, nullptr);
    ASSERT_NE(copy, nullptr);
    EXPECT_NEAR(eager->total.s(), m * r.framework.eager_elementwise.s(), 1e-9);
    EXPECT_NEAR(eager->exposed.s(), eager->total.s(), 1e-12);
    EXPECT_NEAR(copy->total.s(), m * r.framework.fsdp2_copy_out.s(), 1e-9);
    EXPECT_NEAR(copy->exposed.s(), copy->total.s(), 1e-12);
  };
  expect_parts(*r_mc);
  expect_parts(*r_tt);
}

}  // namespace
}  // namespace strata

// The step model's components, each against a value derived by hand (derivations in comments).
#include "strata/sim/step_model.h"

#include <gtest/gtest.h>

#include "sim/step_test_support.h"
#include "strata/sim/straggler.h"

namespace strata {
namespace {

using testing::LoadReferenceStep;

// A 4096 x 4096 x 4096 GEMM at gemm_large 0.80, half_dim 64 (the shipped H20 values):
//   f(4096) = 4096 / 4160 = 0.984615; f^3 = 0.954553; efficiency = 0.8 x 0.954553 = 0.763642
//   time = 2 x 4096^3 FLOP / (148e12 FLOP/s x 0.763642) = 1.37439e11 / 1.13019e14 = 1.21607 ms
TEST(StepModel, GemmAtItsStatedEfficiency) {
  KernelEfficiency e;
  e.gemm_large = 0.80;
  e.gemm_half_dim = 64;
  const double eff = GemmEfficiency(e, 4096, 4096, 4096);
  EXPECT_NEAR(eff, 0.763642, 1e-6);
  EXPECT_NEAR(2.0 * 4096 * 4096 * 4096 / (148e12 * eff) * 1e3, 1.21607, 1e-4);
  // A skinny GEMM (64 tokens) runs at half the large-shape rate in that dimension.
  EXPECT_NEAR(GemmEfficiency(e, 64, 4096, 4096) / eff, 0.5 / 0.984615, 1e-6);
}

// The sustained clock scales every tensor-core rate: the 4096-cube GEMM above at a sustained
// clock of 0.88 runs at 0.763642 x 0.88 = 0.672005 of peak, 1.21607 / 0.88 = 1.38190 ms.
TEST(StepModel, SustainedClockSlowsTensorCoreRates) {
  KernelEfficiency e;
  e.gemm_large = 0.80;
  e.gemm_half_dim = 64;
  e.sustained_clock = 0.88;
  const double eff = GemmEfficiency(e, 4096, 4096, 4096);
  EXPECT_NEAR(eff, 0.672005, 1e-6);
  EXPECT_NEAR(2.0 * 4096 * 4096 * 4096 / (148e12 * eff) * 1e3, 1.38190, 1e-4);
  // Flash attention at long sequences: forward 0.60 -> 0.528 (x 0.88), at S / (S + 512) = 1
  // in the limit; 8,192 tokens: 0.6 x 0.88 x 8192 / 8704 = 0.496941.
  e.attention_forward = 0.60;
  e.attention_half_seq = 512;
  EXPECT_NEAR(AttentionEfficiency(e, 8192, false), 0.496941, 1e-6);
}

// On a whole micro batch of the reference job, halving the sustained clock doubles every
// tensor-core kernel (dense and expert GEMMs, attention, Gated DeltaNet, and so the recompute
// of them) and leaves the memory-bound ones (HBM clock) alone.
TEST(StepModel, SustainedClockLeavesMemoryBoundKernelsAlone) {
  auto ref = LoadReferenceStep();
  StepTables slow = ref.setup.tables;
  slow.efficiency.sustained_clock = ref.setup.tables.efficiency.sustained_clock / 2;
  const MicroBatchCompute a = ComputeMicroBatch(ref.setup.tables, ref.setup.layout);
  const MicroBatchCompute b = ComputeMicroBatch(slow, ref.setup.layout);
  EXPECT_NEAR(b.forward.dense_gemm / a.forward.dense_gemm, 2.0, 1e-9);
  EXPECT_NEAR(b.forward.expert_gemm / a.forward.expert_gemm, 2.0, 1e-9);
  EXPECT_NEAR(b.forward.attention / a.forward.attention, 2.0, 1e-9);
  EXPECT_NEAR(b.backward.attention / a.backward.attention, 2.0, 1e-9);
  EXPECT_NEAR(b.recompute.dense_gemm / a.recompute.dense_gemm, 2.0, 1e-9);  // full recompute
  EXPECT_NEAR(b.forward.gated_deltanet / a.forward.gated_deltanet, 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(b.forward.memory_bound.value(), a.forward.memory_bound.value());
  EXPECT_DOUBLE_EQ(b.backward.memory_bound.value(), a.backward.memory_bound.value());
}

// FP8 recipes run the routed experts on the FP8 peak times fp8_gemm: halving it doubles their
// time (the router and the output layer stay bf16, so the dense group is not a clean 2x).
TEST(StepModel, Fp8GemmFactorScalesTheFp8Linears) {
  auto ref = LoadReferenceStep({"fp8.recipe=blockwise"});
  StepTables half = ref.setup.tables;
  half.efficiency.fp8_gemm = ref.setup.tables.efficiency.fp8_gemm / 2;
  const MicroBatchCompute a = ComputeMicroBatch(ref.setup.tables, ref.setup.layout);
  const MicroBatchCompute b = ComputeMicroBatch(half, ref.setup.layout);
  EXPECT_NEAR(b.forward.expert_gemm / a.forward.expert_gemm, 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(b.forward.attention.value(), a.forward.attention.value());
  EXPECT_DOUBLE_EQ(b.forward.logits_and_loss.value(), a.forward.logits_and_loss.value());
  // Without an FP8 recipe the factor does nothing.
  auto bf16 = LoadReferenceStep();
  StepTables bf16_half = bf16.setup.tables;
  bf16_half.efficiency.fp8_gemm = 0.5;
  EXPECT_DOUBLE_EQ(ComputeMicroBatch(bf16_half, bf16.setup.layout).forward.total().value(),
                   ComputeMicroBatch(bf16.setup.tables, bf16.setup.layout).forward.total().value());
}

// Sliding-window layers run flash attention over their window, not the sequence: a toy stack
// of 1e9 attention FLOP per token, 0.2e9 of it from layers with a 128-token window, 4,096 tokens
// (one micro batch), peak 1e15 FLOP/s, forward 0.6 / backward 0.45 x S / (S + 512):
//   full span:  0.8e9 x 4096 / (1e15 x 0.6 x 4096/4608 = 0.533333) = 6.1440 ms
//   windowed:   0.2e9 x 4096 / (1e15 x 0.6 x 128/640 = 0.12)       = 6.8267 ms -> 12.9707 ms
//   backward:   2 x 0.8e9 x 4096 / (1e15 x 0.4)  + 2 x 0.2e9 x 4096 / (1e15 x 0.09)
//             = 16.384 + 18.2044 = 34.5884 ms
// Priced at the sequence's efficiency alone, the windowed FLOP would cost 1.536 ms forward.
TEST(StepModel, SlidingWindowAttentionAtItsWindowsEfficiency) {
  StepTables t;
  t.peak = FlopPerSecond::Of(1e15);
  t.hbm = BytesPerSecond::Of(1e12);
  t.efficiency.hbm_efficiency = 0.7;
  t.efficiency.attention_forward = 0.6;
  t.efficiency.attention_backward = 0.45;
  t.efficiency.attention_half_seq = 512;
  t.layers = 1;
  t.mean_tokens = 4096;
  t.attention_tokens = 4096;
  t.attention_flop_per_token = 1e9;
  t.windowed_attention_flop_per_token = 0.2e9;
  t.attention_window_tokens = 128;
  StepLayout s;
  s.micro_batch = 1;
  const MicroBatchCompute c = ComputeMicroBatch(t, s);
  EXPECT_NEAR(c.forward.attention.value() * 1e3, 12.9707, 1e-4);
  EXPECT_NEAR(c.backward.attention.value() * 1e3, 34.5884, 1e-4);
  // The windowed part the stragglers' fit takes as linear in S: 6.8267 + 18.2044 = 25.0311 ms,
  // and with full recompute the forward again: + 6.8267 = 31.8578 ms.
  EXPECT_NEAR(c.windowed_attention.value() * 1e3, 25.0311, 1e-4);
  s.recompute = RecomputeGranularity::kFull;
  EXPECT_NEAR(ComputeMicroBatch(t, s).windowed_attention.value() * 1e3, 31.8578, 1e-4);
  s.recompute = RecomputeGranularity::kNone;
  t.windowed_attention_flop_per_token = 0;  // every layer at the full span
  EXPECT_NEAR(ComputeMicroBatch(t, s).forward.attention.value() * 1e3, 7.680, 1e-4);
}

// Unfused attention, one layer of SC21-01 (GPT h2304, 24 heads of 96, S = 2048, micro batch 16,
// TP 1) on an A100 (312 TFLOP/s, HBM 2.039 TB/s x 0.70), dropout 0.1:
//   scores = 24 x 2048 per token x 32,768 tokens = 1,610,612,736
//   GEMM FLOP (QK^T and AV over the full S x S) = 4 x scores x 96 = 6.18475e11
//   efficiency = 0.941 x (2048/2301)^2 x 96/349 = 0.941 x 0.792185 x 0.275072 = 0.205051
//   GEMM time = 6.18475e11 / (312e12 x 0.205051) = 9.6673 ms
//   forward passes: softmax 4 B + dropout 5 B = 9 B x scores = 1.44955e10 B / 1.4273e12 B/s
//     = 10.1559 ms -> forward 19.823 ms
//   backward: 2 x 9.6673 + (6 + 5) B x scores / 1.4273e12 = 19.3346 + 12.4128 = 31.747 ms
TEST(StepModel, UnfusedAttentionByHand) {
  StepTables t;
  t.peak = FlopPerSecond::Of(312e12);
  t.efficiency.gemm_large = 0.941;
  t.efficiency.gemm_half_dim = 253;
  t.unfused_attention = true;
  t.score_row_tokens = 2048;
  t.score_elements_per_token = 24 * 2048;
  t.score_head_dim = 96;
  t.score_value_dim = 96;
  t.attention_dropout = 0.1;
  const double hbm = 2.039e12 * 0.70;
  const UnfusedAttentionTimes u = UnfusedAttention(t, 16 * 2048, hbm);
  EXPECT_NEAR(u.gemm_efficiency, 0.205051, 1e-6);
  EXPECT_DOUBLE_EQ(u.score_bytes_forward, 9);
  EXPECT_DOUBLE_EQ(u.score_bytes_backward, 11);
  EXPECT_NEAR(u.forward.value() * 1e3, 19.823, 1e-3);
  EXPECT_NEAR(u.backward.value() * 1e3, 31.747, 1e-3);
  // Without dropout the passes are the softmax's alone: 4 B forward, 6 B backward.
  t.attention_dropout = 0;
  const UnfusedAttentionTimes plain = UnfusedAttention(t, 16 * 2048, hbm);
  EXPECT_NEAR((u.forward - plain.forward).value() * 1e3, 5.0 * 1'610'612'736 / hbm * 1e3, 1e-6);
}

// Packed samples of mean 5,009 and spread 2,933 tokens in 32,768-token rows: flash attention
// sees (5,009^2 + 2,933^2) / 5,009 = 6,726.4 tokens; the unfused kernel has no variable-length
// form, so its score rows stay 32,768 long.
TEST(StepModel, PackedSamplesAttendWithinThemselvesUnlessUnfused) {
  EXPECT_NEAR(PackedAttentionTokens(5009, 2933, 32768), 6726.4, 0.1);
  EXPECT_DOUBLE_EQ(PackedAttentionTokens(0, 0, 32768), 32768);  // no stats: the packed row
  // (30,000^2 + 12,000^2) / 30,000 = 34,800: at most the row.
  EXPECT_DOUBLE_EQ(PackedAttentionTokens(30000, 12000, 32768), 32768);
  const std::vector<std::string> packed = {"sequence.max_tokens=32768", "sequence.packing=true",
                                           "sequence.mean_tokens=5009", "sequence.std_tokens=2933"};
  const auto flash = LoadReferenceStep(packed);
  EXPECT_NEAR(flash.setup.tables.attention_tokens, 6726.4, 0.1);
  // The resolved job carries it, so MFU (which reads the job's lengths) sees the same length.
  EXPECT_DOUBLE_EQ(flash.setup.job.step.sequence.AttentionTokens(),
                   flash.setup.tables.attention_tokens);
  // A spread of 0 is every sample at the mean ("4K" is 4,096 as a length): (4,096^2 + 0) / 4,096
  // = 4,096.
  EXPECT_DOUBLE_EQ(LoadReferenceStep({"sequence.max_tokens=32768", "sequence.packing=true",
                                      "sequence.mean_tokens=4K", "sequence.std_tokens=0"})
                       .setup.tables.attention_tokens,
                   4096);
  // The mean without a spread: std_tokens' documented default is 0 (docs/job-file.md), so the
  // same 4,096, said as an assumption. It used to ignore the mean and charge the packed 32,768
  // (E[S^2]/E[S] of one 32K row), 8x the attention FLOPs a token: on Llama-3.1-8B, 6 x 32 heads x
  // 128 x 32,768 = 25.77 GFLOP a token of attention instead of 6 x 32 x 128 x 4,096 = 3.22.
  const auto no_spread = LoadReferenceStep(
      {"sequence.max_tokens=32768", "sequence.packing=true", "sequence.mean_tokens=4K"});
  EXPECT_DOUBLE_EQ(no_spread.setup.tables.attention_tokens, 4096);
  EXPECT_DOUBLE_EQ(no_spread.setup.job.step.sequence.AttentionTokens(), 4096);  // MFU's too
  EXPECT_NE(no_spread.setup.job.step.sequence.assumption.find("spread ASSUMED 0"),
            std::string::npos);
  EXPECT_EQ(flash.setup.job.step.sequence.assumption, "");  // given: nothing assumed
  std::vector<std::string> unfused = packed;
  unfused.push_back("attention.kernel=unfused");
  const auto eager = LoadReferenceStep(unfused);
  EXPECT_DOUBLE_EQ(eager.setup.tables.score_row_tokens, 32768);
  EXPECT_TRUE(eager.setup.tables.unfused_attention);
}

TEST(StepModel, LoadsTheShippedEfficiencies) {
  auto file = LoadKernelEfficiency();
  ASSERT_TRUE(file.ok()) << file.error().Format();
  // The shipped rule: large x prod d / (d + 253). At an 8192-cube each factor is
  // 8192 / 8445 = 0.97004, cubed 0.91280, so a part's value is its best-shape MAMF figure / 0.9128:
  EXPECT_DOUBLE_EQ(file->For("H20").gemm_large, 0.878);   // default: H100 MAMF 80.1% / 0.9128
  EXPECT_DOUBLE_EQ(file->For("A800").gemm_large, 0.941);  // A100 MAMF 85.9% / 0.9128
  EXPECT_DOUBLE_EQ(file->For("H200").gemm_large, 0.878);  // fitted to GEMMs timed on an H200
  // MI300X MAMF 781.9 / 1,307.4 = 0.5981 / 0.9128 = 0.655; B200 1,693.5 / 2,250 = 0.7527 / 0.9128
  // = 0.825 (the middle of five mamf-finder runs, 1,682-1,705).
  EXPECT_DOUBLE_EQ(file->For("MI300X").gemm_large, 0.655);
  EXPECT_DOUBLE_EQ(file->For("B200").gemm_large, 0.825);
  EXPECT_DOUBLE_EQ(file->For("B200").sustained_clock, 0.84);
  EXPECT_DOUBLE_EQ(file->For("MI300X").sustained_clock, 1.0);  // at its power cap from the start
  EXPECT_DOUBLE_EQ(file->For("H20").gemm_half_dim, 253);
  EXPECT_DOUBLE_EQ(file->For("A800").attention_forward, 0.65);
  // Sustained / burst matmul rate: H200 MSMF 744.5 / MAMF 846.5 TFLOP/s = 0.8795 -> 0.88; the
  // H100 SXM shares its die and 700 W limit; no figure for the A100-class parts or the H20.
  EXPECT_DOUBLE_EQ(file->For("H200").sustained_clock, 0.88);
  EXPECT_DOUBLE_EQ(file->For("H100 SXM").sustained_clock, 0.88);
  EXPECT_DOUBLE_EQ(file->For("A800").sustained_clock, 1.0);
  EXPECT_DOUBLE_EQ(file->For("A800").sustained_clock, 1.0);
  EXPECT_DOUBLE_EQ(file->For("H20").sustained_clock, 1.0);
  // FP8 sustained / bf16 sustained fraction of peak on the H200: (1,333.5 / 1,979) /
  // (744.5 / 989.5) = 0.6738 / 0.7524 = 0.896 -> 0.90.
  EXPECT_DOUBLE_EQ(file->For("H100 SXM").fp8_gemm, 0.90);
  EXPECT_DOUBLE_EQ(file->For("H20").fp8_gemm, 1.0);
  EXPECT_FALSE(file->sources.at("gemm").empty());
}

TEST(StepModel, RejectsMalformedEfficiencyFiles) {
  const std::string good = R"(gemm: {default: 0.8, half_dim: 64, source: s}
grouped_gemm: {factor: 0.9, source: s}
flash_attention: {default: {forward: 0.6, backward: 0.45}, half_seq_tokens: 512, source: s}
gated_deltanet: {fla: {forward: 0.0735, backward: 0.0488}, flashqla: {forward: 0.158, backward: 0.110}, torch: {forward_ops_per_chunk: 17, backward_ops_per_chunk: 30, solve_ops_per_row: 6, solve_bytes_per_element: 20}, other_linear_mixers: 0.25, source: s}
memory_bound: {hbm_efficiency: 0.7, source: s}
moe_routing_skew: {factor: 1.15, source: s}
power_limit: {clock_exponent: 0.333, source: s}
async_tp: {max_step_saving: 0.091, source: s}
sustained_clock: {default: 1.0, per_gpu: {H200: 0.88, B200: 0.84}, source: s}
fp8_gemm: {default: 1.0, per_gpu: {H200: 0.9}, source: s}
)";
  auto parsed = ParseKernelEfficiency(good, "k.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().Format();
  EXPECT_DOUBLE_EQ(parsed->For("H200").sustained_clock, 0.88);
  EXPECT_DOUBLE_EQ(parsed->For("H20").sustained_clock, 1.0);
  // A GPU named in several sections keeps each section's value: the attention override of the
  // good text below is the A800's, so give it a sustained clock too.
  auto several = ParseKernelEfficiency(
      good.substr(0, good.find("flash_attention")) +
          "flash_attention: {default: {forward: 0.6, backward: 0.45}, per_gpu: {A800: {forward: "
          "0.65, backward: 0.5}}, half_seq_tokens: 512, source: s}\n" +
          good.substr(good.find("gated_deltanet"), good.find("sustained") - good.find("gated")) +
          "sustained_clock: {default: 1.0, per_gpu: {A800: 0.95}, source: s}\n" +
          good.substr(good.find("fp8_gemm")),
      "k.yaml");
  ASSERT_TRUE(several.ok()) << several.error().Format();
  EXPECT_DOUBLE_EQ(several->For("A800").attention_forward, 0.65);
  EXPECT_DOUBLE_EQ(several->For("A800").sustained_clock, 0.95);
  EXPECT_DOUBLE_EQ(several->For("A800").gemm_large, 0.8);  // no gemm override: the default
  EXPECT_DOUBLE_EQ(parsed->For("H200").fp8_gemm, 0.9);
  EXPECT_DOUBLE_EQ(parsed->For("H20").fp8_gemm, 1.0);
  auto no_fp8 = ParseKernelEfficiency(good.substr(0, good.find("fp8_gemm")), "k.yaml");
  ASSERT_FALSE(no_fp8.ok());
  EXPECT_NE(no_fp8.error().Format().find("fp8_gemm"), std::string::npos) << no_fp8.error().Format();
  // A clock above the one the efficiencies were measured at is not a sustained clock.
  auto boosted = ParseKernelEfficiency(
      good.substr(0, good.find("sustained")) + "sustained_clock: {default: 1.2, source: s}\n",
      "k.yaml");
  ASSERT_FALSE(boosted.ok());
  EXPECT_NE(boosted.error().Format().find("sustained_clock.default"), std::string::npos)
      << boosted.error().Format();
  auto missing = ParseKernelEfficiency(good.substr(0, good.find("sustained")), "k.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().Format().find("sustained_clock"), std::string::npos)
      << missing.error().Format();
  auto bad = ParseKernelEfficiency(good.substr(0, good.find("grouped")) +
                                       "grouped_gemm: {factor: 1.5, source: s}\n" +
                                       good.substr(good.find("flash")),
                                   "k.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Format().find("expected a fraction in (0, 1], got 1.5"), std::string::npos)
      << bad.error().Format();
  auto no_source = ParseKernelEfficiency(
      "gemm: {default: 0.8, half_dim: 64}\n" + good.substr(good.find("grouped")), "k.yaml");
  ASSERT_FALSE(no_source.ok());
  auto unknown = ParseKernelEfficiency(good + "gemm_typo: 1\n", "k.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().Format().find("gemm_typo"), std::string::npos);
  auto truncated = ParseKernelEfficiency(good.substr(0, 60), "k.yaml");
  EXPECT_FALSE(truncated.ok());
}

// p = 4 stages, m = 8 micro batches, v = 2 virtual stages: bubble = (4 - 1) / (8 x 2) = 0.1875.
// Without interleaving (v = 1): 3 / 8 = 0.375. No pipeline: 0.
TEST(StepModel, BubbleFraction) {
  EXPECT_DOUBLE_EQ(BubbleFraction(4, 8, 2), 0.1875);
  EXPECT_DOUBLE_EQ(BubbleFraction(4, 8, 1), 0.375);
  EXPECT_DOUBLE_EQ(BubbleFraction(1, 8, 1), 0.0);
}

// The stage that paces 1F1B, on made-up times: 24 layers of 1 s forward and 2 s backward
// (72 s for the stack), the output layer and loss 0.5 s forward + 1 s backward.
//   PP 2, last 11 (first 13): first 13/24 x 72 = 39 s > last 11/24 x 72 + 1.5 = 34.5 s.
//   PP 2, last 13 (first 11): last 39 + 1.5 = 40.5 s > first 33 s.
//   PP 2 even: last 36 + 1.5 > first 36 (and a tie without the output layer goes to the last).
//   PP 1: the whole stack and the output layer.
TEST(StepModel, CriticalStageOfUnevenPipelines) {
  MicroBatchCompute whole;
  whole.forward.dense_gemm = Seconds::Of(24);
  whole.forward.logits_and_loss = Seconds::Of(0.5);
  whole.backward.dense_gemm = Seconds::Of(48);
  whole.backward.logits_and_loss = Seconds::Of(1);
  ParallelLayout l;
  l.pp = 2;
  l.last_stage_layers = 11;
  StageShare s = CriticalStageOf(l, 24, whole);
  EXPECT_DOUBLE_EQ(s.layers, 13.0 / 24);
  EXPECT_FALSE(s.last);
  l.last_stage_layers = 13;
  s = CriticalStageOf(l, 24, whole);
  EXPECT_DOUBLE_EQ(s.layers, 13.0 / 24);
  EXPECT_TRUE(s.last);
  l.last_stage_layers = 0;
  s = CriticalStageOf(l, 24, whole);
  EXPECT_DOUBLE_EQ(s.layers, 0.5);
  EXPECT_TRUE(s.last);
  whole.forward.logits_and_loss = whole.backward.logits_and_loss = Seconds::Of(0);
  EXPECT_TRUE(CriticalStageOf(l, 24, whole).last);
  l.pp = 1;
  s = CriticalStageOf(l, 24, whole);
  EXPECT_DOUBLE_EQ(s.layers, 1.0);
  EXPECT_TRUE(s.last);
}

// The reference job's EP all-to-all on the map (docs/formulas.md, "Layout traffic"):
//   29,000 tokens x 8 (top-k) x 2048 x 2 B = 950,272,000 B per call, 8 ranks on one NVSwitch
//   node: 8.4 us + 7 x 3.4 us (NCCL's NVLink hop, Simple) + 7/8 x 950.272 MB / 369.9 GB/s =
//   2.28009 ms; 2 (dispatch, combine) x 3 passes (full recompute) x 40 MoE layers x 2 micro
//   batches = 480 calls: 1.09444 s per step for the mean rank; the busiest rank (the assumed
//   routing skew 1.15) receives and returns 1.15 x it: 1.25861 s, all of it exposed
//   (overlap.moe_a2a is off).
TEST(StepModel, ReferenceAllToAllOnTheMap) {
  auto ref = LoadReferenceStep();
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_NEAR((*r)[StepPart::kEp].total.s(), 1.09444 * 1.15, 1e-4);
  EXPECT_NEAR((*r)[StepPart::kEp].exposed.s(), 1.09444 * 1.15, 1e-4);
  EXPECT_EQ((*r)[StepPart::kTp].total.s(), 0.0);  // TP 1: no TP traffic
  EXPECT_EQ((*r)[StepPart::kBubble].total.s(), 0.0);
}

// A ring all-reduce on the map: the reference model at TP 2 (DP 20), no sequence parallelism.
// The TP all-reduce carries 29,000 x 2048 x 2 B = 118,784,000 B among 2 ranks on one node; on
// 2 ranks only the ring applies (tree needs 3, NVLS the whole node):
//   8.4 us + 2 x (2 - 1) x 3.4 us + 2 x 1/2 x 118.784 MB / 369.9 GB/s = 336.32 us (Simple: LL
//   and LL128 lose on their bandwidth at this size);
//   one per attention block and pass (the MoE blocks have ETP 1: no TP collective, see
//   comm/layout_traffic.h) = 3 passes x 40 layers x 2 micro batches = 240 calls: 0.0807168 s.
TEST(StepModel, RingAllReduceOnTheMap) {
  auto ref = LoadReferenceStep();
  StepLayout layout = ref.setup.layout;
  layout.layout.tp = 2;
  layout.layout.dp = 20;
  layout.micro_batches = 2;
  auto r = EvaluateStep(ref.setup.tables, layout, *ref.comm);
  ASSERT_TRUE(r.ok()) << r.error().Format();
  EXPECT_NEAR((*r)[StepPart::kTp].total.s(), 0.0807168, 1e-5);
  ASSERT_FALSE(r->traffic.empty());
  EXPECT_EQ(r->traffic.front().cost.algorithm, CommAlgorithm::kRing);
}

// Full recompute re-runs the layers' forward (not the output layer): recompute = forward minus
// the logits and loss; selective recompute re-runs core attention only; none adds nothing.
TEST(StepModel, RecomputeRerunsTheForwardOfWhatItDropped) {
  auto ref = LoadReferenceStep();
  StepLayout layout = ref.setup.layout;
  auto full = EvaluateStep(ref.setup.tables, layout, *ref.comm);
  ASSERT_TRUE(full.ok());
  EXPECT_NEAR(full->recompute.total().s(),
              (full->forward.total() - full->forward.logits_and_loss).value(), 1e-12);
  layout.recompute = RecomputeGranularity::kSelective;
  auto selective = EvaluateStep(ref.setup.tables, layout, *ref.comm);
  ASSERT_TRUE(selective.ok());
  EXPECT_NEAR(selective->recompute.total().s(), selective->forward.attention.s(), 1e-12);
  layout.recompute = RecomputeGranularity::kNone;
  auto none = EvaluateStep(ref.setup.tables, layout, *ref.comm);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->recompute.total().s(), 0.0);
}

// Backward = 2 x forward for GEMMs and memory-bound work (data and weight gradients).
TEST(StepModel, BackwardIsTwiceTheForwardForGemms) {
  auto ref = LoadReferenceStep();
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->backward.dense_gemm / r->forward.dense_gemm, 2.0, 1e-12);
  EXPECT_NEAR(r->backward.expert_gemm / r->forward.expert_gemm, 2.0, 1e-12);
}

// The step is the sum of the exposed parts; shares add up to 1.
TEST(StepModel, StepIsTheSumOfExposedParts) {
  auto ref = LoadReferenceStep();
  auto r = EvaluateStep(ref.setup.tables, ref.setup.layout, *ref.comm);
  ASSERT_TRUE(r.ok());
  double sum = 0;
  for (const auto& p : r->parts) {
    EXPECT_LE(p.exposed.s(), p.total.s() + 1e-12);
    sum += p.exposed.s();
  }
  EXPECT_NEAR(sum, r->step.s(), 1e-9);
  // 80 samples x 29,000 tokens (the mean) per step.
  EXPECT_DOUBLE_EQ(r->tokens_per_step, 2'320'000.0);
}

// Overlapping the DP gradient reduce hides all but one layer's chunk when the backward of a
// micro batch is longer than the reduce: exposed = total / layers per stage.
TEST(StepModel, GradReduceOverlapLeavesOneLayerExposed) {
  auto ref = LoadReferenceStep();
  StepLayout layout = ref.setup.layout;
  layout.overlap.grad_reduce = true;
  auto r = EvaluateStep(ref.setup.tables, layout, *ref.comm);
  ASSERT_TRUE(r.ok());
  const auto& g = (*r)[StepPart::kDpGrad];
  ASSERT_GT(g.total.s(), 0);
  EXPECT_NEAR(g.exposed.s(), g.total.s() / 40, 1e-12);  // 40 layers on the one stage
}

}  // namespace
}  // namespace strata

// The rollout's memory and time, each expected value worked out by hand (or taken from vLLM's
// own log) in the comment beside it.
#include "strata/rl/rollout.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "strata/hw/cluster.h"
#include "strata/hw/interconnects.h"

namespace strata {
namespace {

// vLLM's own profile of Meta-Llama-3-8B on an 80 GB card (vllm-project/vllm#10511, TP1):
// "total_gpu_memory 79.22GiB, gpu_memory_utilization 0.90, model weights take 14.96GiB,
// non_torch_memory 1.79GiB, PyTorch activation peak memory 1.26GiB,
// available_kv_cache_memory 53.29GiB". vLLM of that time captured CUDA graphs after sizing the
// KV cache (outside the budget), so they play no part: 0.9 x 79.22 - 14.96 - 1.79 - 1.26
// = 53.288 GiB. Llama-3-8B's KV is 131,072 B/token, so 53.288 GiB holds 436,535 tokens, 53
// sequences of 8,192 (53.288 x 2^30 / (131,072 x 8,192) = 53.29).
TEST(RolloutMemoryTest, MatchesVllmsOwnProfile) {
  RolloutMemoryInput in;
  in.capacity = Bytes::GiB(79.22);
  in.weights = Bytes::GiB(14.96);
  in.non_torch = Bytes::GiB(1.79);
  in.activation_peak = Bytes::GiB(1.26);
  in.utilization = 0.9;
  in.kv.full_per_token = Bytes::Count(131072);
  in.max_sequence_tokens = 8192;
  in.mean_sequence_tokens = 8192;
  const RolloutMemory m = ComputeRolloutMemory(in);
  EXPECT_NEAR(m.kv_cache.gib(), 53.29, 0.005);
  EXPECT_NEAR(m.max_length_sequences, 53.29, 0.01);
  EXPECT_EQ(m.concurrent_sequences, 53);
  EXPECT_TRUE(m.fits);
}

// A 100 GiB card, 40 GiB of weights, 2 + 2 GiB non-torch and activations, 1 GiB of CUDA graphs,
// 30 GiB of trainer resident, 1 MiB of KV per token, sequences of 1,024 tokens max (1 GiB) and
// 512 mean (0.5 GiB).
//   Graphs outside (vLLM 0.19): min u = (40 + 2 + 2 + 1) / 100 = 0.45;
//     max u = (100 - 30 - 1) / 100 = 0.69. At u = 0.6: KV = 60 - 44 = 16 GiB, 16 max-length
//     sequences, 32 at the mean; total = 30 + 60 + 1 = 91 GiB.
//   Graphs inside (0.21): min u = 0.46, max u = 0.70; KV at 0.6 = 60 - 45 = 15 GiB.
//   Resident 60 GiB, graphs outside: max u = 0.39 < 0.45: no utilisation fits.
struct MemoryRow {
  const char* name;
  double utilization;
  bool graphs_inside;
  double resident_gib;
  bool fits;
  double kv_gib;
  double min_u;
  double max_u;
  int64_t concurrent;
  double total_gib;
};
const MemoryRow kMemoryRows[] = {
    {"fits_graphs_outside", 0.6, false, 30, true, 16, 0.45, 0.69, 32, 91},
    {"fits_graphs_inside", 0.6, true, 30, true, 15, 0.46, 0.70, 30, 90},
    {"too_low", 0.44, false, 30, false, -0.0, 0.45, 0.69, 0, 75},
    {"too_high", 0.7, false, 30, false, 26, 0.45, 0.69, 52, 101},
    {"never_fits", 0.35, false, 60, false, -9, 0.45, 0.39, 0, 96},
};

TEST(RolloutMemoryTest, UtilisationRange) {
  for (const MemoryRow& row : kMemoryRows) {
    SCOPED_TRACE(row.name);
    RolloutMemoryInput in;
    in.capacity = Bytes::GiB(100);
    in.weights = Bytes::GiB(40);
    in.non_torch = Bytes::GiB(2);
    in.activation_peak = Bytes::GiB(2);
    in.cuda_graph = Bytes::GiB(1);
    in.cuda_graph_inside = row.graphs_inside;
    in.resident = Bytes::GiB(row.resident_gib);
    in.kv.full_per_token = Bytes::MiB(1);
    in.max_sequence_tokens = 1024;
    in.mean_sequence_tokens = 512;
    in.utilization = row.utilization;
    const RolloutMemory m = ComputeRolloutMemory(in);
    EXPECT_EQ(m.fits, row.fits) << m.reason;
    EXPECT_NEAR(m.kv_cache.gib(), row.kv_gib, 1e-6);
    EXPECT_NEAR(m.min_utilization, row.min_u, 1e-9);
    EXPECT_NEAR(m.max_utilization, row.max_u, 1e-9);
    EXPECT_EQ(m.concurrent_sequences, row.concurrent);
    EXPECT_NEAR(m.total.gib(), row.total_gib, 1e-6);
    EXPECT_EQ(m.reason.empty(), row.fits);
  }
}

TEST(RolloutMemoryTest, NeverFitsSaysWhy) {
  RolloutMemoryInput in;
  in.capacity = Bytes::GiB(100);
  in.weights = Bytes::GiB(40);
  in.non_torch = Bytes::GiB(2);
  in.activation_peak = Bytes::GiB(2);
  in.cuda_graph = Bytes::GiB(1);
  in.resident = Bytes::GiB(60);
  in.kv.full_per_token = Bytes::MiB(1);
  in.max_sequence_tokens = 1024;
  in.mean_sequence_tokens = 512;
  in.utilization = 0.35;
  EXPECT_EQ(ComputeRolloutMemory(in).reason,
            "no gpu_memory_utilization fits: one max-length sequence (1024 tokens) needs 0.45 of "
            "the GPU (40.00 GiB weights, 1.00 GiB KV for it, 4.00 GiB non-torch and "
            "activations), and at most 0.39 is free beside 60.00 GiB resident and the CUDA "
            "graphs vLLM keeps outside its budget");
}

// 1 - (1 - k/E)^B with E = 256, k = 8 (the reference model): B = 1: 8/256 = 0.03125;
// B = 64: 1 - (31/32)^64 = 1 - exp(64 ln(31/32)) = 1 - exp(-2.03196) = 0.868916;
// B = 256: 1 - exp(-8.12784) = 0.999705. Dense (E = 0): 1.
TEST(DecodeRooflineTest, ExpertsTouched) {
  EXPECT_NEAR(ExpertsTouchedFraction(256, 8, 1), 0.03125, 1e-9);
  EXPECT_NEAR(ExpertsTouchedFraction(256, 8, 64), 0.868916, 1e-6);
  EXPECT_NEAR(ExpertsTouchedFraction(256, 8, 256), 0.999705, 1e-6);
  EXPECT_NEAR(ExpertsTouchedFraction(0, 0, 64), 1.0, 1e-12);
}

// The decode step of MemoryBoundStep and TpAllReducesOnTheNodesLink: a 64 GB MoE (4 GB dense,
// 60 GB in 256 experts, top-8) at TP2, batch 64 at a 4,096-token context; its numbers are worked
// out in MemoryBoundStep's comment.
DecodeInput MoeDecodeAtBatch64() {
  DecodeInput in;
  in.dense_weights = Bytes::GB(4);
  in.expert_weights = Bytes::GB(60);
  in.experts = 256;
  in.top_k = 8;
  in.tp = 2;
  in.kv.full_per_token = Bytes::Count(10240);
  in.kv.state_per_sequence = Bytes::Count(16465920);
  in.batch = 64;
  in.context_tokens = 4096;
  in.flop_per_token = FlopCount::Giga(6);
  in.hbm_bandwidth = BytesPerSecond::TBps(4.0);
  in.hbm_efficiency = 0.7;
  in.peak = FlopPerSecond::Tera(148);
  in.compute_efficiency = 0.5;
  return in;
}

// TP2, batch 64, context 4,096; 4 GB of dense weights and 60 GB of experts (E 256, k 8); KV per
// GPU 10,240 B/token and a 16,465,920 B state (the reference model at TP2); H20 HBM 4.0 TB/s at
// 0.7, 148 TFLOP/s at 0.5, 6 GFLOP per token.
//   weights per GPU = (4e9 + 60e9 x 0.868916) / 2 = 28.0675e9 B
//   KV per GPU = 64 x (10,240 x 4,096 + 2 x 16,465,920) = 64 x 74,874,880 = 4.79199e9 B
//   memory time = 32.8595e9 / 2.8e12 = 11.7355 ms; compute = 6e9 x 32 / 74e12 = 2.5946 ms.
TEST(DecodeRooflineTest, MemoryBoundStep) {
  DecodeInput in = MoeDecodeAtBatch64();
  const DecodeStep s = DecodeRoofline(in);
  EXPECT_NEAR(s.weight_bytes.count(), 28.0675e9, 1e5);
  EXPECT_NEAR(s.kv_bytes.count(), 4791992320, 1);
  EXPECT_NEAR(s.memory_time.ms(), 11.7355, 1e-3);
  EXPECT_NEAR(s.compute_time.ms(), 2.5946, 1e-3);
  EXPECT_NEAR(s.time.ms(), 11.7355, 1e-3);

  // The engine's own 4 ms per step (data/rl_constants.yaml decode.step_overhead_ms) comes on top
  // of the kernels and leaves the roofline's terms alone: 11.7355 + 4 = 15.7355 ms.
  in.step_overhead = Seconds::Of(0.004);
  const DecodeStep with_overhead = DecodeRoofline(in);
  EXPECT_NEAR(with_overhead.memory_time.ms(), 11.7355, 1e-3);
  EXPECT_NEAR(with_overhead.overhead.ms(), 4.0, 1e-12);
  EXPECT_NEAR(with_overhead.time.ms(), 15.7355, 1e-3);
}

// TP's all-reduces in a decode step, priced by the collective model on the cluster's node (the
// h20-5x8 file: NVSwitch, H20 NVLink4 at 900 GB/s both ways, 450 GB/s a direction; NCCL's busbw
// fraction 0.822 gives beta = 369.9 GB/s; data/interconnects.yaml). A TP2 group of one node:
// only the ring applies (tree from 3 ranks, NVLS for the whole node), 2 (n - 1) = 2 steps on
// NVLink, bus factor 2 (n - 1) / n = 1. One all-reduce at batch 64 of a 2,048-wide model:
// 64 x 2,048 x 2 B = 262,144 B, bandwidth 262,144 / 369.9e9 = 0.7087 us at Simple's rate.
// NCCL's protocols (the tuning table): Simple 8.4 + 2 x 3.4 + 0.7087 = 15.909 us; LL128 14 +
// 2 x 1.9 + 0.7087 / 0.92 = 18.570 us; LL 6.6 + 2 x 0.6 + 0.7087 / 0.25 = 10.635 us: LL, the
// fastest. 40 layers x 2 = 80 a step: 80 x 10.635 = 850.8 us, in series with the roofline's
// 11.7355 ms (MemoryBoundStep's inputs): 12.5863 ms. At TP1 there is none.
TEST(DecodeRooflineTest, TpAllReducesOnTheNodesLink) {
  auto cluster = LoadCluster("h20-5x8");
  ASSERT_TRUE(cluster.ok()) << cluster.error().Format();
  auto links = LoadInterconnects();
  ASSERT_TRUE(links.ok()) << links.error().Format();
  auto comm = CollectiveModel::Create(*cluster, *links);
  ASSERT_TRUE(comm.ok()) << comm.error().Format();
  DecodeInput in = MoeDecodeAtBatch64();
  in.tp_comm = std::make_shared<const CollectiveModel>(std::move(comm).value());
  in.tp_allreduces_per_step = 80;
  in.tp_allreduce_bytes_per_sequence = Bytes::Count(2048 * 2);
  auto one = DecodeTpAllReduce(in, 64);
  ASSERT_TRUE(one.ok()) << one.error().Format();
  EXPECT_EQ(one->size.count(), 262144);
  EXPECT_EQ(one->protocol, NcclProto::kLl);
  EXPECT_NEAR(one->time.us(), 6.6 + 2 * 0.6 + 262144 / (450e9 * 0.822) / 0.25 * 1e6, 1e-6);
  const DecodeStep s = DecodeRoofline(in);
  EXPECT_NEAR(s.memory_time.ms(), 11.7355, 1e-3);
  EXPECT_NEAR(s.tp_allreduce.us(), 850.8, 0.05);
  EXPECT_NEAR(s.time.ms(), 11.7355 + 0.8508, 1e-3);
  EXPECT_NEAR(s.overhead.ms(), 0, 1e-12);

  in.tp = 1;
  const DecodeStep tp1 = DecodeRoofline(in);
  EXPECT_EQ(tp1.tp_allreduce.value(), 0);
}

// A dense model, TP1: 10 GB of weights, 1e5 B of KV per token, HBM 1e12 B/s at 1.0, 2e10 FLOP
// per token at 1e15 x 0.5. 10 prompts x 8 samples, prompts of 1,000, responses of 2,000 mean;
// 40 sequences fit at once.
//   prefill = 10 x 1,000 x 2e10 / 5e14 = 0.4 s (prefix caching: once per prompt)
//   batch 40, bulk steps = 80 x 2,000 / 40 = 4,000 at context 1,000 + 1,000 = 2,000:
//   step = (10e9 + 40 x 1e5 x 2,000) / 1e12 = 18 ms (compute 2e10 x 40 / 5e14 = 1.6 ms);
//   bulk = 72 s.
//   Fixed lengths (every sample 2,000): two waves of 40 at the bulk's batch, each at mean
//   context 1,000 + 2,000 / 2: the simulation is the bulk, 72 s, total 72.4 s.
//   Capped exponential, mean 2,000 under 8,000: 1.98% of samples at the cap (response_lengths
//   test), and the top quantile (79.5 / 80 = 0.994) is one of them, so one sample decodes 8,000
//   steps: at least 8,000 x 10 ms (its weights alone) = 80 s, more than the bulk.
TEST(GenerationTest, FixedLengthsAreTheBulkAndTheCapBoundsTheTail) {
  GenerationInput g;
  g.decode.dense_weights = Bytes::GB(10);
  g.decode.kv.full_per_token = Bytes::Count(1e5);
  g.decode.flop_per_token = FlopCount::Of(2e10);
  g.decode.hbm_bandwidth = BytesPerSecond::Of(1e12);
  g.decode.peak = FlopPerSecond::Peta(1);
  g.decode.compute_efficiency = 0.5;
  g.prompts = 10;
  g.samples = 80;
  g.prompt_mean = 1000;
  g.response = *MakeResponseDistribution(ResponseShape::kFixed, 2000, 8000).distribution;
  g.prefill_flop_per_token = FlopCount::Of(2e10);
  g.prefill_efficiency = 0.5;
  g.concurrent_sequences = 40;
  const GenerationTime t = ComputeGeneration(g);
  EXPECT_NEAR(t.prefill.s(), 0.4, 1e-9);
  EXPECT_NEAR(t.batch, 40, 1e-12);
  EXPECT_NEAR(t.bulk_steps, 4000, 1e-9);
  EXPECT_NEAR(t.step.time.ms(), 18.0, 1e-9);
  EXPECT_NEAR(t.bulk.s(), 72.0, 1e-9);
  EXPECT_NEAR(t.decode.s(), 72.0, 1e-9);
  EXPECT_NEAR(t.simulation.full.s(), 72.0, 1e-9);
  EXPECT_NEAR(t.total.s(), 72.4, 1e-9);

  g.response =
      *MakeResponseDistribution(ResponseShape::kCappedExponential, 2000, 8000).distribution;
  const GenerationTime exp = ComputeGeneration(g);
  EXPECT_NEAR(exp.bulk.s(), 72.0, 1e-9);
  EXPECT_GE(exp.simulation.steps, 8000);
  EXPECT_GT(exp.decode.s(), 80.0);
  EXPECT_NEAR(exp.decode.s(), exp.simulation.full.s() + exp.simulation.draining.s(), 1e-9);
}

// The same generation with 4 ms of engine time per decode step, which every step pays, the
// longest sample's alone too: step = 18 + 4 = 22 ms; fixed lengths: 4,000 x 22 ms = 88 s.
// Eager mode (vLLM enforce_eager, no CUDA graphs) stretches the whole step by the factor,
// kernels and engine time together; the roofline's kernel time is unchanged. By hand: 10 GB of
// weights at 1 TB/s = 10 ms of HBM time (no KV at an empty context; compute 2e10 FLOP at 0.5 PF/s
// = 0.04 ms); with the 4 ms engine time 14 ms; x 1.37 = 19.18 ms, of which 9.18 ms is the
// engine's. Factor 1 (CUDA graphs) leaves 14 ms.
TEST(DecodeRooflineTest, EagerStretchesTheWholeStep) {
  DecodeInput d;
  d.dense_weights = Bytes::GB(10);
  d.flop_per_token = FlopCount::Of(2e10);
  d.hbm_bandwidth = BytesPerSecond::Of(1e12);
  d.peak = FlopPerSecond::Peta(1);
  d.compute_efficiency = 0.5;
  d.step_overhead = Seconds::Of(0.004);
  d.batch = 1;
  EXPECT_NEAR(DecodeRoofline(d).time.ms(), 14.0, 1e-9);
  d.eager_factor = 1.37;
  const DecodeStep s = DecodeRoofline(d);
  EXPECT_NEAR(s.memory_time.ms(), 10.0, 1e-9);
  EXPECT_NEAR(s.time.ms(), 19.18, 1e-9);
  EXPECT_NEAR(s.overhead.ms(), 9.18, 1e-9);
}

TEST(GenerationTest, EngineOverheadOnEveryDecodeStep) {
  GenerationInput g;
  g.decode.dense_weights = Bytes::GB(10);
  g.decode.kv.full_per_token = Bytes::Count(1e5);
  g.decode.flop_per_token = FlopCount::Of(2e10);
  g.decode.hbm_bandwidth = BytesPerSecond::Of(1e12);
  g.decode.peak = FlopPerSecond::Peta(1);
  g.decode.compute_efficiency = 0.5;
  g.decode.step_overhead = Seconds::Of(0.004);
  g.prompts = 10;
  g.samples = 80;
  g.prompt_mean = 1000;
  g.response = *MakeResponseDistribution(ResponseShape::kFixed, 2000, 8000).distribution;
  g.prefill_flop_per_token = FlopCount::Of(2e10);
  g.prefill_efficiency = 0.5;
  g.concurrent_sequences = 40;
  const GenerationTime t = ComputeGeneration(g);
  EXPECT_NEAR(t.step.time.ms(), 22.0, 1e-9);
  EXPECT_NEAR(t.bulk.s(), 88.0, 1e-9);
  EXPECT_NEAR(t.decode.s(), 88.0, 1e-9);
  EXPECT_NEAR(t.total.s(), 88.4, 1e-9);
}

}  // namespace
}  // namespace strata

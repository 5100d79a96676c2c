// The ten public PyTorch profiler traces of ../shared/reference/traces/ (beside the checkout, as
// CI has it): each figure asserted here is the one its SOURCE.md states (measured there with
// Holistic Trace Analysis or by hand from the trace), not one this reader produced.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profile/reference_traces.h"
#include "strata/profile/profile.h"
#include "support/golden.h"

namespace strata::profile::real_traces_test {
namespace {

ProfileReport Profile(const std::vector<std::string>& relative) {
  return testing::ProfileReferenceTraces(relative);
}

double Us(int64_t ns) { return static_cast<double>(ns) * 1e-3; }

// SOURCE.md quotes whole microseconds: 0.5 us is its rounding.
constexpr double kUsTolerance = 0.5;

TEST(RealTraces, DeepSeekV3DualPipeCommunicationOverlap) {
  const ProfileReport r = Profile({"deepseek-v3-train-ep64-h800/train.json"});
  ASSERT_EQ(r.ranks.size(), 1u);
  const RankProfile& p = r.ranks[0];
  EXPECT_EQ(p.rank, 0);
  EXPECT_EQ(p.world_size, 64);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].step, 1);
  const Figures& f = p.steps[0].figures;
  // SOURCE.md: no NCCL; DeepEP all-to-all 113,030 us (union), 108,868 us of it overlapped.
  EXPECT_EQ(f.of(Component::kNccl), 0);
  EXPECT_NEAR(Us(f.of(Component::kCommOther)), 113030, kUsTolerance);
  EXPECT_NEAR(Us(f.comm_other_exposed_ns), 113030 - 108868, kUsTolerance);
  // DeepSeek's FP8 GEMMs by what their names prove (data/profile/kernel_classes.yaml; SOURCE.md:
  // "a tool that splits these differently is not wrong"). Each kernel's CPU launch lies in one
  // innermost DualPipe annotation (checked with Python's json module on this file):
  //   m_grouped_fp8_ptp128c: 8 in mlp(F) 11,591 us + 8 in mlp(B) 11,335 us = 16 kernels,
  //     22,926 us (SOURCE.md's figure): the routed experts -> grouped_gemm.
  //   fp8_ptp128c: attn(F) 20 + attn(B) 28 + mlp(F) 8 + mlp(B) 8 = 64 kernels, 18,838 us
  //     (SOURCE.md): MLA projections and the shared expert -> gemm, with the 12 cuBLAS
  //     sm90_xmma_gemm kernels (537 us): 76 kernels, union 19,375 us (no two overlap).
  //   fp8_dptp128c_acc: attn(W) 20 (dense) + mlp(W) 40 (32 per expert, 8 shared expert) = 60
  //     kernels, 32,756 us summed (SOURCE.md), union 27,494 us (two streams overlap) ->
  //     gemm_dense_or_expert: the name does not say which.
  // Before, all 140 DeepSeek GEMMs were grouped_gemm (union 69,258 us).
  EXPECT_EQ(f.component_events[static_cast<size_t>(Component::kGroupedGemm)], 16);
  EXPECT_EQ(f.component_events[static_cast<size_t>(Component::kGemm)], 76);
  EXPECT_EQ(f.component_events[static_cast<size_t>(Component::kGemmDenseOrExpert)], 60);
  EXPECT_NEAR(Us(f.of(Component::kGroupedGemm)), 22926, kUsTolerance);
  EXPECT_NEAR(Us(f.of(Component::kGemm)), 537 + 18838, kUsTolerance);
  EXPECT_NEAR(Us(f.of(Component::kGemmDenseOrExpert)), 27494, kUsTolerance);
  EXPECT_LT(Us(f.of(Component::kGemmDenseOrExpert)), 32756);
  // 4 flash forward; 12 FlashAttnBwd* (4 main, 4 preprocess, 4 postprocess).
  EXPECT_EQ(f.component_events[static_cast<size_t>(Component::kAttentionFwd)], 4);
  EXPECT_EQ(f.component_events[static_cast<size_t>(Component::kAttentionBwd)], 12);
}

TEST(RealTraces, RecsysOrphansStayOutOfTheFirstStep) {
  const ProfileReport r = Profile({"hta-recsys-rank0of16-a100/rank0.json.gz"});
  ASSERT_EQ(r.ranks.size(), 1u);
  const RankProfile& p = r.ranks[0];
  ASSERT_EQ(p.steps.size(), 5u);
  EXPECT_EQ(p.steps.front().step, 550);
  EXPECT_EQ(p.steps.back().step, 554);
  // SOURCE.md: 872 GPU events without a launch; step 550 busy 75,381 us (not 132,949 us, what
  // assigning them by time would give); NCCL union 187,870 us over the whole trace.
  EXPECT_EQ(p.unlaunched_events, 872);
  EXPECT_NEAR(Us(p.steps[0].figures.busy_ns), 75381, kUsTolerance);
  EXPECT_NEAR(Us(p.whole_trace.of(Component::kNccl)), 187870, kUsTolerance);
}

TEST(RealTraces, PerParameterAllReduceNeverOverlaps) {
  const ProfileReport r = Profile({"hta-perparam-allreduce-v100/df_index_resolver.json.gz"});
  ASSERT_EQ(r.ranks.size(), 1u);
  const RankProfile& p = r.ranks[0];
  EXPECT_EQ(p.rank, 1);
  ASSERT_EQ(p.steps.size(), 5u);
  // SOURCE.md: 2,020 all-reduce kernels (404 per step); overlap 0 us in every step; step 6 has
  // twice the NCCL time of steps 2-5.
  EXPECT_EQ(p.whole_trace.component_events[static_cast<size_t>(Component::kNccl)], 2020);
  for (const StepProfile& s : p.steps) {
    SCOPED_TRACE(s.step);
    EXPECT_EQ(s.figures.component_events[static_cast<size_t>(Component::kNccl)], 404);
    EXPECT_EQ(s.figures.nccl_exposed_ns, s.figures.of(Component::kNccl));
  }
  const double ratio = static_cast<double>(p.steps[4].figures.of(Component::kNccl)) /
                       static_cast<double>(p.steps[0].figures.of(Component::kNccl));
  EXPECT_NEAR(ratio, 2.0, 0.05);
  ASSERT_EQ(p.whole_trace.collectives.size(), 1u);
  EXPECT_EQ(p.whole_trace.collectives[0].collective.kind, "AllReduce");
}

TEST(RealTraces, DlrmEightRanksSkewAndExposedNccl) {
  const ProfileReport r = Profile({"param-dlrm-8rank-v100"});  // a directory of 8 files
  ASSERT_EQ(r.ranks.size(), 8u);
  // SOURCE.md: step span 10,967-18,467 us (slowest rank 1, fastest rank 7), exposed NCCL
  // 1,580-11,056 us; ranks 1 and 3 each have 64 kernels without a launch.
  for (size_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(r.ranks[i].rank, static_cast<int64_t>(i));
    ASSERT_EQ(r.ranks[i].steps.size(), 1u);
    EXPECT_EQ(r.ranks[i].steps[0].step, 10);
    EXPECT_EQ(r.ranks[i].unlaunched_events, (i == 1 || i == 3) ? 64 : 0);
    const Figures& f = r.ranks[i].steps[0].figures;
    EXPECT_GE(Us(f.span_ns), 10967 - kUsTolerance);
    EXPECT_LE(Us(f.span_ns), 18467 + kUsTolerance);
    EXPECT_GE(Us(f.nccl_exposed_ns), 1580 - kUsTolerance);
    EXPECT_LE(Us(f.nccl_exposed_ns), 11056 + kUsTolerance);
  }
  EXPECT_NEAR(Us(r.ranks[1].steps[0].figures.span_ns), 18467, kUsTolerance);
  EXPECT_NEAR(Us(r.ranks[7].steps[0].figures.span_ns), 10967, kUsTolerance);
  EXPECT_NEAR(Us(r.ranks[1].steps[0].figures.nccl_exposed_ns), 11056, kUsTolerance);
  EXPECT_NEAR(Us(r.ranks[7].steps[0].figures.nccl_exposed_ns), 1580, kUsTolerance);
  // Across ranks: the longest span is rank 1's, the shortest rank 7's (SOURCE.md). All ranks end
  // the step's last NCCL kernel within 7 us (40,331-40,338 us), so rank 1 waited longest
  // (11,056 us exposed NCCL) and rank 7, which waited least (1,580 us), is the straggler the
  // others waited for; compute (busy minus exposed NCCL) is about 1 ms on every rank, so neither
  // its compute nor its idle time covers half the 9,476 us gap: its GPU work began late.
  ASSERT_EQ(r.spread.size(), 1u);
  const StepSpread& s = r.spread[0];
  EXPECT_EQ(s.step, 10);
  EXPECT_EQ(s.ranks, 8u);
  EXPECT_EQ(r.ranks[s.longest].rank, 1);
  EXPECT_EQ(r.ranks[s.shortest].rank, 7);
  EXPECT_EQ(r.ranks[s.straggler].rank, 7);
  EXPECT_EQ(r.ranks[s.waited_most].rank, 1);
  EXPECT_NEAR(Us(s.straggler_wait_ns), 1580, kUsTolerance);
  EXPECT_NEAR(Us(s.most_wait_ns), 11056, kUsTolerance);
  EXPECT_EQ(s.reason, "late start");
  // All 8 of world 8 read: no missing-rank warning.
  for (const std::string& w : r.warnings) EXPECT_EQ(w.find("missing"), std::string::npos) << w;
}

TEST(RealTraces, TwoSampledRanksOfWorld128AreReportedAsIncomplete) {
  const ProfileReport r = Profile({"hta-recsys-sampled-2rank-a100"});
  ASSERT_EQ(r.ranks.size(), 2u);
  bool warned = false;
  for (const std::string& w : r.warnings) {
    warned |= w.rfind(
                  "2 of 128 ranks read; missing ranks 2, 3, 4, 5, 6, 7, 8, 9, ... (126 in "
                  "all)",
                  0) == 0;
  }
  EXPECT_TRUE(warned);
}

TEST(RealTraces, ResnetDdpNcclKindsProcessGroupAndOverlap) {
  const ProfileReport r = Profile({"hta-resnet-ddp-nccl-a100/nccl_data.json.gz"});
  ASSERT_EQ(r.ranks.size(), 1u);
  const RankProfile& p = r.ranks[0];
  ASSERT_EQ(p.steps.size(), 3u);
  // SOURCE.md: 15 AllReduce and 6 Broadcast kernels on process group 0 (default_pg), ranks
  // [0, 1]; 15.6% of NCCL time overlapped by compute.
  ASSERT_EQ(p.whole_trace.collectives.size(), 2u);
  for (const CollectiveTime& t : p.whole_trace.collectives) {
    EXPECT_EQ(t.collective.process_group, "0");
    EXPECT_EQ(t.collective.process_group_desc, "default_pg");
    EXPECT_EQ(t.collective.process_group_ranks, "[0, 1]");
    EXPECT_EQ(t.kernels, t.collective.kind == "AllReduce" ? 15 : 6) << t.collective.kind;
  }
  const double overlapped = 1.0 - static_cast<double>(p.whole_trace.nccl_exposed_ns) /
                                      static_cast<double>(p.whole_trace.of(Component::kNccl));
  EXPECT_NEAR(overlapped, 0.156, 0.0005);
}

TEST(RealTraces, QwenInferenceStepSpanFromItsGpuEvents) {
  const ProfileReport r = Profile({"tracelens-qwen1.5-0.5b-infer-h100"});
  ASSERT_EQ(r.ranks.size(), 1u);
  const RankProfile& p = r.ranks[0];
  // SOURCE.md: one step ProfilerStep#6 (the GPU-side copy is not a second step); span
  // 34,892.419 us; 509 warm-up events without a launch.
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].step, 6);
  EXPECT_NEAR(Us(p.steps[0].figures.span_ns), 34892.419, 0.002);
  EXPECT_EQ(p.unlaunched_events, 509);
  EXPECT_GT(p.steps[0].figures.of(Component::kAttentionFwd), 0);
  EXPECT_EQ(p.steps[0].figures.of(Component::kAttentionBwd), 0);  // inference
}

TEST(RealTraces, AmdTraceWithAnEmptyStep) {
  const ProfileReport r = Profile({"hta-amd-mi250-minitoy"});
  ASSERT_EQ(r.ranks.size(), 1u);
  const RankProfile& p = r.ranks[0];
  EXPECT_FALSE(p.rank.has_value());
  // SOURCE.md: ProfilerStep#1 launches all 16 GPU events, ProfilerStep#2 none.
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].figures.gpu_events, 16);
  EXPECT_EQ(p.steps[1].figures.gpu_events, 0);
  EXPECT_EQ(p.steps[1].figures.span_ns, 0);
  EXPECT_GT(p.steps[0].figures.of(Component::kGemm), 0);  // hipBLASLt Cijk_* kernels
}

TEST(RealTraces, VllmWithoutStepsHasTheWholeTraceOnly) {
  const ProfileReport r = Profile({"tracelens-vllm-moe-infer-b200-tp8"});
  ASSERT_EQ(r.ranks.size(), 1u);
  const RankProfile& p = r.ranks[0];
  EXPECT_TRUE(p.steps.empty());
  const Figures& f = p.whole_trace;
  // SOURCE.md: one stream, so all communication is exposed; one NCCL AllGather on pg 3, 73
  // multimem all-reduce kernels (not NCCL), 36 + 36 MXFP4 expert GEMMs, 36 KV-cache writes.
  EXPECT_EQ(f.component_events[static_cast<size_t>(Component::kNccl)], 1);
  EXPECT_EQ(f.component_events[static_cast<size_t>(Component::kCommOther)], 73);
  EXPECT_EQ(f.component_events[static_cast<size_t>(Component::kGroupedGemm)], 72);
  EXPECT_EQ(f.nccl_exposed_ns, f.of(Component::kNccl));
  EXPECT_EQ(f.comm_other_exposed_ns, f.of(Component::kCommOther));
  ASSERT_EQ(f.collectives.size(), 1u);
  EXPECT_EQ(f.collectives[0].collective.kind, "AllGather");
  EXPECT_EQ(f.collectives[0].collective.process_group, "3");
}

TEST(RealTraces, Torch19ResnetOldFormat) {
  const ProfileReport r = Profile({"kineto-resnet50-torch1.9-v100"});
  ASSERT_EQ(r.ranks.size(), 1u);
  const RankProfile& p = r.ranks[0];
  // SOURCE.md: 6 steps (ProfilerStep#5..10), 8,772 kernels, no NCCL.
  ASSERT_EQ(p.steps.size(), 6u);
  EXPECT_EQ(p.steps.front().step, 5);
  EXPECT_EQ(p.steps.back().step, 10);
  int64_t kernels = 0;
  for (Component c : AllComponents()) {
    if (c != Component::kMemcpy && c != Component::kMemset) {
      kernels += p.whole_trace.component_events[static_cast<size_t>(c)];
    }
  }
  EXPECT_EQ(kernels, 8772);
  EXPECT_EQ(p.whole_trace.of(Component::kNccl), 0);
}

}  // namespace
}  // namespace strata::profile::real_traces_test

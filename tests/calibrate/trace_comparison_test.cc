// `strata profile --job`'s comparison and calibrations: the hand-built two-rank trace of
// tests/fixtures/calibrate/two-rank-skew (its README lists every kernel's interval) and the public
// DeepSeek-V3 trace of ../shared/reference/traces/ (as tests/profile/real_traces_test.cc reads
// it) against the job that describes it (tests/fixtures/calibrate/deepseek-v3-chunk/job.yaml).
#include "strata/calibrate/trace_comparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "strata/calibrate/calibration.h"
#include "strata/core/file_io.h"
#include "strata/report/trace_comparison_report.h"
#include "support/golden.h"

namespace strata::calibrate {
namespace {

const std::string kJob = "fixtures/calibrate/deepseek-v3-chunk/job.yaml";
// All GEMM measured / predicted for the DeepSeek-V3 trace against kJob: measured 19,375 + 22,926
// + 27,494 = 69,795 us (derived in DeepSeekV3TraceAndCalibrationCarriesThroughThePhysics from the
// trace); predicted, the step model's dense row 55.290 ms + expert row 30.179 ms = 85.469 ms (the
// model's side, unchanged by the kernel rules); 69.795 / 85.469 = 0.8166. Before, the expert row
// alone carried 69.258 / 30.179 = 2.29 and the dense one 0.537 / 55.290 = 0.01 (not carried).
constexpr double kAllGemmRatio = 0.8166;

// A calibration of `e`'s job (its model, GPU and EP) that carries the given measured / predicted
// ratios, as --write-calibration would write them.
Calibration CalibrationWith(const Evaluation& e,
                            std::initializer_list<std::pair<const char*, double>> ratios) {
  Calibration cal;
  cal.model = e.job.model.name;
  cal.gpu = e.job.gpu().name;
  cal.ep = e.job.spec.layout.ep;
  for (const auto& [key, ratio] : ratios) {
    CalibratedRate r;
    r.key = key;
    r.ratio = ratio;
    cal.rates.push_back(r);
  }
  return cal;
}

profile::ProfileReport Profile(const std::string& path) {
  auto files = profile::ExpandTracePaths({path});
  EXPECT_TRUE(files.ok()) << files.error().Format();
  auto rules = profile::KernelClassifier::Load();
  EXPECT_TRUE(rules.ok()) << rules.error().Format();
  auto report = profile::ProfileTraces(*files, *rules);
  EXPECT_TRUE(report.ok()) << report.error().Format();
  return std::move(report).value();
}

Evaluation Evaluate(const Workspace& w, std::vector<std::string> sets = {}) {
  JobRequest request;
  request.job = testing::TestPath(kJob);
  request.overrides = std::move(sets);
  auto job = ResolveJob(request);
  EXPECT_TRUE(job.ok()) << job.error().Format();
  auto e = EvaluateJob(w, *job, {.depth = EvalDepth::kStep});
  EXPECT_TRUE(e.ok()) << e.error().Format();
  return std::move(e).value();
}

Workspace LoadWorkspace() {
  auto w = Workspace::Load();
  EXPECT_TRUE(w.ok()) << w.error().Format();
  return std::move(w).value();
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines) {
    if (l.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(TraceComparison, HandBuiltTraceRowsAndTheSlowestRank) {
  const Workspace w = LoadWorkspace();
  const Evaluation e = Evaluate(w);
  const profile::ProfileReport report =
      Profile(testing::TestPath("fixtures/calibrate/two-rank-skew"));
  auto c = CompareWithJob(report, e);
  ASSERT_TRUE(c.ok()) << c.error().Format();
  // Rank 1 is slower: its kernels run back to back from 100 to 1150 us (span 1050 us) against
  // rank 0's 100-950 us (850 us); the difference is its grouped GEMM, 600 - 400 = 200 us.
  EXPECT_EQ(c->slowest.rank, 1);
  EXPECT_EQ(c->slowest.cause, "routing skew");
  EXPECT_NEAR(c->slowest.cause_extra_s, 200e-6, 1e-12);
  EXPECT_NEAR(c->slowest.fastest_span_s, 850e-6, 1e-12);
  EXPECT_NEAR(c->measured_step_s, 1050e-6, 1e-12);
  // Rank 1's rows (README table): gemm 200 us; grouped 600 us; attention 100 + 100 us;
  // rms_norm 50 us; the dispatch 200 us, all of it under the grouped GEMM (exposed 0); no gap.
  EXPECT_NEAR((*c)[CompareRow::kDenseGemm].measured_s, 200e-6, 1e-12);
  EXPECT_NEAR((*c)[CompareRow::kExpertGemm].measured_s, 600e-6, 1e-12);
  EXPECT_NEAR((*c)[CompareRow::kAttention].measured_s, 200e-6, 1e-12);
  EXPECT_NEAR((*c)[CompareRow::kMemoryBound].measured_s, 50e-6, 1e-12);
  EXPECT_NEAR((*c)[CompareRow::kCommunication].measured_s, 200e-6, 1e-12);
  EXPECT_NEAR((*c)[CompareRow::kCommunication].measured_exposed_s, 0, 1e-12);
  EXPECT_NEAR((*c)[CompareRow::kIdle].measured_s, 0, 1e-12);
  // The predicted compute rows partition the step model's compute parts: forward, backward,
  // recompute, MoE skew, FP8 casts and optimizer (nothing counted twice, nothing dropped).
  const StepResult& r = *e.step;
  const double parts = r[StepPart::kForward].total.s() + r[StepPart::kBackward].total.s() +
                       r[StepPart::kRecompute].total.s() + r[StepPart::kMoeImbalance].total.s() +
                       r[StepPart::kFp8Cast].total.s() + r[StepPart::kOptimizer].total.s();
  double rows = 0;
  for (CompareRow row : {CompareRow::kDenseGemm, CompareRow::kExpertGemm, CompareRow::kAttention,
                         CompareRow::kLinearAttention, CompareRow::kMemoryBound}) {
    rows += (*c)[row].predicted_s;
  }
  EXPECT_NEAR(rows, parts, 1e-9 * parts);
  // 1050 us against a predicted step of tenths of a second: more than 10x apart.
  EXPECT_TRUE(AnyContains(c->warnings, "the measured step"));
  // World 64 in the traces' metadata, DP 64 in the job; H800 on both sides; grouped GEMMs present.
  EXPECT_FALSE(AnyContains(c->warnings, "world"));
  EXPECT_FALSE(AnyContains(c->warnings, "the trace ran on"));
  EXPECT_FALSE(AnyContains(c->warnings, "no grouped/expert GEMM"));
}

TEST(TraceComparison, WarnsWhenTheTraceIsNotTheJob) {
  // A ResNet DDP run on A100s (SOURCE.md): no grouped GEMM, another GPU, no world size of 64.
  const Workspace w = LoadWorkspace();
  const profile::ProfileReport report = Profile(testing::TestPath(
      "../../shared/reference/traces/hta-resnet-ddp-nccl-a100/nccl_data.json.gz"));
  auto c = CompareWithJob(report, Evaluate(w));
  ASSERT_TRUE(c.ok()) << c.error().Format();
  EXPECT_TRUE(AnyContains(c->warnings, "no grouped/expert GEMM kernel"));
  EXPECT_TRUE(AnyContains(c->warnings, "the job's GPU is H800"));
  // ResNet has no attention (SOURCE.md: convolutions, batch norms, DDP all-reduces), DeepSeek-V3
  // has MLA in every layer (audit 60, finding 6: the DLRM trace against a Llama job said nothing).
  EXPECT_TRUE(AnyContains(c->warnings, "has attention layers, but the traces hold no attention"));
  // The DeepSeek-V3 trace holds 4 flash forward and 12 backward kernels: no such warning.
  auto ds =
      CompareWithJob(Profile(testing::TestPath(
                         "../../shared/reference/traces/deepseek-v3-train-ep64-h800/train.json")),
                     Evaluate(w));
  ASSERT_TRUE(ds.ok()) << ds.error().Format();
  EXPECT_FALSE(AnyContains(ds->warnings, "has attention layers"));
}

// The trace's device name (torch.cuda.get_device_name()) is matched through data/gpus.yaml's
// names and aliases (audit 54, C4). A substring test let "NVIDIA H200" pass as an H20 ("h20" is
// in "nvidia h200": a 6.7x faster GPU, 989 vs 148 bf16 TFLOP/s dense) and warned that "NVIDIA
// H100 80GB HBM3", listed among H100 SXM's aliases (nvidia-h100-80gb-hbm3), is not an H100 SXM.
TEST(TraceComparison, TheTraceGpuIsMatchedThroughTheCatalog) {
  const Workspace w = LoadWorkspace();
  profile::ProfileReport report = Profile(testing::TestPath("fixtures/calibrate/two-rank-skew"));
  const struct {
    const char* device;
    const char* job_gpu;
    const char* trace_gpu;  // the catalog's name; "" when it does not list the device
    bool warned;
    // A device the catalog does not list whose model number is not the job GPU's: a known
    // mismatch (audit 60, finding 5), which --write-calibration refuses. The DLRM traces' "Tesla
    // V100-SXM2-32GB" and HTA's "NVIDIA A100-PG509-200" (SOURCE.md of param-dlrm-8rank-v100 and
    // hta-recsys-sampled-2rank-a100) were "unchecked" before, and calibrations were written.
    const char* other_family = "";
  } cases[] = {
      {"NVIDIA H200", "H20", "H200", true},
      {"NVIDIA H20", "H20", "H20", false},
      {"NVIDIA H100 80GB HBM3", "H100 SXM", "H100 SXM", false},
      {"NVIDIA H100 PCIe", "H100 SXM", "H100 PCIe", true},
      {"NVIDIA H800", "H800", "H800", false},
      {"AMD Instinct MI300X", "MI300X", "MI300X", false},
      {"AMD Instinct MI250X", "MI300X", "", true, "MI250X"},
      {"Tesla V100-SXM2-32GB", "H100 SXM", "", true, "V100"},
      {"NVIDIA A100-PG509-200", "H200", "", true, "A100"},
      // The same generation as the job's, a part the catalog does not list: unchecked, as before.
      {"NVIDIA H800 PCIe", "H800", "", true, ""},
      {"AMD Radeon Graphics", "MI300X", "", true, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.device) + " against " + c.job_gpu);
    for (profile::RankProfile& r : report.ranks) r.device = c.device;
    auto cmp = CompareWithJob(report, Evaluate(w, {std::string("cluster.gpu=") + c.job_gpu}));
    ASSERT_TRUE(cmp.ok()) << cmp.error().Format();
    EXPECT_EQ(cmp->trace_gpu, c.trace_gpu);
    EXPECT_EQ(AnyContains(cmp->warnings, std::string("the trace ran on ") + c.device), c.warned);
    EXPECT_EQ(cmp->trace_gpu_other_family, c.other_family);
  }
}

// `profile --job` names as its slowest rank the straggler the cross-rank view names (one rule,
// profile::PickStraggler). It took the longest mean span, which on ranks that meet in
// collectives is the rank that arrived first and waited longest: PARAM's DLRM traces
// (SOURCE.md) have rank 1 with the longest span, 18,467 us, of which 11,056 us exposed NCCL, and
// rank 7 with the shortest, 10,967 us, of which 1,580 us: every rank ends the step's last NCCL
// kernel within 7 us, so the others waited for rank 7, as HTA's straggler analysis says.
TEST(TraceComparison, TheSlowestRankIsTheStragglerTheCrossRankViewNames) {
  const Workspace w = LoadWorkspace();
  const Evaluation e = Evaluate(w);
  const profile::ProfileReport dlrm =
      Profile(testing::TestPath("../../shared/reference/traces/param-dlrm-8rank-v100"));
  ASSERT_EQ(dlrm.spread.size(), 1u);
  auto c = CompareWithJob(dlrm, e);
  ASSERT_TRUE(c.ok()) << c.error().Format();
  EXPECT_EQ(c->slowest.rank, 7);
  EXPECT_EQ(c->slowest.index, dlrm.spread[0].straggler);
  EXPECT_TRUE(c->slowest.communication);
  EXPECT_EQ(c->trace_ranks.at(c->slowest.reference_index), 1);
  EXPECT_NEAR(c->slowest.wait_s, 1580e-6, 0.5e-6);
  EXPECT_NEAR(c->slowest.reference_wait_s, 11056e-6, 0.5e-6);
  // Compute is about 1 ms on every rank: neither it nor idle time covers half the 9,476 us the
  // others waited, so rank 7's GPU work began late (the cross-rank view's "late start").
  EXPECT_EQ(c->slowest.cause, "late start");
  EXPECT_EQ(dlrm.spread[0].reason, "late start");
  // One step: rank 7's lead over rank 2 (1,637 us) has no step-to-step swing to be weighed
  // against (steps_across_ranks_test.cc derives it), so it is a candidate, not named.
  EXPECT_FALSE(c->slowest.margin.clear);
  EXPECT_FALSE(c->slowest.margin.noise_ns.has_value());
  // The measured step: every rank leaves the step's last NCCL kernel within 7 us, and rank 7's
  // span (10,967 us) lacks the 7.6 ms by which its GPU work began after rank 1's (first GPU
  // events at ...430.147 and ...422.525 ms of the traces' clock, read with a separate reader of
  // the JSON): the job's step
  // lasts at least the longest span, rank 1's 18,467 us. It was the straggler's 10,967 us.
  EXPECT_NEAR(c->slowest.longest_span_s, 18467e-6, 0.5e-6);
  EXPECT_NEAR(c->measured_step_s, 18467e-6, 0.5e-6);
  EXPECT_EQ(c->trace_ranks.at(c->measured_step_index), 1);

  // HTA's two sampled ranks: the straggler differs by step, so the comparison applies the same
  // rule to the ranks' mean steps. Exposed communication of each step, from the cross-rank view:
  // rank 0 172.259 and 164.724 ms, rank 1 134.336 and 169.187 ms; means 168.492 and 151.762 ms:
  // rank 1 waited least.
  const profile::ProfileReport hta =
      Profile(testing::TestPath("../../shared/reference/traces/hta-recsys-sampled-2rank-a100"));
  ASSERT_EQ(hta.spread.size(), 2u);
  auto wait_ms = [&](size_t step, size_t rank) {
    const profile::StepProfile& s = hta.ranks[rank].steps[step];
    return static_cast<double>(s.figures.nccl_exposed_ns + s.figures.comm_other_exposed_ns) * 1e-6;
  };
  const double mean0 = (wait_ms(0, 0) + wait_ms(1, 0)) / 2,
               mean1 = (wait_ms(0, 1) + wait_ms(1, 1)) / 2;
  EXPECT_NEAR(mean0, 168.492, 0.002);
  EXPECT_NEAR(mean1, 151.762, 0.002);
  auto h = CompareWithJob(hta, e);
  ASSERT_TRUE(h.ok()) << h.error().Format();
  EXPECT_EQ(h->slowest.rank, 1);
  EXPECT_TRUE(h->slowest.communication);
  EXPECT_NEAR(h->slowest.wait_s, mean1 * 1e-3, 1e-6);
  EXPECT_NEAR(h->slowest.reference_wait_s, mean0 * 1e-3, 1e-6);
  // Rank 1 leads by 168.492 - 151.762 = 16.730 ms of exposed communication per step, but rank 1's
  // own exposed communication moves 169.187 - 134.336 = 34.851 ms between its two steps: no
  // clear slowest rank.
  EXPECT_NEAR(static_cast<double>(h->slowest.margin.lead_ns) * 1e-6, mean0 - mean1, 0.002);
  ASSERT_TRUE(h->slowest.margin.noise_ns.has_value());
  EXPECT_NEAR(static_cast<double>(*h->slowest.margin.noise_ns) * 1e-6, 34.851, 0.001);
  EXPECT_FALSE(h->slowest.margin.clear);
  // Spans per step (the same reader): rank 0 600.058 and 615.601 ms, rank 1 600.674 and
  // 623.286 ms; the longest mean is rank 1's, (600.674 + 623.286) / 2 = 611.980 ms.
  EXPECT_EQ(h->trace_ranks.at(h->measured_step_index), 1);
  EXPECT_NEAR(h->measured_step_s, 0.611980, 1e-6);
}

TEST(TraceComparison, DeepSeekV3TraceAndCalibrationCarriesThroughThePhysics) {
  Workspace w = LoadWorkspace();
  const Evaluation e = Evaluate(w);
  const profile::ProfileReport report = Profile(
      testing::TestPath("../../shared/reference/traces/deepseek-v3-train-ep64-h800/train.json"));
  auto c = CompareWithJob(report, e);
  ASSERT_TRUE(c.ok()) << c.error().Format();
  // SOURCE.md: DeepEP all-to-all 113,030 us (union), 108,868 us of it overlapped; rank 0 of 64.
  EXPECT_NEAR((*c)[CompareRow::kCommunication].measured_s, 0.113030, 0.5e-6);
  EXPECT_NEAR((*c)[CompareRow::kCommunication].measured_exposed_s, 0.113030 - 0.108868, 1e-6);
  EXPECT_FALSE(AnyContains(c->warnings, "world"));
  EXPECT_FALSE(AnyContains(c->warnings, "no grouped/expert GEMM"));
  // The GEMM rows by what the kernel names prove (tests/profile/real_traces_test.cc derives each
  // from the trace): dense = 12 cuBLAS + 64 fp8_ptp128c, 537 + 18,838 = 19,375 us; expert = 16
  // m_grouped_fp8_ptp128c, 22,926 us; and 60 fp8_dptp128c_acc, 27,494 us (union), whose name
  // does not say dense or expert (20 are MLA weight gradients in attn(W), 40 expert and shared-
  // expert weight gradients in mlp(W)). Before, all three families were the expert row: 69,258 us
  // against 30.18 ms predicted, a 2.29x expert slowdown that a calibration carried.
  const RowComparison& dense = (*c)[CompareRow::kDenseGemm];
  const RowComparison& expert = (*c)[CompareRow::kExpertGemm];
  EXPECT_NEAR(dense.measured_s, 0.019375, 0.5e-6);
  EXPECT_NEAR(expert.measured_s, 0.022926, 0.5e-6);
  EXPECT_NEAR(c->dense_or_expert_gemm_s, 0.027494, 0.5e-6);
  EXPECT_EQ(c->dense_or_expert_gemm_events, 60);
  // Only all GEMM time compares: 19,375 + 22,926 + 27,494 = 69,795 us against the model's dense
  // and expert GEMM time together.
  ASSERT_TRUE(c->all_gemm.has_value());
  EXPECT_NEAR(c->all_gemm->measured_s, 0.069795, 1.5e-6);
  EXPECT_DOUBLE_EQ(c->all_gemm->predicted_s, dense.predicted_s + expert.predicted_s);
  EXPECT_TRUE(AnyContains(c->warnings, "the traces hold 60 GEMM kernels whose names do not say"));
  EXPECT_FALSE(AnyContains(c->warnings, "dense GEMM: measured"));
  EXPECT_FALSE(AnyContains(c->warnings, "grouped/expert GEMM: measured"));
  EXPECT_TRUE(c->cut_files.empty());

  const Calibration cal = MakeCalibration(*c, e, "2025-01-01T00:00:00Z");
  // Round trip through the file format.
  const std::string path =
      (std::filesystem::temp_directory_path() / "strata_calibration_test.json").string();
  ASSERT_TRUE(WriteCalibration(cal, path).ok());
  auto loaded = LoadCalibration(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().Format();
  ASSERT_EQ(loaded->rates.size(), cal.rates.size());
  EXPECT_EQ(loaded->traces, std::vector<std::string>{"train.json"});
  EXPECT_EQ(loaded->ep, 64);
  EXPECT_TRUE(loaded->complete);
  // No dense or expert ratio is carried, one all-GEMM ratio is.
  EXPECT_FALSE(loaded->gemm_split_known);
  EXPECT_FALSE(loaded->Find("dense_gemm")->ratio.has_value());
  EXPECT_FALSE(loaded->Find("expert_gemm")->ratio.has_value());
  ASSERT_NE(loaded->Find("all_gemm"), nullptr);
  const double all_ratio = *loaded->Find("all_gemm")->ratio;
  EXPECT_DOUBLE_EQ(all_ratio, c->all_gemm->measured_s / c->all_gemm->predicted_s);
  EXPECT_NEAR(all_ratio, kAllGemmRatio, 0.0005);
  const double attention_ratio = *loaded->Find("attention")->ratio;

  const auto before = PredictedRows(e);
  auto applied = ApplyCalibration(*loaded, "cal.json", e.job, w);
  ASSERT_TRUE(applied.ok()) << applied.error().Format();
  EXPECT_TRUE(
      AnyContains(applied->not_carried, "dense GEMM and grouped/expert GEMM, each its own"));
  EXPECT_TRUE(AnyContains(applied->applied, "measured/predicted all GEMM = "));
  EXPECT_TRUE(applied->warnings.empty());
  // The same job re-evaluated with the scaled efficiencies. The all-GEMM ratio 0.8166 asks for a
  // large-shape GEMM efficiency of 0.878 / 0.8166 = 1.075 (H800's 0.878, data/
  // kernel_efficiency.yaml): the GEMM efficiency stops at 1, and so does the expert GEMMs'
  // (GEMM efficiency x grouped factor: 1.000 x 1.000, where the factor would have been 1.075 and
  // the expert GEMMs priced at 1.075 of the peak). Expert GEMMs move by 0.878 / 1.000 = 0.878,
  // the rest of the measured speed-up is said not carried; attention by its own ratio, so
  // attention predicts what was measured (balanced routing: no skew row).
  constexpr double kCappedGemmMove = 0.878;
  EXPECT_TRUE(AnyContains(applied->applied, "grouped-GEMM factor: 1.000 -> 1.000"));
  EXPECT_TRUE(AnyContains(applied->not_carried, "all GEMM beyond a large-shape efficiency of 1"));
  const Evaluation calibrated = Evaluate(w);
  auto again = CompareWithJob(report, calibrated);
  ASSERT_TRUE(again.ok());
  EXPECT_NEAR((*again)[CompareRow::kExpertGemm].predicted_s / before[1].predicted_s,
              kCappedGemmMove, 1e-9);
  EXPECT_NEAR((*again)[CompareRow::kAttention].predicted_s, (*c)[CompareRow::kAttention].measured_s,
              1e-9);
  // Another layout (EP 32) keeps the shape rules: its expert GEMMs move by the same ratio.
  const Workspace plain = LoadWorkspace();
  const double ep32_before = PredictedRows(Evaluate(plain, {"parallel.ep=32"}))[1].predicted_s;
  const double ep32_after = PredictedRows(Evaluate(w, {"parallel.ep=32"}))[1].predicted_s;
  EXPECT_NEAR(ep32_after / ep32_before, kCappedGemmMove, 1e-9);
  EXPECT_NEAR(attention_ratio,
              (*c)[CompareRow::kAttention].measured_s / (*c)[CompareRow::kAttention].predicted_s,
              1e-12);
}

// A calibration none of whose carried rows is usable (audit: the DeepSeek-V3 chunk trace against
// the full 61-layer job, every ratio 0.0002-0.026) changed nothing, yet `step` headed its output
// "calibrated:" and dropped the error band. Ratios here: all outside 0.1x-10x.
TEST(Calibration, ACalibrationThatAppliesNothingDoesNotSayCalibrated) {
  const Workspace plain = LoadWorkspace();
  const Evaluation e = Evaluate(plain);
  const Calibration cal = CalibrationWith(e, {{"dense_gemm", 0.0002},
                                              {"expert_gemm", 0.013},
                                              {"attention", 0.012},
                                              {"memory_bound", 0.026}});
  EXPECT_TRUE(UsableRates(cal).empty());
  Workspace w = LoadWorkspace();
  auto applied = ApplyCalibration(cal, "cal.json", e.job, w);
  ASSERT_TRUE(applied.ok()) << applied.error().Format();
  EXPECT_TRUE(applied->applied.empty());
  EXPECT_TRUE(AnyContains(applied->warnings, "nothing in the calibration applies"));
  const std::string text = CalibrationText(*applied);
  EXPECT_EQ(text.rfind("not calibrated: ", 0), 0u) << text;
  EXPECT_EQ(text.find("calibrated: kernel rates from"), std::string::npos) << text;
  EXPECT_EQ(CalibrationNoteJson(*applied)["calibrated"], false);
}

// A trace cut short (a profiler killed mid-write) gives steps that may miss events past the cut:
// the comparison names it, the calibration records provenance.complete false, and applying it
// warns. Before, the file said nothing of the cut.
TEST(Calibration, ACutTraceIsRecordedAsIncomplete) {
  Workspace w = LoadWorkspace();
  const Evaluation e = Evaluate(w);
  profile::ProfileReport report = Profile(testing::TestPath("fixtures/calibrate/two-rank-skew"));
  report.ranks[1].cut = "the trace ends early at byte 1000";
  auto c = CompareWithJob(report, e);
  ASSERT_TRUE(c.ok()) << c.error().Format();
  EXPECT_EQ(c->cut_files, std::vector<std::string>{report.ranks[1].file});
  EXPECT_TRUE(c->slowest_cut);  // rank 1 is the slowest (see the first test)
  EXPECT_TRUE(AnyContains(c->warnings, "may miss GPU events that lay past the cut"));
  const Calibration cal = MakeCalibration(*c, e, "2025-01-01T00:00:00Z");
  EXPECT_FALSE(cal.complete);
  EXPECT_EQ(CalibrationJson(cal)["provenance"]["complete"], false);
  auto loaded = ParseCalibration(DumpJson(CalibrationJson(cal)), "cal.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error().Format();
  EXPECT_FALSE(loaded->complete);
  auto applied = ApplyCalibration(*loaded, "cal.json", e.job, w);
  ASSERT_TRUE(applied.ok()) << applied.error().Format();
  EXPECT_TRUE(AnyContains(applied->warnings, "measured on a cut trace"));
  // The empty step of a cut trace is not explained as torch.profiler's last step.
  c->steps_left_out = {5};
  c->last_step_left_out = false;
  std::string text = ComparisonText(*c);
  EXPECT_EQ(text.find("opens as it stops"), std::string::npos) << text;
  EXPECT_NE(text.find("left out: step 5 (no GPU event read: the trace is cut and its events may "
                      "lie past the cut)"),
            std::string::npos)
      << text;
  // Nor is an empty middle step of a whole trace; only an empty last step is that one.
  c->slowest_cut = false;
  text = ComparisonText(*c);
  EXPECT_NE(text.find("left out: step 5 (no GPU event launched inside the step)"),
            std::string::npos)
      << text;
  c->last_step_left_out = true;
  text = ComparisonText(*c);
  EXPECT_NE(text.find("the ProfilerStep#N that torch.profiler opens as it stops"),
            std::string::npos)
      << text;
}

// A measured dense-GEMM rate above what the model's 0.878 of peak allows caps the GEMM
// efficiency at 1; the expert GEMMs must still move by their own measured ratio (audit 54, C1).
// H800 (data/kernel_efficiency.yaml): gemm_large 0.878, grouped-GEMM factor 1.000. Dense ratio
// 0.60: 0.878 / 0.60 = 1.463, capped at 1.000, so dense GEMMs move by 0.878 / 1.000 = 0.878x.
// Expert ratio 1.25: expert GEMMs run at gemm_large x factor, so the factor must be
// 0.878 x 1.000 / (1.25 x 1.000) = 0.702 (expert time x 1.25). The factor computed from the
// uncapped ratio, 1.000 x 0.60 / 1.25 = 0.480, made them 0.878 / 0.480 = 1.829x slower.
TEST(Calibration, ExpertGemmsMoveByTheirOwnRatioWhenTheDenseEfficiencyIsCapped) {
  const Workspace plain = LoadWorkspace();
  const Evaluation e = Evaluate(plain);
  const Calibration cal = CalibrationWith(e, {{"dense_gemm", 0.60}, {"expert_gemm", 1.25}});
  Workspace w = LoadWorkspace();
  auto applied = ApplyCalibration(cal, "cal.json", e.job, w);
  ASSERT_TRUE(applied.ok()) << applied.error().Format();
  EXPECT_TRUE(AnyContains(applied->applied,
                          "0.878 -> 1.000 (measured/predicted dense GEMM = "
                          "0.60), capped at 1"));
  EXPECT_TRUE(AnyContains(applied->applied, "grouped-GEMM factor: 1.000 -> 0.702"));
  const auto before = PredictedRows(e);
  const auto after = PredictedRows(Evaluate(w));
  EXPECT_NEAR(after[1].predicted_s / before[1].predicted_s, 1.25, 1e-9);  // expert GEMM row
}

// A calibrated efficiency above 1 is a wrong number: a GEMM cannot beat the peak. H800
// (data/kernel_efficiency.yaml): gemm_large 0.878, grouped-GEMM factor 1.000. Dense ratio 0.60
// caps the GEMM efficiency at 1.000 (0.878 / 0.60 = 1.463); expert ratio 0.80 asks for a factor
// of 1.000 x (0.878 / 1.000) / 0.80 = 1.0975, an expert large-shape efficiency of
// 1.000 x 1.0975 = 1.0975 > 1: the factor stops at 1 / 1.000 = 1.000 and the expert GEMMs move
// by 0.878 x 1.000 / (1.000 x 1.000) = 0.878, not 0.80. Before, the factor was 1.0975.
TEST(Calibration, NoCalibratedGemmEfficiencyExceedsOne) {
  const Workspace plain = LoadWorkspace();
  const Evaluation e = Evaluate(plain);
  const Calibration cal = CalibrationWith(e, {{"dense_gemm", 0.60}, {"expert_gemm", 0.80}});
  Workspace w = LoadWorkspace();
  auto applied = ApplyCalibration(cal, "cal.json", e.job, w);
  ASSERT_TRUE(applied.ok()) << applied.error().Format();
  EXPECT_TRUE(AnyContains(applied->applied, "grouped-GEMM factor: 1.000 -> 1.000"));
  EXPECT_TRUE(AnyContains(applied->applied, "capped at 1.000: the expert GEMMs' large-shape"));
  EXPECT_TRUE(AnyContains(applied->not_carried,
                          "grouped/expert GEMM beyond a large-shape efficiency of 1: the measured "
                          "ratio 0.80 asks for an expert GEMM efficiency of 1.000 x 1.09"));
  const KernelEfficiency k = w.efficiency.For("H800");
  EXPECT_LE(k.gemm_large, 1.0);
  EXPECT_LE(k.gemm_large * k.grouped_gemm_factor, 1.0 + 1e-12);
  const auto before = PredictedRows(e);
  const auto after = PredictedRows(Evaluate(w));
  EXPECT_NEAR(after[1].predicted_s / before[1].predicted_s, 0.878, 1e-9);  // expert GEMM row
}

// torch.profiler's step() opens ProfilerStep#k+1 right before the profiler stops, so a short
// profiling run ends with an empty step (HTA's MI250 trace: ProfilerStep#2, 49 us, CPU only). The
// A100 DDP trace (hta-resnet-ddp-nccl-a100) has three steps with a mean span of 216.02 ms; with an
// empty step 7 appended the mean was (3 x 216.02 + 0) / 4 = 162.015 ms, every component 25 % low
// (audit 54, C2). Steps without a GPU event are left out and named.
TEST(TraceComparison, AStepWithoutGpuEventsIsLeftOutOfTheMean) {
  profile::RankProfile rank;
  for (int64_t n : {4, 5, 6}) {
    profile::StepProfile step;
    step.step = n;
    step.figures.span_ns = 216'020'000;
    step.figures.busy_ns = 200'000'000;
    step.figures.gpu_events = 100;
    step.figures.component_ns[static_cast<size_t>(profile::Component::kGemm)] = 120'000'000;
    rank.steps.push_back(step);
  }
  profile::StepProfile tail;
  tail.step = 7;
  rank.steps.push_back(tail);
  const MeanStep m = MeanStepOf(rank);
  EXPECT_EQ(m.steps, 3u);
  EXPECT_EQ(m.empty_steps, std::vector<int64_t>{7});
  EXPECT_NEAR(m.span_s, 0.21602, 1e-12);
  EXPECT_NEAR(m.idle_s(), 0.01602, 1e-12);
  EXPECT_NEAR(m.of(profile::Component::kGemm), 0.120, 1e-12);
}

// A calibration records the GPU its traces ran on (the trace's device name and the catalog entry
// it matches) and a job on another GPU model refuses it: a ratio is a kernel's achieved fraction
// of one architecture's peak. Before, the file kept only the job's GPU, so a calibration whose
// traces ran on a GPU the catalog does not list (the writer cannot check it) was applied to the
// job's GPU without a word.
TEST(Calibration, RecordsTheTracesGpuAndAJobOnAnotherGpuRefusesIt) {
  Workspace w = LoadWorkspace();
  const Evaluation e = Evaluate(w);  // deepseek-v3-chunk: H800
  profile::ProfileReport report = Profile(testing::TestPath("fixtures/calibrate/two-rank-skew"));
  const std::string path =
      (std::filesystem::temp_directory_path() / "strata_calibration_gpu_test.json").string();
  auto round_trip = [&](const std::string& device) {
    for (profile::RankProfile& r : report.ranks) r.device = device;
    auto c = CompareWithJob(report, e);
    EXPECT_TRUE(c.ok()) << c.error().Format();
    EXPECT_TRUE(WriteCalibration(MakeCalibration(*c, e, "2025-01-01T00:00:00Z"), path).ok());
    auto loaded = LoadCalibration(path);
    std::filesystem::remove(path);
    EXPECT_TRUE(loaded.ok()) << loaded.error().Format();
    return std::move(loaded).value();
  };
  // The fixture's own device, "NVIDIA H800": the catalog's H800, the job's GPU.
  Calibration same = round_trip("NVIDIA H800");
  EXPECT_EQ(same.trace_gpu, "H800");
  EXPECT_EQ(same.trace_device, "NVIDIA H800");
  auto applied = ApplyCalibration(same, "cal.json", e.job, w);
  ASSERT_TRUE(applied.ok()) << applied.error().Format();
  EXPECT_EQ(applied->trace_gpu, "H800");
  EXPECT_EQ(applied->gpu_warning, "");

  // The same file with its traces on an H100 SXM (job.gpu still H800): refused, naming the field.
  Calibration other = same;
  other.trace_gpu = "H100 SXM";
  other.trace_device = "NVIDIA H100 80GB HBM3";
  Workspace untouched = LoadWorkspace();
  auto refused = ApplyCalibration(other, "cal.json", e.job, untouched);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().field, "provenance.trace_gpu");
  EXPECT_EQ(refused.error().file, "cal.json");
  EXPECT_NE(refused.error().message.find("do not carry over"), std::string::npos);

  // A device the catalog does not list: recorded as such, applied with a warning that names it.
  Calibration unlisted = round_trip("AMD Instinct MI250X");
  EXPECT_EQ(unlisted.trace_gpu, "");
  EXPECT_EQ(unlisted.trace_device, "AMD Instinct MI250X");
  Workspace w2 = LoadWorkspace();
  auto warned = ApplyCalibration(unlisted, "cal.json", e.job, w2);
  ASSERT_TRUE(warned.ok()) << warned.error().Format();
  EXPECT_NE(warned->gpu_warning.find("\"AMD Instinct MI250X\", which data/gpus.yaml does not "
                                     "list"),
            std::string::npos)
      << warned->gpu_warning;
}

// A calibration file written before the trace's GPU, the cut and the GEMM split were recorded
// (provenance without trace_gpu or complete, no gemm_split_known) is read, and applying it says
// the GPU is unknown.
TEST(Calibration, AnOldFileWithoutTheTracesGpuSaysItIsUnknown) {
  auto old = ParseCalibration(
      R"({"kind": "calibration", "calibration_version": 1,
          "provenance": {"traces": ["train.json"], "job_file": "job.yaml"},
          "job": {"model": "deepseek-v3", "gpu": "H800", "cluster": "h100-8x8-ib400",
                  "tp": 1, "pp": 1, "cp": 1, "ep": 64, "dp": 64},
          "measured_step_s": 0.129, "predicted_step_s": 0.306,
          "rates": [{"component": "attention", "measured_s": 0.022, "predicted_s": 0.0217,
                     "ratio": 1.012}]})",
      "old.json");
  ASSERT_TRUE(old.ok()) << old.error().Format();
  EXPECT_EQ(old->trace_gpu, "");
  EXPECT_EQ(old->trace_device, "");
  EXPECT_TRUE(old->complete);
  EXPECT_TRUE(old->gemm_split_known);
  Workspace w = LoadWorkspace();
  auto applied = ApplyCalibration(*old, "cal.json", Evaluate(w).job, w);
  ASSERT_TRUE(applied.ok()) << applied.error().Format();
  EXPECT_NE(applied->gpu_warning.find("is unknown (the file does not record it"), std::string::npos)
      << applied->gpu_warning;
  // A trace_gpu that is no catalog GPU is an error naming the field.
  auto bad = ParseCalibration(
      R"({"kind": "calibration", "calibration_version": 1,
          "provenance": {"trace_gpu": "H1000"},
          "job": {"model": "m", "gpu": "H800", "tp": 1, "pp": 1, "cp": 1, "ep": 1, "dp": 1},
          "measured_step_s": 1, "predicted_step_s": 1, "rates": []})",
      "c.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "provenance.trace_gpu");
}

// A trace of another model than the job: linear-attention kernels on one side only are warned
// about (the MoE check's counterpart for Gated DeltaNet, Mamba and lightning layers).
TEST(TraceComparison, WarnsWhenLinearAttentionIsOnOneSideOnly) {
  const Workspace w = LoadWorkspace();
  profile::ProfileReport report = Profile(testing::TestPath("fixtures/calibrate/two-rank-skew"));
  // DeepSeek-V3 has no linear-attention layer; give the trace 12 such kernels.
  report.ranks[0]
      .whole_trace.component_events[static_cast<size_t>(profile::Component::kLinearAttention)] = 12;
  auto c = CompareWithJob(report, Evaluate(w));
  ASSERT_TRUE(c.ok()) << c.error().Format();
  EXPECT_TRUE(AnyContains(c->warnings, "the traces hold 12 linear-attention kernels"));
  // Qwen3.6-35B-A3B interleaves Gated DeltaNet layers (data/models); the fixture has none.
  report.ranks[0]
      .whole_trace.component_events[static_cast<size_t>(profile::Component::kLinearAttention)] = 0;
  JobRequest request;
  request.job = testing::TestPath("../data/jobs/qwen3.6-35b-a3b-sft-h20x40.yaml");
  auto job = ResolveJob(request);
  ASSERT_TRUE(job.ok()) << job.error().Format();
  auto e = EvaluateJob(w, *job, {.depth = EvalDepth::kStep});
  ASSERT_TRUE(e.ok()) << e.error().Format();
  auto q = CompareWithJob(report, *e);
  ASSERT_TRUE(q.ok()) << q.error().Format();
  EXPECT_TRUE(AnyContains(q->warnings, "has linear-attention layers"));
}

TEST(Calibration, BadFilesNameTheField) {
  auto not_json = ParseCalibration("{", "c.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.error().file, "c.json");
  auto wrong_kind = ParseCalibration(R"({"kind": "profile"})", "c.json");
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_EQ(wrong_kind.error().field, "kind");
  auto no_gpu = ParseCalibration(
      R"({"kind": "calibration", "calibration_version": 1, "provenance": {},
          "job": {"model": "deepseek-v3"}, "rates": []})",
      "c.json");
  ASSERT_FALSE(no_gpu.ok());
  EXPECT_EQ(no_gpu.error().field, "job.gpu");
  auto bad_ratio = ParseCalibration(
      R"({"kind": "calibration", "calibration_version": 1, "provenance": {},
          "job": {"model": "m", "gpu": "H800", "tp": 1, "pp": 1, "cp": 1, "ep": 1, "dp": 1},
          "measured_step_s": 1, "predicted_step_s": 1,
          "rates": [{"component": "attention", "measured_s": 1, "predicted_s": 1, "ratio": -2}]})",
      "c.json");
  ASSERT_FALSE(bad_ratio.ok());
  EXPECT_EQ(bad_ratio.error().field, "rates[0].ratio");
  // A calibration of another model does not apply.
  Workspace w = LoadWorkspace();
  Calibration other;
  other.model = "llama-3.1-8b";
  other.gpu = "H800";
  auto applied = ApplyCalibration(other, "c.json", Evaluate(w).job, w);
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.error().field, "job.model");
  EXPECT_EQ(applied.error().file, "c.json");
}

}  // namespace
}  // namespace strata::calibrate

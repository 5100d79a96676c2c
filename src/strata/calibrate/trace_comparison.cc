#include "strata/calibrate/trace_comparison.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

#include "strata/hw/gpu_catalog.h"

namespace strata::calibrate {

namespace {

using profile::Component;

// The ratio of two times, none when either is not positive (nothing to compare).
std::optional<double> Ratio(double measured, double predicted) {
  if (!(measured > 0) || !(predicted > 0)) return std::nullopt;
  return measured / predicted;
}

// The catalog entry (data/gpus.yaml) of a device name as the trace records it
// (torch.cuda.get_device_name(): "NVIDIA H100 80GB HBM3", "AMD Instinct MI300X"), by exact name
// or alias, with or without the vendor's first word; none when the catalog does not list it. A
// substring test passed "NVIDIA H200" as an H20 and failed the H100 SXM's own name.
std::optional<std::string> CatalogGpuOf(const std::string& device) {
  if (auto g = FindGpu(device); g.ok()) return g->name;
  const size_t space = device.find(' ');
  if (space != std::string::npos) {
    if (auto g = FindGpu(device.substr(space + 1)); g.ok()) return g->name;
  }
  return std::nullopt;
}

// The model number a GPU name carries: the first word (split at anything but letters and digits)
// of one or two letters and 2-4 digits, an optional letter after: "A100" in "NVIDIA
// A100-PG509-200", "V100" in "Tesla V100-SXM2-32GB", "H100" in "H100 SXM", "MI250X"; "" when
// there is none ("AMD Radeon Graphics"). Two different ones are different GPU generations.
std::string GpuFamilyOf(const std::string& name) {
  static const std::regex kModel("^[A-Z]{1,2}[0-9]{2,4}[A-Z]?$");
  std::string word;
  for (size_t i = 0; i <= name.size(); ++i) {
    const char ch = i < name.size() ? name[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      continue;
    }
    if (std::regex_match(word, kModel)) return word;
    word.clear();
  }
  return "";
}

double MeasuredTotal(const MeanStep& s, const ComponentMapping& m) {
  if (m.row == CompareRow::kIdle) return s.idle_s();
  double t = 0;
  for (Component c : m.trace) t += s.of(c);
  return t;
}

}  // namespace

double Sec(int64_t ns) { return static_cast<double>(ns) / 1e9; }

bool Plausible(const std::optional<double>& ratio) {
  return ratio && *ratio <= kPlausibleRatio && *ratio >= 1 / kPlausibleRatio;
}

const std::vector<ComponentMapping>& ComponentMappings() {
  static const std::vector<ComponentMapping> kMappings = {
      {CompareRow::kDenseGemm,
       "dense_gemm",
       "dense GEMM",
       {Component::kGemm},
       "dense GEMMs + output layer and loss (forward, backward, recompute) x micro batches",
       "cuBLAS/CUTLASS GEMM kernels are the attention projections, dense MLP, shared experts, "
       "router and output layer, which the model prices as its dense and output-layer GEMMs"},
      {CompareRow::kExpertGemm,
       "expert_gemm",
       "grouped/expert GEMM",
       {Component::kGroupedGemm},
       "routed-expert GEMMs x micro batches + the MoE routing-skew row",
       "grouped GEMM kernels run the routed experts; the busiest rank's extra tokens (the skew "
       "row) lengthen the same kernels"},
      {CompareRow::kAttention,
       "attention",
       "attention",
       {Component::kAttentionFwd, Component::kAttentionBwd},
       "core attention (forward, backward, recompute) x micro batches",
       "flash-attention forward and backward kernels are the model's core attention"},
      {CompareRow::kLinearAttention,
       "linear_attention",
       "linear attention",
       {Component::kLinearAttention},
       "Gated DeltaNet (forward, backward, recompute) x micro batches",
       "chunked delta-rule kernels are the model's Gated DeltaNet"},
      {CompareRow::kMemoryBound,
       "memory_bound",
       "memory-bound",
       {Component::kMemoryBound},
       "memory-bound ops x micro batches + FP8 casts + optimizer",
       "norms, activations, rotary, permutation, casts and the optimizer's multi_tensor_apply are "
       "all HBM-bound kernels"},
      {CompareRow::kCommunication,
       "communication",
       "communication",
       {Component::kNccl, Component::kCommOther},
       "TP, CP, EP, PP, DP and expert-DP rows (total; exposed on the critical path)",
       "NCCL and DeepEP kernels carry the collectives the model prices; the trace's exposed part "
       "(no other kernel running) is the model's exposed part"},
      {CompareRow::kMemcpy,
       "memcpy",
       "memcpy",
       {Component::kMemcpy},
       "offload copies between host and GPU",
       "host-GPU copies are what the model's offload row prices; other copies have no "
       "counterpart"},
      {CompareRow::kIdle,
       "idle",
       "GPU idle",
       {},
       "pipeline bubble + stragglers + framework rows",
       "time with no kernel on the GPU: the bubble, waiting for a slower rank and the "
       "framework's host-side gaps"},
  };
  return kMappings;
}

const std::vector<UnmappedClass>& UnmappedClasses() {
  static const std::vector<UnmappedClass> kUnmapped = {
      {Component::kMemset, "the model has no memset term (buffer zeroing is not priced)"},
      {Component::kOther,
       "kernels no rule classifies (convolutions, cache writes, unknown names): the model has "
       "no such work"},
  };
  return kUnmapped;
}

MeanStep MeanStepOf(const profile::RankProfile& rank) {
  MeanStep s;
  auto add = [&](const profile::Figures& f) {
    s.span_s += Sec(f.span_ns);
    s.busy_s += Sec(f.busy_ns);
    s.nccl_exposed_s += Sec(f.nccl_exposed_ns);
    s.comm_other_exposed_s += Sec(f.comm_other_exposed_ns);
    for (size_t i = 0; i < profile::kComponentCount; ++i)
      s.component_s[i] += Sec(f.component_ns[i]);
  };
  for (const profile::StepProfile& step : rank.steps) {
    if (step.figures.gpu_events == 0) {
      s.empty_steps.push_back(step.step);
      s.last_step_empty = &step == &rank.steps.back();
      continue;
    }
    add(step.figures);
    ++s.steps;
  }
  if (s.steps == 0) {
    add(rank.whole_trace);
    return s;
  }
  const double n = static_cast<double>(s.steps);
  s.span_s /= n;
  s.busy_s /= n;
  s.nccl_exposed_s /= n;
  s.comm_other_exposed_s /= n;
  for (double& c : s.component_s) c /= n;
  return s;
}

std::array<RowComparison, kCompareRowCount> PredictedRows(const Evaluation& e) {
  const StepResult& r = *e.step;
  const double m = static_cast<double>(e.setup->layout.micro_batches);
  auto passes = [&](Seconds KernelTimes::*f) {
    return m * ((r.forward.*f).s() + (r.backward.*f).s() + (r.recompute.*f).s());
  };
  auto total = [&](std::initializer_list<StepPart> parts) {
    double t = 0;
    for (StepPart p : parts) t += r[p].total.s();
    return t;
  };
  auto exposed = [&](std::initializer_list<StepPart> parts) {
    double t = 0;
    for (StepPart p : parts) t += r[p].exposed.s();
    return t;
  };
  std::array<RowComparison, kCompareRowCount> rows{};
  for (size_t i = 0; i < kCompareRowCount; ++i) rows[i].row = static_cast<CompareRow>(i);
  auto at = [&](CompareRow row) -> RowComparison& { return rows[static_cast<size_t>(row)]; };
  at(CompareRow::kDenseGemm).predicted_s =
      passes(&KernelTimes::dense_gemm) + passes(&KernelTimes::logits_and_loss);
  at(CompareRow::kExpertGemm).predicted_s =
      passes(&KernelTimes::expert_gemm) + total({StepPart::kMoeImbalance});
  at(CompareRow::kAttention).predicted_s = passes(&KernelTimes::attention);
  at(CompareRow::kLinearAttention).predicted_s = passes(&KernelTimes::gated_deltanet);
  at(CompareRow::kMemoryBound).predicted_s =
      passes(&KernelTimes::memory_bound) +
      total({StepPart::kFp8Cast, StepPart::kOptimizer, StepPart::kFrameworkEagerOps,
             StepPart::kFrameworkFsdp2CopyOut});
  const auto comm = {StepPart::kTp,      StepPart::kCp,           StepPart::kEp,
                     StepPart::kPp,      StepPart::kTpGrad,       StepPart::kDpGrad,
                     StepPart::kDpParam, StepPart::kExpertDpGrad, StepPart::kExpertDpParam};
  at(CompareRow::kCommunication).predicted_s = total(comm);
  at(CompareRow::kCommunication).predicted_exposed_s = exposed(comm);
  at(CompareRow::kMemcpy).predicted_s = total({StepPart::kOffload});
  at(CompareRow::kIdle).predicted_s =
      exposed({StepPart::kBubble, StepPart::kStraggler, StepPart::kFrameworkHostBound,
               StepPart::kFrameworkFetchHooks, StepPart::kFrameworkExpertLoop,
               StepPart::kFrameworkAttention});
  return rows;
}

namespace {

// A mean step as the figures PickStraggler reads (whole nanoseconds).
profile::Figures FiguresOf(const MeanStep& m) {
  auto ns = [](double s) { return static_cast<int64_t>(std::llround(s * 1e9)); };
  profile::Figures f;
  f.span_ns = ns(m.span_s);
  f.busy_ns = ns(m.busy_s);
  f.nccl_exposed_ns = ns(m.nccl_exposed_s);
  f.comm_other_exposed_ns = ns(m.comm_other_exposed_s);
  return f;
}

// The slowest rank is the straggler of the ranks' mean steps, by the cross-rank view's own rule
// (profile::PickStraggler): with exposed communication, the rank that waited least in
// collectives, which the others waited for; without, the longest span. Its cause is the part of
// its step in which it exceeds the reference rank (the one that waited most, or the shortest).
SlowestRank FindSlowest(const profile::ProfileReport& report, const std::vector<MeanStep>& means,
                        const std::vector<size_t>& with_events) {
  SlowestRank s;
  std::vector<profile::Figures> figures(means.size());
  std::vector<std::pair<size_t, const profile::Figures*>> list;
  size_t longest = with_events.front(), shortest = with_events.front();
  for (size_t i : with_events) {
    figures[i] = FiguresOf(means[i]);
    list.emplace_back(i, &figures[i]);
    if (means[i].span_s > means[longest].span_s) longest = i;
    if (means[i].span_s < means[shortest].span_s) shortest = i;
  }
  const profile::StragglerPick pick =
      profile::PickStraggler(list, profile::StepSwings(report.ranks));
  s.margin = pick.margin;
  const size_t slow = pick.straggler, ref = pick.reference;
  s.index = slow;
  s.rank = report.ranks[slow].rank;
  s.span_s = means[slow].span_s;
  s.fastest_span_s = means[shortest].span_s;
  s.longest_span_s = means[longest].span_s;
  s.longest_index = longest;
  s.ranks_compared = with_events.size();
  s.reference_index = ref;
  s.communication = pick.communication;
  auto wait = [](const MeanStep& m) { return m.nccl_exposed_s + m.comm_other_exposed_s; };
  s.wait_s = wait(means[slow]);
  s.reference_wait_s = wait(means[ref]);
  s.reference_span_s = means[ref].span_s;
  if (with_events.size() < 2 || slow == ref ||
      (figures[slow].span_ns == figures[ref].span_ns &&
       figures[slow].busy_ns == figures[ref].busy_ns && s.wait_s == s.reference_wait_s)) {
    s.explanation = with_events.size() < 2 ? "one rank traced: no other rank to compare with"
                                           : "every rank's step is equally long";
    return s;
  }
  // The straggler's step minus the reference's, in parts of the span apart from the exposed
  // communication: idle, expert GEMMs, the rest of the compute.
  auto parts = [&](const MeanStep& m) {
    const double expert = m.of(Component::kGroupedGemm);
    return std::array<double, 3>{m.idle_s(), expert, m.busy_s - wait(m) - expert};
  };
  const auto a = parts(means[slow]);
  const auto b = parts(means[ref]);
  static const std::array<std::pair<const char*, const char*>, 3> kCauses = {{
      {"host-bound",
       "its GPU is idle longer between kernels: the host does not launch work fast "
       "enough (data loading, Python, synchronisation)"},
      {"routing skew", "its grouped/expert GEMMs take longer: more routed tokens reach this rank"},
      {"compute",
       "its other kernels take longer on the same work: a slower GPU (clock, "
       "power, thermals) or more work on this rank"},
  }};
  size_t best = 0;
  for (size_t i = 1; i < 3; ++i) {
    if (a[i] - b[i] > a[best] - b[best]) best = i;
  }
  const double extra = a[best] - b[best];
  // With communication, the others waited (reference wait - straggler wait) for it; a part that
  // covers less than half of that leaves the delay before its first kernel (as the cross-rank
  // view says: "late start").
  const double gap = s.reference_wait_s - s.wait_s;
  if (pick.communication && extra * 2 < gap) {
    s.cause = "late start";
    s.explanation =
        "its kernels and idle time are no longer than the others': its GPU work began late "
        "(host, data loading, the previous step)";
    s.cause_extra_s = gap;
    return s;
  }
  s.cause = kCauses[best].first;
  s.explanation = kCauses[best].second;
  s.cause_extra_s = extra;
  return s;
}

}  // namespace

Result<TraceComparison> CompareWithJob(const profile::ProfileReport& report, const Evaluation& e) {
  TraceComparison c;
  c.job_file = e.job.spec.file;
  std::vector<MeanStep> means;
  std::vector<size_t> with_events;
  int64_t grouped_events = 0, linear_events = 0, attention_events = 0;
  for (size_t i = 0; i < report.ranks.size(); ++i) {
    const profile::RankProfile& r = report.ranks[i];
    c.trace_files.push_back(r.file);
    if (!r.cut.empty()) c.cut_files.push_back(r.file);
    c.dense_or_expert_gemm_events +=
        r.whole_trace.component_events[static_cast<size_t>(Component::kGemmDenseOrExpert)];
    c.trace_ranks.push_back(r.rank);
    means.push_back(MeanStepOf(r));
    if (r.whole_trace.gpu_events > 0) with_events.push_back(i);
    grouped_events += r.whole_trace.component_events[static_cast<size_t>(Component::kGroupedGemm)];
    linear_events +=
        r.whole_trace.component_events[static_cast<size_t>(Component::kLinearAttention)];
    attention_events +=
        r.whole_trace.component_events[static_cast<size_t>(Component::kAttentionFwd)] +
        r.whole_trace.component_events[static_cast<size_t>(Component::kAttentionBwd)];
  }
  if (with_events.empty()) {
    Error err = InvalidInput("no GPU event in any trace: nothing to compare with the job");
    if (!c.trace_files.empty()) err.InFile(c.trace_files.front());
    return err;
  }
  c.slowest = FindSlowest(report, means, with_events);
  const MeanStep& measured = means[c.slowest.index];
  c.steps_measured = measured.steps;
  c.steps_left_out = measured.empty_steps;
  c.last_step_left_out = measured.last_step_empty;
  c.slowest_cut = !report.ranks[c.slowest.index].cut.empty();

  const auto predicted = PredictedRows(e);
  for (const ComponentMapping& m : ComponentMappings()) {
    RowComparison row = predicted[static_cast<size_t>(m.row)];
    row.measured_s = MeasuredTotal(measured, m);
    if (m.row == CompareRow::kCommunication) {
      row.measured_exposed_s = measured.nccl_exposed_s + measured.comm_other_exposed_s;
    }
    row.ratio = Ratio(row.measured_s, row.predicted_s);
    c.rows.push_back(row);
  }
  c.dense_or_expert_gemm_s = measured.of(Component::kGemmDenseOrExpert);
  if (c.dense_or_expert_gemm_events > 0) {
    // The dense and expert rows' measured kernels miss the GEMMs whose names do not tell, so
    // neither row's ratio says a rate: compare all GEMM time with all the model's GEMM time.
    RowComparison all;
    all.row = CompareRow::kDenseGemm;  // unused: all_gemm is no row of ComponentMappings
    all.measured_s = c[CompareRow::kDenseGemm].measured_s + c[CompareRow::kExpertGemm].measured_s +
                     c.dense_or_expert_gemm_s;
    all.predicted_s =
        c[CompareRow::kDenseGemm].predicted_s + c[CompareRow::kExpertGemm].predicted_s;
    all.ratio = Ratio(all.measured_s, all.predicted_s);
    c.all_gemm = all;
  }
  for (const UnmappedClass& u : UnmappedClasses()) {
    c.unmapped_s.emplace_back(u.component, measured.of(u.component));
  }
  c.measured_step_index = c.slowest.longest_index;
  c.measured_step_s = c.slowest.longest_span_s;
  c.predicted_step_s = e.step->step.s();
  c.step_ratio = Ratio(c.measured_step_s, c.predicted_step_s);

  // Where the traces do not look like the job.
  const ResolvedJob& job = e.job;
  const bool moe = job.model.HasLayers(FfnKind::kMoe);
  if (moe && grouped_events == 0) {
    c.warnings.push_back(fmt::format(
        "the job's model {} has MoE layers, but the traces hold no grouped/expert GEMM kernel: "
        "the expert GEMMs cannot be compared (a dense run, or expert kernels the rules do not "
        "know)",
        job.model.name));
  } else if (!moe && grouped_events > 0) {
    c.warnings.push_back(fmt::format(
        "the traces hold {} grouped/expert GEMM kernels, but the job's model {} has no MoE layer",
        grouped_events, job.model.name));
  }
  // Linear-attention layers (Gated DeltaNet, Mamba, lightning) run kernels no softmax-attention
  // model runs: their presence on one side only says the trace is of another model.
  const bool linear =
      job.model.HasLayers(MixerKind::kGatedDeltaNet) || job.model.HasLayers(MixerKind::kMamba2) ||
      job.model.HasLayers(MixerKind::kMamba1) || job.model.HasLayers(MixerKind::kLightning);
  if (linear && linear_events == 0) {
    c.warnings.push_back(fmt::format(
        "the job's model {} has linear-attention layers (Gated DeltaNet, Mamba or lightning), but "
        "the traces hold no linear-attention kernel: a trace of another model, or kernels the "
        "rules do not know",
        job.model.name));
  } else if (!linear && linear_events > 0) {
    c.warnings.push_back(fmt::format(
        "the traces hold {} linear-attention kernels (Gated DeltaNet, Mamba, lightning), but the "
        "job's model {} has no such layer: a trace of another model?",
        linear_events, job.model.name));
  }
  // Softmax attention (full, sliding, MLA): a transformer's trace holds its kernels; none at all
  // says a trace of another model (a recommender, a CNN) or attention kernels the rules do not
  // know.
  const bool softmax_attention = job.model.HasLayers(MixerKind::kFullAttention) ||
                                 job.model.HasLayers(MixerKind::kSlidingAttention) ||
                                 job.model.HasLayers(MixerKind::kMla);
  if (softmax_attention && attention_events == 0) {
    c.warnings.push_back(fmt::format(
        "the job's model {} has attention layers, but the traces hold no attention kernel: a "
        "trace of another model, or attention kernels the rules do not know",
        job.model.name));
  }
  const int64_t world = job.spec.layout.world();
  std::optional<int64_t> trace_world;
  for (const profile::RankProfile& r : report.ranks) {
    if (r.world_size) trace_world = r.world_size;
  }
  if (trace_world && *trace_world != world) {
    c.warnings.push_back(fmt::format(
        "the traces were recorded in a world of {} ranks (trace metadata), the job's world size "
        "is {}",
        *trace_world, world));
  } else if (!trace_world && static_cast<int64_t>(report.ranks.size()) != world) {
    c.warnings.push_back(fmt::format(
        "{} trace{} without a world size, the job's world size is {}: the slowest traced rank "
        "may not be the job's slowest",
        report.ranks.size(), report.ranks.size() == 1 ? "" : "s", world));
  }
  const std::string& device = report.ranks[c.slowest.index].device;
  // A variant of a catalog part (`base:`) is that part's silicon: compare with the base.
  const GpuSpec& gpu = job.gpu();
  const std::string job_gpu = gpu.catalog_name.empty() ? gpu.name : gpu.catalog_name;
  c.trace_device = device;
  if (!device.empty()) {
    c.trace_gpu = CatalogGpuOf(device).value_or("");
    const std::string trace_family = GpuFamilyOf(device), job_family = GpuFamilyOf(job_gpu);
    if (c.trace_gpu.empty() && !trace_family.empty() && !job_family.empty() &&
        trace_family != job_family) {
      // Not listed, but its model number says another generation than the job's GPU: a known
      // mismatch, not an unchecked part.
      c.trace_gpu_other_family = trace_family;
      c.warnings.push_back(fmt::format(
          "the trace ran on {} (model number {}; data/gpus.yaml does not list it), the job's GPU "
          "is {} (model number {}): its kernel rates are another GPU's",
          device, trace_family, gpu.name, job_family));
    } else if (c.trace_gpu.empty()) {
      c.warnings.push_back(fmt::format(
          "the trace ran on {}, which data/gpus.yaml does not list (by name or alias), the job's "
          "GPU is {}: check that they are the same part",
          device, gpu.name));
    } else if (c.trace_gpu != job_gpu) {
      c.warnings.push_back(fmt::format(
          "the trace ran on {} (the catalog's {}), the job's GPU is {}: its kernel rates are "
          "another GPU's",
          device, c.trace_gpu, gpu.name));
    }
  }
  if (c.step_ratio && (*c.step_ratio > 10 || *c.step_ratio < 0.1)) {
    c.warnings.push_back(fmt::format(
        "the measured step ({:.3f} s) is {:.3g}x the predicted one ({:.3f} s): the trace covers "
        "another amount of work than the job's step (a part of a step, another batch or layer "
        "count)",
        c.measured_step_s, *c.step_ratio, c.predicted_step_s));
  }
  if (c.all_gemm) {
    c.warnings.push_back(fmt::format(
        "the traces hold {} GEMM kernels whose names do not say whether they run a dense layer or "
        "routed experts (class {}, {:.4f} s per step): the dense and grouped/expert GEMM rows "
        "hold only the kernels whose names tell, so their ratios are not rates; all GEMM "
        "measured {:.4f} s against {:.4f} s predicted ({}) is the one GEMM ratio a calibration "
        "carries, for both",
        c.dense_or_expert_gemm_events, profile::ComponentName(Component::kGemmDenseOrExpert),
        c.dense_or_expert_gemm_s, c.all_gemm->measured_s, c.all_gemm->predicted_s,
        c.all_gemm->ratio ? fmt::format("{:.2f}x", *c.all_gemm->ratio) : "no ratio"));
    if (c.all_gemm->ratio && !Plausible(c.all_gemm->ratio)) {
      c.warnings.push_back(fmt::format(
          "all GEMM: measured/predicted {:.2f}x is outside {:.1f}x-{:.0f}x: the traces' GEMMs and "
          "the model's likely hold different work; a calibration does not carry this ratio",
          *c.all_gemm->ratio, 1 / kPlausibleRatio, kPlausibleRatio));
    }
  }
  if (!c.cut_files.empty()) {
    c.warnings.push_back(fmt::format(
        "{} trace{} cut ({}): a profiler writes a GPU event after the CPU events that launched it "
        "and not in time order, so every step of a cut trace may miss GPU events that lay past "
        "the cut and its figures are lower bounds; --write-calibration refuses such traces "
        "unless --allow-cut-trace is given",
        c.cut_files.size(), c.cut_files.size() == 1 ? " is" : "s are",
        fmt::join(c.cut_files, ", ")));
  }
  for (const ComponentMapping& m : ComponentMappings()) {
    const RowComparison& row = c[m.row];
    if (m.row == CompareRow::kIdle || !row.ratio || Plausible(row.ratio)) continue;
    // Said once above, for all GEMMs.
    if (c.all_gemm && (m.row == CompareRow::kDenseGemm || m.row == CompareRow::kExpertGemm)) {
      continue;
    }
    c.warnings.push_back(fmt::format(
        "{}: measured {:.4f} s is {:.2f}x the predicted {:.4f} s: the trace's {} kernels and the "
        "model's terms likely hold different work (kernels the rules put in another class); a "
        "calibration does not carry this ratio",
        m.label, row.measured_s, *row.ratio, row.predicted_s, m.label));
  }
  if (c.steps_measured == 0) {
    c.warnings.push_back(
        c.steps_left_out.empty()
            ? "the slowest rank's trace has no ProfilerStep#N: its whole trace is taken as one step"
            : "no ProfilerStep#N of the slowest rank holds a GPU event (its kernels were launched "
              "outside the steps): its whole trace is taken as one step");
  }
  return c;
}

}  // namespace strata::calibrate

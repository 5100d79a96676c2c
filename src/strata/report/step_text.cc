#include "strata/report/step_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/core/strings.h"
#include "strata/core/table.h"
#include "strata/report/step_explain.h"

namespace strata {
namespace {

// The course's measured step time of the reference job (../shared/reference/seed-case.md).
constexpr double kReferenceMeasuredStepS = 120.0;

std::string Header(const StepSetup& setup) {
  const JobSpec& s = setup.job.spec;
  const ParallelLayout& l = s.layout;
  const StepTables& t = setup.tables;
  std::string out;
  const std::string& cluster = setup.job.cluster.name;
  out += fmt::format("job: {} on {} x {}{}{}\n", setup.job.model.name, l.world(),
                     setup.job.gpu().name, cluster.empty() ? "" : " (cluster " + cluster + ")",
                     s.file.empty() ? "" : fmt::format(", from {}", s.file));
  out += fmt::format("layout: {}\n", LayoutHeader(l, setup.job.model.HasLayers(FfnKind::kMoe)));
  out += fmt::format(
      "step: {} micro batch{} of {} x {} tokens (mean; attention sees E[S^2]/E[S] "
      "= {}{}), recompute {}{}\n",
      setup.layout.micro_batches, setup.layout.micro_batches == 1 ? "" : "es", s.micro_batch,
      GroupDigits(t.mean_tokens), GroupDigits(t.attention_tokens),
      t.lengths.assumed ? ", lengths assumed uniform up to the max" : "",
      RecomputeGranularityName(s.recompute.granularity),
      s.recompute.titan.op ? " (torchtitan per-op)"
      : s.recompute.titan.every_n_layers > 0
          ? fmt::format(" (torchtitan: every {}-th layer)", s.recompute.titan.every_n_layers)
          : "");
  const std::string& seq_assumption = setup.job.step.sequence.assumption;
  if (!seq_assumption.empty()) out += fmt::format("  sequence: {}\n", seq_assumption);
  const FrameworkProfile& fw = t.framework;
  out += fmt::format("framework: {} {}{}{}\n", fw.name, fw.version,
                     fw.engine != fw.name ? fmt::format(" (trains through {})", fw.engine) : "",
                     s.framework.given ? "" : " (ASSUMED: the job names none)");
  for (const std::string& a : fw.assumptions) out += fmt::format("  implementation: {}\n", a);
  if (s.activation_offload.on()) {
    out += fmt::format("activation offload: the first {} layers' activations to host memory\n",
                       s.activation_offload.num_layers);
  }
  return out;
}

// Each unstated assumption with the step under its alternatives.
std::string EffectsText(const std::vector<AssumptionEffect>& effects, const Seconds& step) {
  if (effects.empty()) return "";
  std::string out = fmt::format(
      "\nwhat the unstated assumptions are worth (the {:.2f} s step with each alternative):\n",
      step.s());
  std::string last;
  for (const AssumptionEffect& a : effects) {
    if (a.assumption != last) out += fmt::format("  assumed: {}\n", a.assumption);
    last = a.assumption;
    out += fmt::format("    if {}: {:.2f} s ({:+.2f} s){}\n", a.alternative, a.step.s(),
                       a.delta.s(), a.set.empty() ? "" : fmt::format(" [--set {}]", a.set));
  }
  return out;
}

// Where the corpora's measured runs of this model landed, the job's GPU first, one line a GPU:
// "on H100 SXM: 3 runs, 1.71x (ID) to 2.51x (ID); at those ratios this step is ... s to ... s".
std::string ModelRunsText(const StepSetup& setup, const StepResult& r,
                          const std::vector<ModelStepRuns>& runs) {
  if (runs.empty()) return "";
  std::string out = fmt::format(
      "measured runs of {} in the step corpora (docs/step-error-band.md), measured / predicted "
      "step:\n",
      runs.front().model);
  for (const ModelStepRuns& m : runs) {
    const std::string where =
        m.gpu == setup.job.gpu().name ? fmt::format("{} (this GPU)", m.gpu) : m.gpu;
    if (m.rows == 1) {
      out += fmt::format("  on {}: {:.2f}x ({}); at that ratio this step is {:.2f} s\n", where,
                         m.low, m.low_row, m.low * r.step.s());
      continue;
    }
    out += fmt::format(
        "  on {}: {} runs, {:.2f}x ({}) to {:.2f}x ({}); at those ratios this step is {:.2f} s "
        "to {:.2f} s\n",
        where, m.rows, m.low, m.low_row, m.high, m.high_row, m.low * r.step.s(),
        m.high * r.step.s());
  }
  return out;
}

std::string StepText(const StepSetup& setup, const StepResult& r, bool explain, bool reference,
                     const std::vector<AssumptionEffect>& effects,
                     const std::optional<StepErrorBand>& band,
                     const std::vector<ModelStepRuns>& model_runs) {
  std::string out = Header(setup);
  out += fmt::format("\npredicted step time: {:.2f} s\n", r.step.s());
  if (band) {
    out += fmt::format(
        "error band: measured steps of runs of this kind ({}, {} fit rows) were {:.2f}x ({}) to "
        "{:.2f}x ({}) the model's prediction; at those ratios this step is {:.2f} s to {:.2f} s "
        "(docs/step-error-band.md)\n",
        band->family, band->rows, band->low, band->low_row, band->high, band->high_row,
        band->low * r.step.s(), band->high * r.step.s());
  }
  out += ModelRunsText(setup, r, model_runs);
  out += fmt::format(
      "throughput: {:.1f} tokens/s/GPU ({} tokens per step); MFU {:.2f}% of the bf16 dense "
      "peak{} (megatron-core FLOP{}), HFU {:.2f}%\n",
      r.tokens_per_s_per_gpu, GroupDigits(r.tokens_per_step), 100 * r.mfu,
      setup.layout.fp8.on() ? fmt::format(", {:.2f}% of the FP8 dense peak", 100 * r.mfu_fp8) : "",
      r.model_flop_per_token < setup.tables.megatron_flop_per_token
          ? fmt::format(" less the frozen weights' gradients: {:.3g} of {:.3g} FLOP per token",
                        r.model_flop_per_token, setup.tables.megatron_flop_per_token)
          : "",
      100 * r.hfu);
  if (!r.mfu_flag.empty()) out += fmt::format("warning: {}\n", r.mfu_flag);
  out += "\n";
  Table table({{"component", Align::kLeft},
               {"time (s)"},
               {"exposed (s)"},
               {"hidden (s)"},
               {"share of step (%)"}});
  for (size_t i = 0; i < kStepPartCount; ++i) {
    const StepPartTime& p = r.parts[i];
    if (p.total.s() <= 0) continue;
    table.AddRow({std::string(StepPartName(static_cast<StepPart>(i))),
                  fmt::format("{:.3f}", p.total.s()), fmt::format("{:.3f}", p.exposed.s()),
                  fmt::format("{:.3f}", (p.total - p.exposed).value()),
                  fmt::format("{:.1f}", 100 * (p.exposed / r.step))});
  }
  table.AddSeparator();
  table.AddRow({"step", "", fmt::format("{:.3f}", r.step.s()), "", "100.0"});
  out += table.Render();
  for (const std::string& c : r.caveats) out += fmt::format("not modelled: {}\n", c);
  out += "\none micro batch on the most loaded rank, by kind of kernel (s):\n";
  Table kernels({{"kernel", Align::kLeft}, {"forward (s)"}, {"backward (s)"}, {"recompute (s)"}});
  auto row = [&](const char* name, Seconds KernelTimes::*field) {
    kernels.AddRow({name, fmt::format("{:.3f}", (r.forward.*field).s()),
                    fmt::format("{:.3f}", (r.backward.*field).s()),
                    fmt::format("{:.3f}", (r.recompute.*field).s())});
  };
  row("dense GEMMs", &KernelTimes::dense_gemm);
  row("routed-expert GEMMs", &KernelTimes::expert_gemm);
  row("core attention", &KernelTimes::attention);
  row("Gated DeltaNet", &KernelTimes::gated_deltanet);
  row("memory-bound ops", &KernelTimes::memory_bound);
  row("output layer + loss", &KernelTimes::logits_and_loss);
  if (r.forward.vision.s() > 0) row("vision tower", &KernelTimes::vision);
  out += kernels.Render();
  if (explain) {
    out += "\nhow each number is computed (docs/formulas.md, \"Step time\"):\n";
    for (const StepFormula& f : ExplainStep(setup.tables, setup.layout, r)) {
      out += fmt::format("  {}\n    {}\n", f.name, f.formula);
    }
    out += "\ntimeline of one micro batch on the most loaded rank:\n";
    for (const std::string& line : MicroBatchTimeline(setup.layout, r)) out += "  " + line + "\n";
  }
  out += EffectsText(effects, r.step);
  if (reference) {
    std::vector<size_t> order;
    for (size_t i = 0; i < kStepPartCount; ++i) order.push_back(i);
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return r.parts[a].exposed > r.parts[b].exposed; });
    const double gap = r.step.s() - kReferenceMeasuredStepS;
    out += fmt::format(
        "\nthe course measured {:.0f} s per step on this job: the model predicts "
        "{:.1f} s, {:+.1f} s ({:+.1f}%).\n",
        kReferenceMeasuredStepS, r.step.s(), gap, 100 * gap / kReferenceMeasuredStepS);
    out += "the model attributes most of its step to: ";
    for (size_t j = 0; j < 3; ++j) {
      const StepPartTime& p = r.parts[order[j]];
      out += fmt::format("{}{} ({:.1f} s)", j ? ", " : "",
                         StepPartName(static_cast<StepPart>(order[j])), p.exposed.s());
    }
    out +=
        ".\nthe gap is not hidden or tuned away: see docs/step-validation.md for the model's "
        "error on every measured row. The model is as far too fast on NVIDIA's own runs of this "
        "model (Megatron-Bridge's verification card: SFT, LoRA and pretraining on H100; "
        "docs/step-validation-cards.md): the gap is the model's, not the course's cluster.\n";
  }
  return out;
}

}  // namespace

std::string RenderStepText(const Evaluation& e, bool explain, bool reference) {
  return StepText(*e.setup, *e.step, explain, reference, e.assumption_effects, e.step_band,
                  e.model_runs);
}

}  // namespace strata

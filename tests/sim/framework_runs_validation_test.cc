// docs/step-validation-frameworks.md, recomputed: the step model on the published runs of the
// memory corpus (tests/memory/corpus/corpus.yaml) that also publish a throughput: torchtitan's
// benchmark tables in four releases (FSDP2, TP, PP, CP, Float8 and MXFP8, eager and compiled,
// H100, H200, B200) and Megatron-SWIFT / DeepSpeed example headers. These are the frameworks the
// Megatron-Bridge held-out set of docs/step-validation.md does not cover.
//
// The split is the corpus's, fixed for the memory comparison before any step was compared (a
// hash of the row id; it reads no error, tests/memory/corpus_validation_test.cc recomputes it):
// the step reuses it, so a row is fit or held out for the step as it is for memory. The measured
// step time is the one quantity compared:
//   tokens/s/GPU rows: measured step = tokens per step / (tokens/s/GPU x GPUs)
//   s/step rows (ms-swift's "s/it", one optimizer step per iteration): as published.
// Error = predicted step / measured step - 1. The document is compared with what this test
// generates, so it cannot go stale; UPDATE_GOLDEN=1 rewrites it. Nothing here asserts a target.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "memory/corpus_support.h"
#include "sim/step_band_rows.h"
#include "strata/eval/evaluation.h"
#include "strata/job/job_spec.h"
#include "strata/sim/step_layout_error.h"
#include "support/error_stats.h"
#include "support/golden.h"

namespace strata::framework_runs_validation_test {
namespace {

constexpr const char* kCorpus = "memory/corpus/corpus.yaml";
constexpr const char* kDoc = "../docs/step-validation-frameworks.md";

struct Outcome {
  std::string id, split, release, framework, layout, unit;
  double published = 0;  // in `unit`
  double measured_step = 0, predicted_step = 0, predicted_published = 0;
  double error = 0;                        // predicted step / measured step - 1
  std::string family;                      // StepFamily: the error band it belongs to
  std::string layout_family;               // StepLayoutFamilyOf: its EP layout's family
  std::string catalog_model, catalog_gpu;  // the job's model and GPU by catalog name
};

struct LeftOut {
  std::string id, published, reason;
};

struct Runs {
  std::vector<Outcome> rows;
  std::vector<LeftOut> left_out;
};

std::string LayoutOf(const ResolvedJob& job) {
  const ParallelLayout& l = job.layout();
  std::string s =
      fmt::format("{} x {}, TP{} PP{}", job.cluster.world_size(), job.gpu().name, l.tp, l.pp);
  if (l.vpp > 1) s += fmt::format(" VPP{}", l.vpp);
  s += fmt::format(" CP{} EP{} DP{}, mbs {} x {:.0f}", l.cp, l.ep, l.dp, job.spec.micro_batch,
                   job.spec.sequence.max_tokens);
  return s;
}

Runs Evaluate() {
  Runs runs;
  auto workspace = Workspace::Load();
  EXPECT_TRUE(workspace.ok()) << workspace.error().Format();
  if (!workspace.ok()) return runs;
  const std::string file = testing::TestPath(kCorpus);
  const YAML::Node top = YAML::Load(testing::ReadTestFile(kCorpus));
  for (const YAML::Node& row : top["rows"]) {
    const YAML::Node t = row["throughput"];
    if (!t) continue;
    const std::string id = row["id"].as<std::string>();
    const std::string unit = t["unit"].as<std::string>();
    EXPECT_TRUE(unit == "tokens/s/GPU" || unit == "s/step") << id << ": unit " << unit;
    const double published = t["value"].as<double>();
    const std::string published_text = fmt::format("{:g} {}", published, unit);
    if (t["missing"]) {
      runs.left_out.push_back({id, published_text, t["missing"].as<std::string>()});
      continue;
    }
    if (row["expressible"] && !row["expressible"].as<bool>()) {
      runs.left_out.push_back({id, published_text, row["missing"].as<std::string>()});
      continue;
    }
    const std::optional<ResolvedJob> job = corpus::ResolveRowJob(row, file);
    if (!job) continue;
    auto e = EvaluateJob(*workspace, *job, {.depth = EvalDepth::kStep});
    EXPECT_TRUE(e.ok()) << id << ": " << (e.ok() ? "" : e.error().Format());
    if (!e.ok()) continue;
    const StepResult& step = *e->step;
    Outcome o;
    o.id = id;
    o.split = row["split"].as<std::string>();
    const std::string release = row["release"].as<std::string>();
    o.release = release.substr(0, std::min(release.find(" ("), release.find(',')));
    const FrameworkSpec& fw = job->spec.framework;
    o.framework = fmt::format("{} {}{}", fw.name, fw.version.empty() ? "(latest)" : fw.version,
                              fw.compile ? ", compiled" : "");
    o.layout = LayoutOf(*job);
    o.unit = unit;
    o.published = published;
    o.predicted_step = step.step.value();
    if (unit == "s/step") {
      o.measured_step = published;
      o.predicted_published = o.predicted_step;
    } else {
      o.measured_step =
          step.tokens_per_step / (published * static_cast<double>(job->cluster.world_size()));
      o.predicted_published = step.tokens_per_s_per_gpu;
    }
    o.error = o.predicted_step / o.measured_step - 1;
    o.family = std::string(StepFamily(*job));
    o.layout_family = StepLayoutFamilyOf(job->layout(), job->cluster.gpus_per_node);
    o.catalog_model = job->model.name;
    o.catalog_gpu = job->gpu().name;
    runs.rows.push_back(o);
  }
  return runs;
}

std::string SummaryLine(const std::string& label, const std::vector<const Outcome*>& rows) {
  std::vector<double> errors;
  errors.reserve(rows.size());
  for (const Outcome* o : rows) errors.push_back(o->error);
  return testing::SummaryTableRow(label, errors);
}

std::string Render(const Runs& runs) {
  std::string d =
      "# Step-time model: framework runs (torchtitan, Megatron-SWIFT, DeepSpeed)\n\n"
      "Generated by `tests/sim/framework_runs_validation_test.cc` (it fails when this file differs "
      "from what the model computes; `UPDATE_GOLDEN=1` rewrites it). The runs are the rows of the "
      "memory corpus (`tests/memory/corpus/corpus.yaml`, its section in "
      "`docs/memory-validation.md`) whose source also publishes a throughput: each row's source, "
      "quote and assumptions are there, and its job is the one the memory comparison uses. They "
      "cover what the held-out set of `docs/step-validation.md` (Megatron-Bridge only) does not: "
      "torchtitan's FSDP2 in four releases, eager and compiled, Float8 and MXFP8, on H100, H200 "
      "and B200, and ms-swift's Megatron and DeepSpeed launches.\n\n"
      "**The split is the corpus's**, fixed for the memory comparison before any step was "
      "compared (FNV-1a of the row id within each family, alternating; it reads no error). A row "
      "is fit or held out for the step as it is for memory. The fit rows are what a calibration of "
      "the framework profile may read; the held-out rows are only reported.\n\n"
      "Measured step: tokens per step / (tokens/s/GPU x GPUs) for throughput rows, the published "
      "s/it for ms-swift rows (one optimizer step per iteration). Error = predicted step / "
      "measured step - 1 (negative: the model is too fast).\n\n"
      "How these rows first read, and what moved them (every change is a fact the source states "
      "or a byte count of the framework's code, none a constant fitted to a row): as the memory "
      "corpus first wrote them (the datasheet H100 SXM at 700 W, the latest torchtitan's cuDNN "
      "attention) the 2024-12 torchtitan rows were 33% to 63% too fast; that first run showed "
      "every row, fit and held out. The benchmark's own Hardware section says 500 W, HBM2e at "
      "2.4 TB/s and 400 Gb/s per GPU, and torchtitan 9dec370 predates v0.1.0, whose SDPA picks "
      "FlashAttention-2 on Hopper: the jobs now say so. The eager module code's extra bytes "
      "(torchtitan without compile, HF code without Liger) and FSDP2's copy-out, both counted "
      "from the frameworks' code (`data/frameworks.yaml`), were added next; the figures above "
      "are the model with both.\n\n"
      "| set | rows | median \\|error\\| | p90 | max | median signed error | within 10% | within "
      "25% |\n|---|---|---|---|---|---|---|---|\n";
  std::vector<const Outcome*> fit, held;
  for (const Outcome& o : runs.rows) (o.split == "fit" ? fit : held).push_back(&o);
  d += SummaryLine("fit", fit) + SummaryLine("held out", held) + "\n";
  for (const auto& [title, rows] :
       {std::pair{"## Fit rows", &fit}, std::pair{"## Held-out rows", &held}}) {
    d += std::string(title) +
         "\n\n| row | release | framework (as the job states it) | layout | published | "
         "predicted | measured step (s) | predicted step (s) | error |\n"
         "|---|---|---|---|---|---|---|---|---|\n";
    for (const Outcome* o : *rows) {
      const bool tps = o->unit == "tokens/s/GPU";
      d += fmt::format("| {} | {} | {} | {} | {} | {} | {:.3f} | {:.3f} | {:+.1f}% |\n", o->id,
                       o->release, o->framework, o->layout,
                       tps ? fmt::format("{:g} tokens/s/GPU", o->published)
                           : fmt::format("{:g} s/step", o->published),
                       tps ? fmt::format("{:.0f} tokens/s/GPU", o->predicted_published)
                           : fmt::format("{:.2f} s/step", o->predicted_published),
                       o->measured_step, o->predicted_step, 100 * o->error);
    }
    d += "\n";
  }
  d += fmt::format("## Rows with a throughput left out ({})\n\n", runs.left_out.size());
  for (const LeftOut& l : runs.left_out) {
    d += fmt::format("- {} ({}): {}\n", l.id, l.published, l.reason);
  }
  return d;
}

TEST(FrameworkRunsValidation, DocumentMatchesTheModel) {
  const Runs runs = Evaluate();
  EXPECT_GE(runs.rows.size(), 20u);
  for (const Outcome& o : runs.rows) {
    EXPECT_GT(o.predicted_step, 0) << o.id;
    EXPECT_GT(o.measured_step, 0) << o.id;
  }
  EXPECT_TRUE(testing::MatchesGolden(kDoc, Render(runs)));
  // The rows the step's error band is derived from (tests/sim/step_error_band_test.cc).
  std::vector<StepBandRow> band;
  for (const Outcome& o : runs.rows) {
    band.push_back({o.id, o.split, o.family, o.predicted_step, o.measured_step, o.catalog_model,
                    o.catalog_gpu, o.layout_family});
  }
  EXPECT_TRUE(testing::MatchesGolden("sim/validation/band_rows/framework_runs.tsv",
                                     testing::BandRowsTsv(band)));
  // The README's "How far to trust a number" quotes both sets' figures from this document.
  std::vector<double> fit, held;
  for (const Outcome& o : runs.rows) (o.split == "fit" ? fit : held).push_back(o.error);
  const std::string quoted = testing::FitHeldOutQuote(
      "framework runs (torchtitan in four releases, Megatron-SWIFT, DeepSpeed, Megatron-LM's CI; "
      "`docs/step-validation-frameworks.md`)",
      fit, held);
  const std::string readme = testing::ReadTestFile("../README.md");
  EXPECT_NE(readme.find(quoted), std::string::npos) << "README.md should say: " << quoted;
}

// The measured step of a throughput row, by hand: TT2412-8B-8GPU-fsdp is 8 GPUs x local batch 2
// x 8,192 tokens = 131,072 tokens per step at 5,762 tokens/s/GPU: 131,072 / (5,762 x 8) =
// 2.8434 s (torchtitan's benchmarks/llama3_h100_202412_torchtitan.md, Table 1).
TEST(FrameworkRunsValidation, ThroughputBecomesTheMeasuredStep) {
  const Runs runs = Evaluate();
  bool found = false;
  for (const Outcome& o : runs.rows) {
    if (o.id != "TT2412-8B-8GPU-fsdp") continue;
    found = true;
    EXPECT_NEAR(o.measured_step, 131072.0 / (5762.0 * 8), 1e-9);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace strata::framework_runs_validation_test

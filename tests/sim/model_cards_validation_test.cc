// docs/step-validation-cards.md, recomputed: the step model on the measured items of
// Megatron-Bridge's model verification cards (tests/sim/validation/cards/*.yaml, one file a card).
// Unlike the performance tables of docs/step-validation.md (mock data, forced balance, tuned
// layouts), these are functional runs: real data, natural routing, small global batches, the
// settings a user's SFT runs with.
//
// Each measured item is a row: a strata job read off the recipe and the command, or `missing:`
// with why it cannot be one. The split is fixed per card by the rule in tests/support/split_rule.h
// (recomputed here: it reads no error). The measured step is the card's
// last_10_steps_step_time_ms_avg; the card's tokens/s/GPU must agree with it for the tokens the
// job runs (GBS x seq_length / (tokens/s/GPU x GPUs) within 1% of the step), which checks the
// batch and GPU count read off the card. Error = predicted step / measured step - 1. Nothing here
// asserts a target: the document is compared with what this test generates (UPDATE_GOLDEN=1).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "memory/corpus_support.h"
#include "sim/step_band_rows.h"
#include "strata/eval/evaluation.h"
#include "strata/sim/step_layout_error.h"
#include "support/error_stats.h"
#include "support/golden.h"
#include "support/split_rule.h"

namespace strata::model_cards_validation_test {
namespace {

constexpr const char* kCardsDir = "sim/validation/cards";
constexpr const char* kDoc = "../docs/step-validation-cards.md";

struct Row {
  std::string card, id, item, split, layout, missing;
  double measured_step = 0, predicted_step = 0, error = 0;
  double tokens_per_s_per_gpu = 0;
  // The predicted step's largest exposed parts, for the table's last column.
  std::string largest;
  std::string family;                      // StepFamily: the error band it belongs to
  std::string layout_family;               // StepLayoutFamilyOf: its EP layout's family
  std::string catalog_model, catalog_gpu;  // the job's model and GPU by catalog name
};

struct Cards {
  std::vector<Row> rows;  // expressible and not, in file order
  std::vector<std::string> files;
};

std::string LayoutOf(const ResolvedJob& job) {
  const ParallelLayout& l = job.layout();
  std::string s =
      fmt::format("{} x {}, TP{} PP{}", job.cluster.world_size(), job.gpu().name, l.tp, l.pp);
  if (l.vpp > 1) s += fmt::format(" VPP{}", l.vpp);
  s += fmt::format(" CP{} EP{} DP{}, GBS {} x {:.0f}", l.cp, l.ep, l.dp, job.spec.global_batch,
                   job.spec.sequence.max_tokens);
  return s;
}

std::string LargestParts(const StepResult& step) {
  std::vector<std::pair<double, std::string>> parts;
  for (size_t i = 0; i < kStepPartCount; ++i) {
    const double s = step.parts[i].exposed.value();
    if (s > 0) parts.emplace_back(s, std::string(StepPartName(static_cast<StepPart>(i))));
  }
  std::sort(parts.rbegin(), parts.rend());
  std::string out;
  for (size_t i = 0; i < std::min<size_t>(3, parts.size()); ++i) {
    out += fmt::format("{}{} {:.2f} s", i ? ", " : "", parts[i].second, parts[i].first);
  }
  return out;
}

Cards Evaluate() {
  Cards cards;
  auto workspace = Workspace::Load();
  EXPECT_TRUE(workspace.ok()) << workspace.error().Format();
  if (!workspace.ok()) return cards;
  for (const auto& entry : std::filesystem::directory_iterator(testing::TestPath(kCardsDir))) {
    if (entry.path().extension() == ".yaml") cards.files.push_back(entry.path().filename());
  }
  std::sort(cards.files.begin(), cards.files.end());
  for (const std::string& name : cards.files) {
    const std::string relative = std::string(kCardsDir) + "/" + name;
    const std::string file = testing::TestPath(relative);
    const YAML::Node top = YAML::Load(testing::ReadTestFile(relative));
    const std::string card = top["card"].as<std::string>();
    EXPECT_TRUE(top["source"]["commit"]) << name << ": the card's commit";
    std::vector<std::string> ids;
    for (const YAML::Node& r : top["rows"]) ids.push_back(r["id"].as<std::string>());
    const std::map<std::string, std::string> rule = testing::AlternateSplit(ids);
    for (const YAML::Node& r : top["rows"]) {
      Row row;
      row.card = card;
      row.id = r["id"].as<std::string>();
      row.item = r["item"].as<std::string>();
      row.split = r["split"].as<std::string>();
      EXPECT_EQ(row.split, rule.at(row.id)) << row.id << ": the split rule of the file's header";
      EXPECT_TRUE(r["quote"]) << row.id << ": the card's words for the run";
      row.measured_step = r["measured"]["step_ms"].as<double>() / 1000;
      row.tokens_per_s_per_gpu = r["measured"]["tokens_per_s_per_gpu"].as<double>();
      if (r["missing"]) {
        EXPECT_FALSE(r["job"]) << row.id << ": a row is a job or says what is missing, not both";
        row.missing = r["missing"].as<std::string>();
        cards.rows.push_back(row);
        continue;
      }
      const std::optional<ResolvedJob> job = corpus::ResolveRowJob(r, file);
      if (!job) continue;
      auto e = EvaluateJob(*workspace, *job, {.depth = EvalDepth::kStep});
      EXPECT_TRUE(e.ok()) << row.id << ": " << (e.ok() ? "" : e.error().Format());
      if (!e.ok()) continue;
      const StepResult& step = *e->step;
      // The card's two figures agree for the tokens this job runs: a wrong GBS, sequence length or
      // GPU count read off the card shows here.
      const double gpus = static_cast<double>(job->cluster.world_size());
      const double implied_step = step.tokens_per_step / (row.tokens_per_s_per_gpu * gpus);
      EXPECT_NEAR(implied_step / row.measured_step, 1.0, 0.01)
          << row.id << ": " << step.tokens_per_step << " tokens a step at "
          << row.tokens_per_s_per_gpu << " tokens/s/GPU on " << gpus << " GPUs";
      row.layout = LayoutOf(*job);
      row.predicted_step = step.step.value();
      row.error = row.predicted_step / row.measured_step - 1;
      row.largest = LargestParts(step);
      row.family = std::string(StepFamily(*job));
      row.layout_family = StepLayoutFamilyOf(job->layout(), job->cluster.gpus_per_node);
      row.catalog_model = job->model.name;
      row.catalog_gpu = job->gpu().name;
      cards.rows.push_back(row);
    }
  }
  return cards;
}

std::string Render(const Cards& cards) {
  std::string d =
      "# Step-time model: Megatron-Bridge's model verification cards\n\n"
      "Generated by `tests/sim/model_cards_validation_test.cc` (it fails when this file differs "
      "from what the model computes; `UPDATE_GOLDEN=1` rewrites it). NVIDIA-NeMo/Megatron-Bridge "
      "keeps a verification card for each model it supports "
      "(`examples/model_verification_cards/<model>/card.yaml`, commit 067f987): the exact "
      "command of each measured run, the layout in words and the mean of the last ten steps. "
      "Unlike the performance tables of `docs/step-validation.md` (mock data, forced balance, "
      "tuned layouts), most are functional runs: real data, natural routing, small global "
      "batches, what a user's SFT runs with. Each measured item is a row in "
      "`tests/sim/validation/cards/<model>.yaml`: a job read off the recipe the command names "
      "and its overrides, with every assumption, or the reason it cannot be one.\n\n"
      "**The split** was fixed per card before any row was predicted: the ids sorted by FNV-1a "
      "64, alternately fit and held out, starting with fit (the test recomputes it). Fit rows "
      "may inform a calibration; held-out rows are only reported.\n\n"
      "Measured step: the card's `last_10_steps_step_time_ms_avg`; the test checks that the "
      "card's tokens/s/GPU gives the same step for the job's tokens (GBS x sequence), within 1%. "
      "Error = predicted step / measured step - 1 (negative: the model is too fast).\n\n"
      "| set | rows | median \\|error\\| | p90 | max | median signed error | within 10% | within "
      "25% |\n|---|---|---|---|---|---|---|---|\n";
  std::vector<double> fit, held;
  std::map<std::string, std::vector<double>> by_card;
  for (const Row& r : cards.rows) {
    if (!r.missing.empty()) continue;
    (r.split == "fit" ? fit : held).push_back(r.error);
    by_card[r.card].push_back(r.error);
  }
  d += testing::SummaryTableRow("fit", fit) + testing::SummaryTableRow("held out", held);
  for (const auto& [card, errors] : by_card) {
    d += testing::SummaryTableRow(card + ", both sets", errors);
  }
  d += "\n";
  for (const auto& [title, split] :
       {std::pair{"## Fit rows", "fit"}, std::pair{"## Held-out rows", "held_out"}}) {
    d += std::string(title) +
         "\n\n| row | card item | layout | measured step (s) | predicted step (s) | error | the "
         "prediction's largest parts |\n|---|---|---|---|---|---|---|\n";
    for (const Row& r : cards.rows) {
      if (r.split != split || !r.missing.empty()) continue;
      d += fmt::format("| {} | {} {} | {} | {:.3f} | {:.3f} | {:+.1f}% | {} |\n", r.id, r.card,
                       r.item, r.layout, r.measured_step, r.predicted_step, 100 * r.error,
                       r.largest);
    }
    d += "\n";
  }
  size_t left = 0;
  for (const Row& r : cards.rows) left += !r.missing.empty();
  d += fmt::format("## Measured items left out ({})\n\n", left);
  for (const Row& r : cards.rows) {
    if (r.missing.empty()) continue;
    d += fmt::format("- {} ({} {}, {} split, {:.3f} s measured): {}\n", r.id, r.card, r.item,
                     r.split == "fit" ? "fit" : "held-out", r.measured_step, r.missing);
  }
  return d;
}

TEST(ModelCardsValidation, DocumentMatchesTheModel) {
  const Cards cards = Evaluate();
  EXPECT_FALSE(cards.files.empty());
  for (const Row& r : cards.rows) {
    EXPECT_GT(r.measured_step, 0) << r.id;
    if (r.missing.empty()) {
      EXPECT_GT(r.predicted_step, 0) << r.id;
    }
  }
  EXPECT_TRUE(testing::MatchesGolden(kDoc, Render(cards)));
  // The rows the step's error band is derived from (tests/sim/step_error_band_test.cc).
  std::vector<StepBandRow> band;
  for (const Row& r : cards.rows) {
    if (r.missing.empty()) {
      band.push_back({r.id, r.split, r.family, r.predicted_step, r.measured_step, r.catalog_model,
                      r.catalog_gpu, r.layout_family});
    }
  }
  EXPECT_TRUE(testing::MatchesGolden("sim/validation/band_rows/model_cards.tsv",
                                     testing::BandRowsTsv(band)));
  // The README's "How far to trust a number" quotes both sets' figures from this document.
  std::vector<double> fit, held;
  for (const Row& r : cards.rows) {
    if (r.missing.empty()) (r.split == "fit" ? fit : held).push_back(r.error);
  }
  const std::string quoted = testing::FitHeldOutQuote(
      "runs of Megatron-Bridge's model verification cards (SFT, LoRA and pretraining of five MoE "
      "models on H100, GB200 and GB300; `docs/step-validation-cards.md`)",
      fit, held);
  const std::string readme = testing::ReadTestFile("../README.md");
  EXPECT_NE(readme.find(quoted), std::string::npos) << "README.md should say: " << quoted;
}

TEST(ModelCardsValidation, SplitRuleIsFnv1aAlternating) {
  // FNV-1a 64 of "" is the offset basis and of "a" the published vector (Fowler, Noll, Vo).
  EXPECT_EQ(testing::Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(testing::Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  // Sorted by hash, "a" (0xaf63dc4c8601ec8c) comes before "b" (0xaf63df4c8601f1a5): fit, then
  // held out.
  const auto split = testing::AlternateSplit({"b", "a"});
  EXPECT_EQ(split.at("a"), "fit");
  EXPECT_EQ(split.at("b"), "held_out");
}

}  // namespace
}  // namespace strata::model_cards_validation_test

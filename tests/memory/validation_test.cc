// Keeps docs/memory-validation.md honest: the predicted column there is recomputed here. The
// measured values are not asserted against (the model's error is reported, not tuned away);
// what is asserted is that the documented prediction is still what the ledger says.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memory/corpus_support.h"
#include "memory/memory_test_support.h"
#include "strata/memory/error_band.h"
#include "support/doc_section.h"
#include "support/golden.h"

namespace strata::validation_test {
namespace {

struct Row {
  const char* id;
  const char* job;                // under tests/, or "" for the reference job
  double predicted_gb;            // the table's predicted device used from step 2 on, decimal GB
  double measured_gb;             // the row's measurement, in decimal GB (GiB converted); 0 = none
  std::vector<std::string> sets;  // --set variants the table shows besides the row itself
  bool in_band = true;  // a row as configured (not a what-if variant or an HF-Trainer row)
  /// The framework family whose band the row belongs to (memory/error_band.h). The H200 job
  /// files name no framework (the step model's rows read them as they are), so the family is
  /// the row's: HF transformers' model in a plain loop, or FSDP2.
  const char* family = "megatron";
};

// The rows measured with every counter (tests/fixtures/device/h200-2026-11-30*.json, the highest
// of steps 2-6): max_memory_allocated and max_memory_reserved in decimal GB, and the table's
// predictions of both.
struct CounterRow {
  const char* id;
  const char* job;
  double predicted_allocated_gb, measured_allocated_gb;
  double predicted_reserved_gb, measured_reserved_gb;
};

const std::vector<CounterRow>& CounterRows() {
  static const std::vector<CounterRow> rows = {
      {"H200-01", "memory/validation/h200-01.yaml", 71.62, 72.874233856, 71.99, 73.710698496},
      {"H200-02", "memory/validation/h200-02.yaml", 96.87, 98.124992512, 98.50, 98.475966464},
      {"H200-03", "memory/validation/h200-03.yaml", 80.56, 81.218236416, 81.37, 82.025906176},
      {"H200-04", "memory/validation/h200-04.yaml", 84.82, 82.844061696, 90.06, 93.044342784},
      {"H200-05", "memory/validation/h200-05.yaml", 97.45, 95.469424640, 103.32, 105.746792448},
      {"H200-06", "memory/validation/h200-06.yaml", 79.00, 81.436987392, 79.74, 82.680217600},
  };
  return rows;
}

constexpr double kGiB = 1.073741824;  // GB per GiB

// The DeepSpeed variants in the notes of MS-01 and MS-02 (HF Trainer): TP 1, no SP, full
// recompute (gradient checkpointing), bf16 gradient partitions.
std::vector<std::string> DeepSpeed01(const std::string& mode) {
  return {"parallel.tp=1", "parallel.sequence_parallel=false", "sharding.mode=" + mode,
          "recompute.granularity=full", "precision.grads=bf16"};
}
// MS-02's row is the TP2 EP8 layout its header was measured with (ms-02.yaml): no TP, no EP here.
std::vector<std::string> DeepSpeed02(const std::string& mode) {
  return {"parallel.pp=1",
          "parallel.ep=1",
          "parallel.tp=1",
          "parallel.etp=1",
          "parallel.sequence_parallel=false",
          "sharding.mode=" + mode,
          "precision.grads=bf16"};
}

// The rows of docs/memory-validation.md. The measured figures are the sources'
// (dev-measurements.md), converted to decimal GB where the source says GiB.
const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = {
      {"SEED-01", "", 83.91, 85.6, {}},
      {"MS-01", "memory/validation/ms-01.yaml", 64.02, 64.0, {}},
      {"MS-02", "memory/validation/ms-02.yaml", 47.78, 60.0 * kGiB, {}},
      {"MS-03", "memory/validation/ms-03.yaml", 45.62, 57.0 * kGiB, {}},
      {"MS-03, even split",
       "memory/validation/ms-03.yaml",
       48.15,
       57.0 * kGiB,
       {"parallel.last_stage_layers=12"},
       false},
      {"MS-04", "memory/validation/ms-04.yaml", 51.46, 60.0 * kGiB, {}},
      {"MS-05", "memory/validation/ms-05.yaml", 54.68, 58.0 * kGiB, {}},
      {"MS-05, bf16 weights kept",
       "memory/validation/ms-05.yaml",
       61.29,
       58.0 * kGiB,
       {"fp8.param_gather=false"},
       false},
      {"MS-06", "memory/validation/ms-06.yaml", 56.98, 52.0 * kGiB, {}},
      {"MS-07", "memory/validation/ms-07.yaml", 45.73, 50.0, {}},
      // Measured on one H200 (bench/device/h200_measure.py, docs/kernel-measurements.md): the
      // device's used memory (cudaMemGetInfo total - free, what nvidia-smi shows for the one
      // process) at its highest over steps 2-6, in decimal GB.
      {"H200-01", "memory/validation/h200-01.yaml", 72.79, 74.51, {}, true, "hf_trainer"},
      {"H200-02", "memory/validation/h200-02.yaml", 99.31, 99.28, {}, true, "hf_trainer"},
      {"H200-03", "memory/validation/h200-03.yaml", 82.18, 82.83, {}, true, "hf_trainer"},
      {"H200-04", "memory/validation/h200-04.yaml", 90.87, 94.43, {}, true, "fsdp2"},
      {"H200-05", "memory/validation/h200-05.yaml", 104.13, 107.14, {}, true, "fsdp2"},
      // Second round (tests/fixtures/device/h200-2026-11-30-round2.json).
      {"H200-06", "memory/validation/h200-06.yaml", 80.54, 83.48, {}, true, "hf_trainer"},
      {"MS-01, ZeRO-2", "memory/validation/ms-01.yaml", 70.36, 80.0, DeepSpeed01("zero2"), false},
      {"MS-01, ZeRO-3", "memory/validation/ms-01.yaml", 47.63, 58.0, DeepSpeed01("zero3"), false},
      {"MS-02, ZeRO-2 (OOM)", "memory/validation/ms-02.yaml", 100.44, 0, DeepSpeed02("zero2"),
       false},
      {"MS-02, ZeRO-3", "memory/validation/ms-02.yaml", 45.68, 80.0 * kGiB, DeepSpeed02("zero3"),
       false},
  };
  return rows;
}

TEST(MemoryValidation, DocumentedPredictionsAreCurrent) {
  const MemoryConstants constants = testing::Constants();
  for (const Row& row : Rows()) {
    const std::string path = *row.job ? testing::TestPath(row.job) : kReferenceJobName;
    auto spec = LoadJobSpec(path, row.sets);
    ASSERT_TRUE(spec.ok()) << row.id << ": " << spec.error().Format();
    auto job = ResolveJob(*spec);
    ASSERT_TRUE(job.ok()) << row.id << ": " << job.error().Format();
    const MemoryLedger ledger = ComputeLedger(*job, constants);
    // The table rounds to 0.01 GB.
    EXPECT_NEAR(ledger.peak_after_step1.gb(), row.predicted_gb, 0.006) << row.id;
  }
}

// The bands `strata memory` prints (data/memory_overheads.yaml, model_error) are DeriveErrorBand
// over each family's rows as configured (default: every such row) and the fit set of the corpus
// of published peaks (its rows by the band their job is printed with, MemoryFamily), to 0.0005.
// The corpus's held-out rows never enter a band, nor do its bounds (`figure: bound`: the job fit
// in the published number, which is not a measured peak). docs/memory-validation.md's table of
// the bands is rendered here from the same rows, so its figures cannot drift from the data file
// (they did: the table and the README quoted a band of 0.919 to 1.664 after the data had moved
// to 0.912 to 1.465).
constexpr const char* kDoc = "../docs/memory-validation.md";
constexpr const char* kBandTableBegin = "| family | jobs | rows | lowest error | highest error |";
constexpr const char* kBandTableEnd = "<!-- end of the generated band table -->";

// What trains in each family, in words (MemoryFamily, memory/error_band.h), in the table's order.
const std::vector<std::pair<std::string, std::string>>& FamilyJobs() {
  static const std::vector<std::pair<std::string, std::string>> jobs = {
      {"megatron",
       "whatever trains through megatron-core's code (data/frameworks.yaml, runs_as: "
       "megatron-core, megatron-bridge, ms-swift and verl under zero1)"},
      {"fsdp2", "sharding fsdp2 (any framework), torchtitan"},
      {"hf_trainer",
       "the HF Trainer's code without a ZeRO stage (the HF Trainer, verl, ms-swift without "
       "sharding)"},
      {"deepspeed", "ZeRO-2/3 (any framework), or DeepSpeed's code with any sharding"},
      {"default", "anything else"},
  };
  return jobs;
}

std::string SignedPct(double e) { return fmt::format("{:+.1f}%", 100.0 * e); }

// One line of the table: the family's rows, its extreme rows and the band as `strata memory`
// prints it (measured / predicted from 1 / (1 + highest) to 1 / (1 + lowest), 3 decimals).
std::string BandTableLine(const std::string& family, const std::string& jobs,
                          const std::vector<ValidationPoint>& points, size_t corpus_rows) {
  const auto [low, high] = std::minmax_element(
      points.begin(), points.end(),
      [](const ValidationPoint& a, const ValidationPoint& b) { return RowError(a) < RowError(b); });
  return fmt::format(
      "| {} | {} | {} ({} of the table above, {} of the corpus's fit set) | {} ({}) "
      "| {} ({}) | {:.3f} to {:.3f} |\n",
      family, jobs, points.size(), points.size() - corpus_rows, corpus_rows,
      SignedPct(RowError(*low)), low->row, SignedPct(RowError(*high)), high->row,
      1.0 / (1.0 + RowError(*high)), 1.0 / (1.0 + RowError(*low)));
}

TEST(MemoryValidation, TheErrorBandsAreTheTablesErrors) {
  const MemoryConstants constants = testing::Constants();
  const corpus::Corpus published = corpus::Evaluate();
  std::string table =
      std::string(kBandTableBegin) + " measured / predicted |\n|---|---|---|---|---|---|\n";
  for (const auto& [family, jobs] : FamilyJobs()) {
    ASSERT_EQ(constants.error_bands.count(family), 1u) << family;
    const MemoryErrorBand& band = constants.error_bands.at(family);
    std::vector<ValidationPoint> points;
    for (const Row& row : Rows()) {
      if (!row.in_band || (family != "default" && family != row.family)) continue;
      points.push_back({row.id, row.predicted_gb, row.measured_gb});
    }
    size_t corpus_rows = 0;
    for (const corpus::Outcome& o : published.rows) {
      if (o.split != "fit" || o.bound || (family != "default" && family != o.memory_family)) {
        continue;
      }
      points.push_back({o.id, o.predicted, o.measured});
      ++corpus_rows;
    }
    const MemoryErrorBand derived = DeriveErrorBand(family, points);
    std::cout << fmt::format("{}: lowest {:.4f} highest {:.4f} rows [{}]\n", family, derived.lowest,
                             derived.highest, fmt::join(derived.rows, ", "));
    EXPECT_EQ(band.rows, derived.rows) << family;
    if (points.empty()) continue;  // no rows of its own: the default band applies
    EXPECT_NEAR(band.lowest, derived.lowest, 0.0005) << family;
    EXPECT_NEAR(band.highest, derived.highest, 0.0005) << family;
    table += BandTableLine(family, jobs, points, corpus_rows);
  }
  EXPECT_EQ(FamilyJobs().size(), constants.error_bands.size()) << "a family has no line";
  table += "\n" + std::string(kBandTableEnd) + "\n";
  const std::optional<std::string> doc = testing::WithSectionReplaced(
      testing::ReadTestFile(kDoc), kBandTableBegin, kBandTableEnd, table);
  ASSERT_TRUE(doc) << kDoc << " has no band table (\"" << kBandTableBegin
                   << "\") with its end mark";
  EXPECT_TRUE(testing::MatchesGolden(kDoc, *doc));
}

// The README's "How far to trust a number" quotes the megatron band, the reference job's top of
// it and the row that sets it: all from the data file and the ledger, so they cannot drift.
TEST(MemoryValidation, TheReadmeQuotesTheCurrentBand) {
  const MemoryConstants constants = testing::Constants();
  const MemoryErrorBand& band = constants.error_bands.at("megatron");
  const MemoryLedger reference = ComputeLedger(testing::ReferenceJob(), constants);
  ASSERT_EQ(reference.band_family, "megatron");
  // The lowest error's row: the one whose (predicted - measured) / measured is the band's lowest.
  std::string lowest_row;
  double lowest_error = 0;  // the row's own error (the data file keeps 4 decimals of it)
  auto consider = [&](const ValidationPoint& p) {
    if (std::abs(RowError(p) - band.lowest) < 0.0005) {
      lowest_row = p.row;
      lowest_error = RowError(p);
    }
  };
  for (const Row& row : Rows()) {
    if (row.in_band && row.family == std::string("megatron")) {
      consider({row.id, row.predicted_gb, row.measured_gb});
    }
  }
  for (const corpus::Outcome& o : corpus::Evaluate().rows) {
    if (o.split == "fit" && !o.bound && o.memory_family == "megatron") {
      consider({o.id, o.predicted, o.measured});
    }
  }
  ASSERT_FALSE(lowest_row.empty());
  const std::string readme = testing::ReadTestFile("../README.md");
  for (const std::string& quote :
       {fmt::format("(megatron: measured / predicted {:.3f} to {:.3f},", 1 / (1 + band.highest),
                    1 / (1 + band.lowest)),
        fmt::format("its band's top, {:.2f} GB, is set by", reference.band_high.gb()),
        fmt::format("({}) predicted {:.1f}% low", lowest_row, -100 * lowest_error)}) {
    EXPECT_NE(readme.find(quote), std::string::npos) << "README.md should say: " << quote;
  }
}

// The counters the H200 rows measured besides device used: the table's predictions of
// max_memory_allocated and max_memory_reserved are the ledger's.
TEST(MemoryValidation, DocumentedCountersAreCurrent) {
  const MemoryConstants constants = testing::Constants();
  for (const CounterRow& row : CounterRows()) {
    auto spec = LoadJobSpec(testing::TestPath(row.job));
    ASSERT_TRUE(spec.ok()) << row.id << ": " << spec.error().Format();
    auto job = ResolveJob(*spec);
    ASSERT_TRUE(job.ok()) << row.id << ": " << job.error().Format();
    const MemoryLedger ledger = ComputeLedger(*job, constants);
    EXPECT_NEAR(ledger.peak_counters.allocated.gb(), row.predicted_allocated_gb, 0.006) << row.id;
    EXPECT_NEAR(ledger.peak_counters.reserved.gb(), row.predicted_reserved_gb, 0.006) << row.id;
  }
}

TEST(MemoryValidation, UnevenPipelineSplitNeedsStageCounts) {
  // An odd layer count at PP 2 without first/last stage counts is still refused, not guessed.
  // DeepSeek-V3 has 61 layers.
  auto spec =
      LoadJobSpec(kReferenceJobName, {"model=deepseek-v3", "parallel.pp=2", "parallel.ep=4"});
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  auto job = ResolveJob(*spec);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().field, "parallel.pp");
  EXPECT_NE(job.error().hint.find("last_stage_layers"), std::string::npos);
}

}  // namespace
}  // namespace strata::validation_test

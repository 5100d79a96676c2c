// The corpus of published memory peaks (tests/memory/corpus/corpus.yaml), loaded and run through
// the ledger: for the corpus's own test and for the error bands the validation test derives from
// its fit rows.
#ifndef STRATA_TESTS_MEMORY_CORPUS_SUPPORT_H_
#define STRATA_TESTS_MEMORY_CORPUS_SUPPORT_H_

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "strata/memory/error_band.h"
#include "support/golden.h"

namespace strata::corpus {

constexpr const char* kCorpusFile = "memory/corpus/corpus.yaml";

struct Outcome {
  std::string id, family, release, split, counter, unit, layout, source;
  double measured = 0;        // in `unit`
  double predicted = 0;       // in `unit`
  double error = 0;           // (predicted - measured) / measured
  std::string memory_family;  // the error band the job's prediction is printed with (MemoryFamily)
  /// `figure: bound` (corpus.yaml's header): the published number says the job fits, it is not
  /// a counter's reading; checked as predicted <= measured, kept out of every error statistic.
  bool bound = false;
  std::string bound_reason;
  double card_gb = 0;  // the advertised memory of the card the row's job runs on, decimal GB
  /// `upper_bound:` (corpus.yaml's header): why the prediction is itself an upper bound (every
  /// sample sized at sequence.max_tokens where the run's samples were shorter); empty if not.
  std::string upper_bound;
  /// For a bound row whose upper-bound prediction exceeds the bound: the largest
  /// sequence.max_tokens at which the prediction stays within it (0 when not computed).
  int64_t holds_up_to_tokens = 0;
};

struct LeftOut {
  std::string id, family, measured, missing, source;
};

struct Corpus {
  std::vector<Outcome> rows;
  std::vector<LeftOut> left_out;
};

inline std::string Source(const YAML::Node& s) {
  return fmt::format("{}@{}:{}", s["repo"].as<std::string>(),
                     s["commit"].as<std::string>().substr(0, 7), s["path"].as<std::string>());
}

inline std::string Str(const YAML::Node& n, const char* key, const std::string& fallback = "") {
  return n[key] ? n[key].as<std::string>() : fallback;
}

// "Llama-3.1-8B, 8 GPUs, TP1 PP1 CP1, mbs 2 x 8192, selective, fsdp2"
inline std::string Layout(const YAML::Node& job) {
  std::string model = job["model"].as<std::string>();
  const auto slash = model.rfind('/');
  if (slash != std::string::npos) model = model.substr(slash + 1);
  if (model.size() > 5 && model.substr(model.size() - 5) == ".json") {
    model = model.substr(0, model.size() - 5);
  }
  const YAML::Node c = job["cluster"], p = job["parallel"], b = job["batch"];
  const int64_t gpus = c["gpus_per_node"].as<int64_t>() * c["nodes"].as<int64_t>();
  std::string par;
  for (const char* k : {"tp", "pp", "cp", "ep"}) {
    const int64_t v = p[k] ? p[k].as<int64_t>() : 1;
    if (v > 1) par += fmt::format(" {}{}", k, v);
  }
  if (p["vpp"]) par += fmt::format(" vpp{}", p["vpp"].as<int64_t>());
  std::string extra;
  const YAML::Node sh = job["sharding"];
  extra += sh && sh["mode"] ? sh["mode"].as<std::string>() : "zero1";
  if (job["adapter"]) extra += ", " + job["adapter"]["kind"].as<std::string>();
  if (job["fp8"]) extra += ", " + job["fp8"]["recipe"].as<std::string>();
  if (job["optimizer"] && job["optimizer"]["name"] &&
      job["optimizer"]["name"].as<std::string>() == "muon") {
    extra += ", muon";
  }
  return fmt::format("{}, {} GPUs{}, mbs {} x {} tokens, {} recompute, {}", model, gpus, par,
                     b["micro_batch"].as<int64_t>(),
                     job["sequence"]["max_tokens"].as<std::string>(),
                     job["recompute"]["granularity"].as<std::string>(), extra);
}

// The job of one corpus row, resolved as every view resolves a job (model paths relative to the
// corpus file); fails the current test, naming the row, when it does not parse or resolve.
inline std::optional<ResolvedJob> ResolveRowJob(const YAML::Node& row, const std::string& file) {
  const std::string id = row["id"].as<std::string>();
  YAML::Emitter emitter;
  emitter << row["job"];
  auto spec = ParseJobSpec(emitter.c_str(), file);
  EXPECT_TRUE(spec.ok()) << id << ": " << (spec.ok() ? "" : spec.error().Format());
  if (!spec.ok()) return std::nullopt;
  auto job = ResolveJob(*spec);
  EXPECT_TRUE(job.ok()) << id << ": " << (job.ok() ? "" : job.error().Format());
  if (!job.ok()) return std::nullopt;
  return *std::move(job);
}

// The row's prediction of its counter, in its unit, with every sample sized at `tokens`.
inline double PredictedAt(const YAML::Node& row, const std::string& file, int64_t tokens,
                          const MemoryConstants& constants) {
  YAML::Node copy = YAML::Clone(row);
  copy["job"]["sequence"]["max_tokens"] = tokens;
  const std::optional<ResolvedJob> job = ResolveRowJob(copy, file);
  if (!job) return 0;
  const auto predicted =
      testing::PredictForCounter(ComputeLedger(*job, constants), row["counter"].as<std::string>());
  if (!predicted) return 0;
  return row["measured"]["unit"].as<std::string>() == "GiB" ? predicted->gib() : predicted->gb();
}

// The largest sequence.max_tokens (below the row's own) at which the prediction stays within
// `bound`: a bisection, since the ledger grows with the tokens of a micro batch. 0 when even one
// token a sample exceeds it.
inline int64_t LongestSampleWithin(const YAML::Node& row, const std::string& file, double bound,
                                   const MemoryConstants& constants) {
  int64_t lo = 0, hi = row["job"]["sequence"]["max_tokens"].as<int64_t>();  // lo fits, hi not
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (PredictedAt(row, file, mid, constants) <= bound ? lo : hi) = mid;
  }
  return lo;
}

// Loads and evaluates every row; fails the current test on a row that does not parse.
inline Corpus Evaluate() {
  Corpus corpus;
  const MemoryConstants constants = testing::Constants();
  const std::string file = testing::TestPath(kCorpusFile);
  const YAML::Node top = YAML::Load(testing::ReadTestFile(kCorpusFile));
  for (const YAML::Node& row : top["rows"]) {
    const std::string id = row["id"].as<std::string>();
    const YAML::Node m = row["measured"];
    const std::string unit = m["unit"].as<std::string>();
    EXPECT_TRUE(unit == "GiB" || unit == "GB") << id << ": unit " << unit;
    if (row["expressible"] && !row["expressible"].as<bool>()) {
      EXPECT_TRUE(row["missing"]) << id << ": a row left out says what is missing";
      corpus.left_out.push_back({id, row["family"].as<std::string>(),
                                 fmt::format("{} {}", m["value"].as<double>(), unit),
                                 Str(row, "missing"), Source(row["source"])});
      continue;
    }
    const std::string figure = Str(row, "figure");
    EXPECT_TRUE(figure == "measured" || figure == "bound")
        << id << ": figure must be 'measured' or 'bound', not '" << figure << "'";
    EXPECT_EQ(figure == "bound", static_cast<bool>(row["bound"]))
        << id << ": a bound row says why in `bound:`, a measured row has no `bound:`";
    const std::optional<ResolvedJob> job = ResolveRowJob(row, file);
    if (!job) continue;
    const MemoryLedger ledger = ComputeLedger(*job, constants);
    const std::string counter = row["counter"].as<std::string>();
    const auto predicted = testing::PredictForCounter(ledger, counter);
    EXPECT_TRUE(predicted.has_value()) << id << ": unknown counter " << counter;
    if (!predicted) continue;
    Outcome o;
    o.id = id;
    o.family = row["family"].as<std::string>();
    // The release up to its date or its first comma ("torchtitan 9dec370"); the full text is
    // in the corpus.
    const std::string release = row["release"].as<std::string>();
    o.release = release.substr(0, std::min(release.find(" ("), release.find(',')));
    o.split = row["split"].as<std::string>();
    o.counter = counter;
    o.unit = unit;
    o.layout = Layout(row["job"]);
    o.source = Source(row["source"]);
    o.measured = m["value"].as<double>();
    o.predicted = unit == "GiB" ? predicted->gib() : predicted->gb();
    o.error = (o.predicted - o.measured) / o.measured;
    o.memory_family = MemoryFamily(job->spec, constants.engines);
    o.bound = figure == "bound";
    o.bound_reason = Str(row, "bound");
    o.card_gb = job->gpu().memory.gb();
    o.upper_bound = Str(row, "upper_bound");
    if (o.bound && !o.upper_bound.empty() && o.predicted > o.measured) {
      o.holds_up_to_tokens = LongestSampleWithin(row, file, o.measured, constants);
    }
    corpus.rows.push_back(o);
  }
  return corpus;
}

}  // namespace strata::corpus

#endif  // STRATA_TESTS_MEMORY_CORPUS_SUPPORT_H_

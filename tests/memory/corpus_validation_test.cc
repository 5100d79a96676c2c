// The corpus of published memory peaks (tests/memory/corpus/corpus.yaml) run through the ledger:
// every row's job is built (a row that does not parse fails the test), the prediction for the
// counter the row reports is compared with the measurement, and the section "Corpus of published
// peaks" of docs/memory-validation.md is what this test generates (tables, median, p90 and max
// |error| per split and per family), so the figures there cannot go stale; UPDATE_GOLDEN=1
// rewrites the section. The errors are reported as they are: nothing here asserts a target.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "memory/memory_test_support.h"
#include "support/golden.h"

namespace strata {
namespace {

constexpr const char* kCorpus = "memory/corpus/corpus.yaml";
constexpr const char* kDoc = "../docs/memory-validation.md";
constexpr const char* kSectionTitle = "## Corpus of published peaks";
constexpr const char* kSectionEnd = "<!-- end of the generated corpus section -->";

// FNV-1a 64 over the id's bytes: the split rule written at the top of corpus.yaml.
uint64_t Fnv1a64(const std::string& s) {
  uint64_t h = 14695981039346656037ULL;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

struct Outcome {
  std::string id, family, release, split, counter, unit, layout, source;
  double measured = 0;   // in `unit`
  double predicted = 0;  // in `unit`
  double error = 0;      // (predicted - measured) / measured
};

struct LeftOut {
  std::string id, family, measured, missing, source;
};

struct Corpus {
  std::vector<Outcome> rows;
  std::vector<LeftOut> left_out;
};

std::string Source(const YAML::Node& s) {
  return fmt::format("{}@{}:{}", s["repo"].as<std::string>(),
                     s["commit"].as<std::string>().substr(0, 7), s["path"].as<std::string>());
}

std::string Str(const YAML::Node& n, const char* key, const std::string& fallback = "") {
  return n[key] ? n[key].as<std::string>() : fallback;
}

// "Llama-3.1-8B, 8 GPUs, TP1 PP1 CP1, mbs 2 x 8192, selective, fsdp2"
std::string Layout(const YAML::Node& job) {
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

// Loads and evaluates every row; fails the current test on a row that does not parse.
Corpus Evaluate() {
  Corpus corpus;
  const MemoryConstants constants = testing::Constants();
  const std::string file = testing::TestPath(kCorpus);
  const YAML::Node top = YAML::Load(testing::ReadTestFile(kCorpus));
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
    YAML::Emitter emitter;
    emitter << row["job"];
    auto spec = ParseJobSpec(emitter.c_str(), file);
    EXPECT_TRUE(spec.ok()) << id << ": " << (spec.ok() ? "" : spec.error().Format());
    if (!spec.ok()) continue;
    auto job = ResolveJob(*spec);
    EXPECT_TRUE(job.ok()) << id << ": " << (job.ok() ? "" : job.error().Format());
    if (!job.ok()) continue;
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
    corpus.rows.push_back(o);
  }
  return corpus;
}

struct Stats {
  size_t n = 0;
  double median = 0, p90 = 0, max = 0, signed_median = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// p90: the nearest rank, the ceil(0.9 n)-th smallest |error|.
Stats StatsOf(const std::vector<const Outcome*>& rows) {
  Stats s;
  s.n = rows.size();
  if (rows.empty()) return s;
  std::vector<double> abs, sgn;
  for (const Outcome* o : rows) {
    abs.push_back(std::fabs(o->error));
    sgn.push_back(o->error);
  }
  s.median = Median(abs);
  s.signed_median = Median(sgn);
  std::sort(abs.begin(), abs.end());
  s.p90 = abs[static_cast<size_t>(std::ceil(0.9 * static_cast<double>(s.n))) - 1];
  s.max = abs.back();
  return s;
}

std::string Pct(double x) { return fmt::format("{:+.1f}%", 100 * x); }
std::string Abs(double x) { return fmt::format("{:.1f}%", 100 * x); }

std::string StatsRow(const std::string& label, const std::vector<const Outcome*>& rows) {
  const Stats s = StatsOf(rows);
  if (s.n == 0) return fmt::format("| {} | 0 | - | - | - | - |\n", label);
  return fmt::format("| {} | {} | {} | {} | {} | {} |\n", label, s.n, Abs(s.median), Abs(s.p90),
                     Abs(s.max), Pct(s.signed_median));
}

std::string Table(const std::vector<Outcome>& rows, const std::string& split) {
  std::string t =
      "| row | family | release | job | counter | measured | predicted | error | source |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const Outcome& o : rows) {
    if (o.split != split) continue;
    t += fmt::format("| {} | {} | {} | {} | {} | {:.2f} {} | {:.2f} {} | {} | {} |\n", o.id,
                     o.family, o.release, o.layout, o.counter, o.measured, o.unit, o.predicted,
                     o.unit, Pct(o.error), o.source);
  }
  return t;
}

std::string Render(const Corpus& c) {
  std::map<std::string, int> per_family;
  for (const Outcome& o : c.rows) ++per_family[o.family];
  std::string families;
  for (const auto& [f, n] : per_family) {
    families += fmt::format("{}{} {}", families.empty() ? "" : ", ", f, n);
  }
  std::string d = std::string(kSectionTitle) + "\n\n";
  d += "<!-- generated by tests/memory/corpus_validation_test.cc from "
       "tests/memory/corpus/corpus.yaml; UPDATE_GOLDEN=1 rewrites it -->\n\n";
  d += fmt::format(
      "{} published per-GPU peaks from outside the project, each expressed as a job "
      "(`tests/memory/corpus/corpus.yaml`: source with repository, commit, path and the quoted "
      "text; the counter; the assumptions where the source is silent), and {} more that a job "
      "cannot express yet (listed at the end, not counted). By family: {}.\n\n",
      c.rows.size(), c.left_out.size(), families);
  d += "**The split** was fixed and committed before any prediction was compared: within each "
       "family and revision (1 for the rows of the first commit; rows added later carry the next "
       "one), the rows sorted by FNV-1a 64 of the row id, alternately fit and held out "
       "(starting with fit), so that adding rows moves no compared row between the sets. The rule "
       "reads no error; the test recomputes it. The fit set is what a later calibration may read; "
       "the held-out set is only reported.\n\n";
  d += "**The prediction** is the ledger's steady peak (`MemoryLedger::Peak()`) less what the "
       "row's counter does not see (`PredictForCounter`, tests/memory/memory_test_support.h): "
       "`max_memory_reserved` without the CUDA context and NCCL's buffers, "
       "`max_memory_allocated` also without the allocator's reserve, `nvidia_smi` and `unknown` "
       "the whole peak. Error = (predicted - measured) / measured, in the unit the source "
       "writes (GiB = 2^30 bytes, GB = 10^9 bytes). Nothing was tuned to these rows.\n\n";
  d += "### |error| per split and per family\n\n";
  d += "| set | rows | median \\|error\\| | p90 \\|error\\| | max \\|error\\| | median error |\n"
       "|---|---|---|---|---|---|\n";
  auto select = [&](const std::string& split, const std::string& family) {
    std::vector<const Outcome*> v;
    for (const Outcome& o : c.rows) {
      if ((split.empty() || o.split == split) && (family.empty() || o.family == family)) {
        v.push_back(&o);
      }
    }
    return v;
  };
  d += StatsRow("fit", select("fit", ""));
  d += StatsRow("held out", select("held_out", ""));
  d += StatsRow("all", select("", ""));
  for (const auto& [f, n] : per_family) {
    d += StatsRow(f + ", fit", select("fit", f));
    d += StatsRow(f + ", held out", select("held_out", f));
  }
  d += "\n### Fit set\n\n" + Table(c.rows, "fit");
  d += "\n### Held-out set\n\n" + Table(c.rows, "held_out");
  d += "\n### Rows the job cannot express yet\n\n"
       "| row | family | measured | what is missing | source |\n|---|---|---|---|---|\n";
  for (const LeftOut& l : c.left_out) {
    d += fmt::format("| {} | {} | {} | {} | {} |\n", l.id, l.family, l.measured, l.missing,
                     l.source);
  }
  d += "\n" + std::string(kSectionEnd) + "\n";
  return d;
}

TEST(MemoryCorpus, SplitFollowsTheDocumentedRule) {
  const YAML::Node top = YAML::Load(testing::ReadTestFile(kCorpus));
  // (family, revision) -> (hash, id) of its rows
  std::map<std::pair<std::string, int>, std::vector<std::pair<uint64_t, std::string>>> groups;
  std::map<std::string, std::string> split;
  for (const YAML::Node& row : top["rows"]) {
    const std::string id = row["id"].as<std::string>();
    ASSERT_EQ(split.count(id), 0u) << "duplicate id " << id;
    ASSERT_TRUE(row["revision"]) << id << ": every row names its revision";
    groups[{row["family"].as<std::string>(), row["revision"].as<int>()}].push_back(
        {Fnv1a64(id), id});
    split[id] = row["split"].as<std::string>();
  }
  for (auto& [group, rows] : groups) {
    std::sort(rows.begin(), rows.end());
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(split[rows[i].second], i % 2 == 0 ? "fit" : "held_out") << rows[i].second;
    }
  }
}

TEST(MemoryCorpus, Fnv1aIsTheStandardOne) {
  // The published FNV-1a 64 test vectors (Fowler, Noll, Vo): "" and "a".
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}

TEST(MemoryCorpus, AtLeastFortyExpressibleRowsInEveryFamilyBothSets) {
  const Corpus c = Evaluate();
  EXPECT_GE(c.rows.size(), 40u);
  std::map<std::string, std::map<std::string, int>> n;
  for (const Outcome& o : c.rows) ++n[o.family][o.split];
  for (const char* f : {"torchtitan", "megatron", "deepspeed", "ms_swift"}) {
    EXPECT_GT(n[f]["fit"], 0) << f;
    EXPECT_GT(n[f]["held_out"], 0) << f;
  }
}

TEST(MemoryCorpus, PredictForCounterTakesOutWhatTheCounterDoesNotSee) {
  // The reference job's ledger: reserved = peak - CUDA context - NCCL buffers; allocated also
  // without the allocator's reserve; device-level counters the whole peak.
  const MemoryLedger ledger = ComputeLedger(testing::ReferenceJob(), testing::Constants());
  const double peak = ledger.Peak().count();
  const double context = testing::ItemBytes(ledger, "CUDA context").count();
  const double nccl = testing::ItemBytes(ledger, "NCCL buffers").count();
  const double reserve = testing::ItemBytes(ledger, "allocator reserve and fragmentation").count();
  EXPECT_GT(context, 0);
  EXPECT_GT(reserve, 0);
  EXPECT_DOUBLE_EQ(testing::PredictForCounter(ledger, "nvidia_smi")->count(), peak);
  EXPECT_DOUBLE_EQ(testing::PredictForCounter(ledger, "unknown")->count(), peak);
  EXPECT_DOUBLE_EQ(testing::PredictForCounter(ledger, "max_memory_reserved")->count(),
                   peak - context - nccl);
  EXPECT_DOUBLE_EQ(testing::PredictForCounter(ledger, "max_memory_allocated")->count(),
                   peak - context - nccl - reserve);
  EXPECT_FALSE(testing::PredictForCounter(ledger, "rss").has_value());
}

TEST(MemoryCorpus, DocumentedErrorsAreCurrent) {
  const Corpus corpus = Evaluate();
  ASSERT_FALSE(corpus.rows.empty());
  std::cout << "id | family | split | measured | predicted | error\n";
  for (const Outcome& o : corpus.rows) {
    std::cout << fmt::format("{} | {} | {} | {:.2f} {} | {:.2f} {} | {}\n", o.id, o.family, o.split,
                             o.measured, o.unit, o.predicted, o.unit, Pct(o.error));
  }
  const std::string section = Render(corpus);
  const std::string doc = testing::ReadTestFile(kDoc);
  std::string expected;
  const auto begin = doc.find(kSectionTitle);
  if (begin == std::string::npos) {
    expected = doc + "\n" + section;
  } else {
    const auto end = doc.find(kSectionEnd, begin);
    ASSERT_NE(end, std::string::npos) << "the corpus section has no end mark";
    const auto after = doc.find('\n', end);
    expected =
        doc.substr(0, begin) + section + (after == std::string::npos ? "" : doc.substr(after + 1));
  }
  EXPECT_TRUE(testing::MatchesGolden(kDoc, expected));

  // The README's "How far to trust a number" quotes the rows and both medians.
  std::vector<const Outcome*> fit, held_out;
  for (const Outcome& o : corpus.rows) (o.split == "fit" ? fit : held_out).push_back(&o);
  const std::string quote = fmt::format(
      "On {} published peaks from outside the project (torchtitan FSDP2 in five releases, "
      "Megatron-SWIFT, DeepSpeed ZeRO-2/3, HF Trainer; section \"Corpus of published peaks\"): "
      "median \\|error\\| {} (fit) and {} (held out)",
      corpus.rows.size(), Abs(StatsOf(fit).median), Abs(StatsOf(held_out).median));
  EXPECT_NE(testing::ReadTestFile("../README.md").find(quote), std::string::npos)
      << "README.md should say: " << quote;
}

}  // namespace
}  // namespace strata

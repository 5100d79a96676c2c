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
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "memory/corpus_support.h"
#include "memory/memory_test_support.h"
#include "support/doc_section.h"
#include "support/error_stats.h"
#include "support/golden.h"
#include "support/split_rule.h"

namespace strata::corpus_validation_test {
namespace {

using corpus::Corpus;
using corpus::Evaluate;
using corpus::LeftOut;
using corpus::Outcome;

constexpr const char* kCorpus = corpus::kCorpusFile;
constexpr const char* kDoc = "../docs/memory-validation.md";
constexpr const char* kSectionTitle = "## Corpus of published peaks";
constexpr const char* kSectionEnd = "<!-- end of the generated corpus section -->";

using testing::Fnv1a64;  // the split rule written at the top of corpus.yaml

struct Stats {
  size_t n = 0;
  double median = 0, p90 = 0, max = 0, signed_median = 0;
};

// p90: the nearest rank, the ceil(0.9 n)-th smallest |error|.
Stats StatsOf(const std::vector<const Outcome*>& rows) {
  std::vector<double> errors;
  for (const Outcome* o : rows) errors.push_back(o->error);
  const testing::ErrorSummary e = testing::SummarizeErrors(errors);
  return {e.n, e.median, e.p90, e.max, e.signed_median};
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
    if (o.split != split || o.bound) continue;
    t += fmt::format("| {} | {} | {} | {} | {} | {:.2f} {} | {:.2f} {} | {} | {} |\n", o.id,
                     o.family, o.release, o.layout, o.counter, o.measured, o.unit, o.predicted,
                     o.unit, Pct(o.error), o.source);
  }
  return t;
}

// The rows whose published figure is a bound (the job fit in it): checked as predicted <= bound.
// Whether the prediction stays within a bound row's figure. Both being upper bounds, a prediction
// sized at the longest sample that exceeds the bound decides nothing: say up to which sample
// length it holds.
std::string BoundVerdict(const Outcome& o) {
  if (o.predicted <= o.measured) return "yes";
  if (o.upper_bound.empty()) return "**no**";
  return fmt::format(
      "undecided: the prediction is an upper bound too ({}); it holds while the samples average "
      "at most {} tokens",
      o.upper_bound, o.holds_up_to_tokens);
}

std::string BoundTable(const std::vector<Outcome>& rows) {
  std::string t =
      "| row | family | set | job | bound | predicted | predicted <= bound | why a bound | "
      "source |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const Outcome& o : rows) {
    if (!o.bound) continue;
    t += fmt::format("| {} | {} | {} | {} | {:.2f} {} | {:.2f} {} | {} | {} | {} |\n", o.id,
                     o.family, o.split == "fit" ? "fit" : "held out", o.layout, o.measured, o.unit,
                     o.predicted, o.unit, BoundVerdict(o), o.bound_reason, o.source);
  }
  return t;
}

std::vector<const Outcome*> Measured(const std::vector<Outcome>& rows) {
  std::vector<const Outcome*> v;
  for (const Outcome& o : rows) {
    if (!o.bound) v.push_back(&o);
  }
  return v;
}

// Per band: how many held-out measured rows its jobs are printed with, and how many of their
// measurements lie inside the band (between prediction / (1 + highest) and / (1 + lowest)).
std::map<std::string, std::pair<int, int>> HeldOutInsideBands(const Corpus& c,
                                                              const MemoryConstants& constants) {
  std::map<std::string, std::pair<int, int>> inside;  // band -> (rows, inside)
  for (const Outcome& o : c.rows) {
    if (o.split != "held_out" || o.bound) continue;
    const MemoryErrorBand& band = BandFor(constants, o.memory_family);
    const bool in = o.measured >= o.predicted / (1 + band.highest) - 1e-9 &&
                    o.measured <= o.predicted / (1 + band.lowest) + 1e-9;
    auto& [rows, ins] = inside[band.family];
    ++rows;
    ins += in ? 1 : 0;
  }
  return inside;
}

std::string Render(const Corpus& c) {
  std::map<std::string, int> per_family;
  size_t bounds = 0;
  for (const Outcome& o : c.rows) {
    if (o.bound) {
      ++bounds;
    } else {
      ++per_family[o.family];
    }
  }
  std::string families;
  for (const auto& [f, n] : per_family) {
    families += fmt::format("{}{} {}", families.empty() ? "" : ", ", f, n);
  }
  std::string d = std::string(kSectionTitle) + "\n\n";
  d += "<!-- generated by tests/memory/corpus_validation_test.cc from "
       "tests/memory/corpus/corpus.yaml; UPDATE_GOLDEN=1 rewrites it -->\n\n";
  d += fmt::format(
      "{} published per-GPU figures from outside the project, each expressed as a job "
      "(`tests/memory/corpus/corpus.yaml`: source with repository, commit, path and the quoted "
      "text; the counter; the assumptions where the source is silent), and {} more that a job "
      "cannot express yet (listed at the end, not counted). Of the {}, {} are measured peaks "
      "(by family: {}) and {} are bounds, statements that the job fits (below).\n\n",
      c.rows.size(), c.left_out.size(), c.rows.size(), c.rows.size() - bounds, families, bounds);
  d += "**The split** was fixed and committed before any prediction was compared: within each "
       "family and revision (1 for the rows of the first commit; rows added later carry the next "
       "one), the rows sorted by FNV-1a 64 of the row id, alternately fit and held out "
       "(starting with fit), so that adding rows moves no compared row between the sets. The rule "
       "reads no error; the test recomputes it. The fit set is what a later calibration may read; "
       "the held-out set is only reported.\n\n";
  d += "**Measured or bound** was decided from each row's source alone, never from its error, by "
       "one rule for every row, fit and held out (corpus.yaml's header, field `figure`): a "
       "published figure is a *bound* when the source says in words that the job fits in it "
       "(\"fits on\", \"<\", \"under\", \"up to\", \"at most\"), or when the number is the "
       "advertised memory size of the card the row runs on, as the source names it or the row "
       "assumes it (\"4 * 80GiB\" on an 80 GB-class card: a caching allocator that may grow to "
       "the card reports the card, so the number says the job fit, not what it needed). Every "
       "other figure is *measured*. A bound row is checked as predicted <= bound in its own table "
       "and enters no median, p90, max or band; the test checks that every row whose number is "
       "its card's size is marked a bound.\n\n";
  d += "**The prediction** is the allocator model's counter at the ledger's peak "
       "(`MemoryLedger::peak_counters`, docs/formulas.md, \"Memory counters\"; mapped by "
       "`PredictForCounter`, tests/memory/memory_test_support.h): `max_memory_allocated` and "
       "`max_memory_reserved` as PyTorch counts them, `nvidia_smi` and `unknown` the device's "
       "used memory. Error = (predicted - measured) / measured, in the unit the source "
       "writes (GiB = 2^30 bytes, GB = 10^9 bytes). Nothing was tuned to these rows.\n\n";
  d += "### |error| per split and per family\n\n";
  d += "| set | rows | median \\|error\\| | p90 \\|error\\| | max \\|error\\| | median error |\n"
       "|---|---|---|---|---|---|\n";
  auto select = [&](const std::string& split, const std::string& family) {
    std::vector<const Outcome*> v;
    for (const Outcome* p : Measured(c.rows)) {
      const Outcome& o = *p;
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
  // The bands `strata memory` prints come from the fit rows (and the project's own rows): how
  // often does a held-out measurement land inside the band its job is printed with?
  const MemoryConstants constants = testing::Constants();
  d += "\n### The error bands on the held-out set\n\n"
       "`strata memory` prints a band per family (`data/memory_overheads.yaml`, `model_error`: "
       "the extreme errors of the rows of docs/memory-validation.md and of this corpus's fit set, "
       "recomputed by tests/memory/validation_test.cc). A held-out row is inside its band when "
       "its measurement lies between prediction / (1 + highest) and prediction / (1 + lowest).\n\n"
       "| band | held-out rows | inside the band | band (measured / predicted) "
       "|\n|---|---|---|---|\n";
  for (const auto& [family, counts] : HeldOutInsideBands(c, constants)) {
    const MemoryErrorBand& band = BandFor(constants, family);
    d += fmt::format("| {} | {} | {} | {:.3f} to {:.3f} |\n", family, counts.first, counts.second,
                     1 / (1 + band.highest), 1 / (1 + band.lowest));
  }
  d += "\n### Fit set\n\n" + Table(c.rows, "fit");
  d += "\n### Held-out set\n\n" + Table(c.rows, "held_out");
  d += "\n### Bounds: the job fit in the published figure\n\n" + BoundTable(c.rows);
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
  // The issue asks for 40 published peaks: the bounds are not peaks.
  EXPECT_GE(Measured(c.rows).size(), 40u);
  std::map<std::string, std::map<std::string, int>> n;
  for (const Outcome* o : Measured(c.rows)) ++n[o->family][o->split];
  for (const char* f : {"torchtitan", "megatron", "deepspeed", "ms_swift"}) {
    EXPECT_GT(n[f]["fit"], 0) << f;
    EXPECT_GT(n[f]["held_out"], 0) << f;
  }
}

// The rule of corpus.yaml's header, part (b), applied to every expressible row: a published
// number equal to the advertised memory of the row's card (80 for an 80 GB card, whatever unit
// the source writes) is a bound: the job fit, so the ledger's prediction of the counter should
// not exceed it.
TEST(MemoryCorpus, FiguresAtTheCardsSizeAreBoundsAndOnlyTheKnownMissExceedsOne) {
  const Corpus c = Evaluate();
  int bounds = 0;
  std::set<std::string> exceeded, undecided;
  for (const Outcome& o : c.rows) {
    const double card = std::round(o.card_gb);
    if (std::abs(o.measured - card) < 1e-9) {
      EXPECT_TRUE(o.bound) << o.id << ": " << o.measured << " " << o.unit
                           << " is the card's advertised size: mark it `figure: bound`";
    }
    if (!o.bound) continue;
    ++bounds;
    EXPECT_FALSE(o.bound_reason.empty()) << o.id;
    if (o.predicted > o.measured) (o.upper_bound.empty() ? exceeded : undecided).insert(o.id);
  }
  // A bound the ledger exceeds is a miss of the model, reported in docs/memory-validation.md's
  // bounds table ("no"), never hidden by moving the row. None is exceeded today.
  // MSW-MEG-qwen2.5-7b-tp2-sft predicts 83.42 GiB against its 80 GiB, but its prediction is an
  // upper bound too: `megatron sft` flattens each micro batch's 16 samples unpadded
  // (padding_free, on by default: modelscope/ms-swift@3602360
  // swift/megatron/arguments/megatron_args.py:524) and the job sizes every sample at
  // --max_length 2048, so two upper bounds are compared and nothing is decided. By hand, at
  // 2,048 tokens the activations (logits 4.64 GiB, their fp32 softmax 9.28 GiB, layer inputs
  // 3.06 GiB, one layer's backward 3.53 GiB) are 20.5 GiB of the 83.42, all proportional to the
  // tokens, so the 3.42 GiB excess goes at about 2,048 x (1 - 3.42 / 20.5) = 1,706 tokens a sample.
  EXPECT_EQ(exceeded, std::set<std::string>{});
  EXPECT_EQ(undecided, std::set<std::string>{"MSW-MEG-qwen2.5-7b-tp2-sft"});
  for (const Outcome& o : c.rows) {
    if (undecided.count(o.id) == 0) continue;
    EXPECT_GT(o.holds_up_to_tokens, 1600) << o.id;
    EXPECT_LT(o.holds_up_to_tokens, 1800) << o.id;
  }
  // MSW-MEG-qwen3-32b-tp8, -qwen2.5-7b-tp2-sft, -qwen2.5-7b-pretrain-tp4, MSW-DS-qwen2.5-32b-zero3:
  // "80GiB" per GPU on the 80 GB-class card each assumes.
  EXPECT_EQ(bounds, 4);
}

TEST(MemoryCorpus, PredictForCounterReadsTheAllocatorModelsCounters) {
  // The reference job's ledger: nvidia-smi (and an unnamed counter) is device used, which is
  // reserved plus what PyTorch's allocator never sees (the CUDA context and NCCL's buffers, two
  // ledger items); reserved holds the allocated tensors and the allocator's cache.
  const MemoryLedger ledger = ComputeLedger(testing::ReferenceJob(), testing::Constants());
  const AllocatorCounters& c = ledger.peak_counters;
  const double context = testing::ItemBytes(ledger, "CUDA context").count();
  const double nccl = testing::ItemBytes(ledger, "NCCL buffers").count();
  EXPECT_GT(context, 0);
  EXPECT_DOUBLE_EQ(testing::PredictForCounter(ledger, "nvidia_smi")->count(),
                   c.device_used.count());
  EXPECT_DOUBLE_EQ(testing::PredictForCounter(ledger, "unknown")->count(), c.device_used.count());
  EXPECT_DOUBLE_EQ(testing::PredictForCounter(ledger, "max_memory_reserved")->count(),
                   c.device_used.count() - context - nccl);
  EXPECT_DOUBLE_EQ(testing::PredictForCounter(ledger, "max_memory_allocated")->count(),
                   c.reserved.count() - c.fragmentation.count() - c.side_stream.count());
  EXPECT_LT(c.allocated.count(), c.reserved.count());
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
  const std::optional<std::string> expected = testing::WithSectionReplaced(
      testing::ReadTestFile(kDoc), kSectionTitle, kSectionEnd, section);
  ASSERT_TRUE(expected) << kDoc << " has no section \"" << kSectionTitle << "\" with its end mark";
  EXPECT_TRUE(testing::MatchesGolden(kDoc, *expected));

  // The README's "How far to trust a number" quotes the rows and both medians.
  std::vector<const Outcome*> fit, held_out;
  for (const Outcome* o : Measured(corpus.rows)) (o->split == "fit" ? fit : held_out).push_back(o);
  const std::string quote = fmt::format(
      "On {} published peaks from outside the project (torchtitan FSDP2 in five releases, "
      "Megatron-SWIFT, DeepSpeed ZeRO-2/3, HF Trainer; section \"Corpus of published peaks\"; "
      "{} more published figures are the card's size, bounds checked apart): "
      "median \\|error\\| {} (fit) and {} (held out)",
      fit.size() + held_out.size(), corpus.rows.size() - fit.size() - held_out.size(),
      Abs(StatsOf(fit).median), Abs(StatsOf(held_out).median));
  EXPECT_NE(testing::ReadTestFile("../README.md").find(quote), std::string::npos)
      << "README.md should say: " << quote;
  int held_out_rows = 0, held_out_inside = 0;
  for (const auto& [band, counts] : HeldOutInsideBands(corpus, testing::Constants())) {
    held_out_rows += counts.first;
    held_out_inside += counts.second;
  }
  const std::string inside_quote =
      fmt::format("{} of {} held-out peaks fall inside their band", held_out_inside, held_out_rows);
  EXPECT_NE(testing::ReadTestFile("../README.md").find(inside_quote), std::string::npos)
      << "README.md should say: " << inside_quote;
}

}  // namespace
}  // namespace strata::corpus_validation_test

// The README's RL figures come from docs/rl-validation.md's generated section (itself checked
// against the model by RlValidationDoc.PredictedRowsAreCurrent): the RL row of "How far to trust
// a number" and the validation sentence of "The reference RL job" are written here from that
// section's tables, so they cannot drift from it; UPDATE_GOLDEN=1 rewrites them in the README.
// (The section's `strata rl` output itself is checked by DocsExamples.)
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/doc_section.h"
#include "support/golden.h"

namespace strata::rl_readme_test {
namespace {

constexpr const char* kReadme = "../README.md";
constexpr const char* kDoc = "../docs/rl-validation.md";
constexpr const char* kSectionTitle = "## The predicted rows, as the model gives them today";
constexpr const char* kSectionEnd = "<!-- end of the generated predicted-rows section -->";
constexpr const char* kRowBegin = "| RL step (`rl`) |";
constexpr const char* kTrustBegin = "Against published runs (`docs/rl-validation.md`), ";

using Cells = std::vector<std::string>;

// The tables of the generated section, told apart by their headers.
struct Tables {
  std::vector<Cells> steps;   // id, framework, part, placement, measured, strata, parts, error
  std::vector<Cells> groups;  // framework, part, rows, median, median |error|, worst, within 25%
  std::vector<Cells> syncs;   // id, part, measured, strata, error
  std::vector<Cells> decode;  // id, part, measured, strata, error
};

Cells Split(const std::string& line) {
  Cells out;
  std::string body = line.substr(2, line.size() - 4);  // "| a | b |" -> "a | b"
  size_t from = 0;
  for (size_t at = body.find(" | "); at != std::string::npos; at = body.find(" | ", from)) {
    out.push_back(body.substr(from, at - from));
    from = at + 3;
  }
  out.push_back(body.substr(from));
  return out;
}

Tables Read() {
  const std::string doc = testing::ReadTestFile(kDoc);
  const size_t from = doc.find(kSectionTitle);
  const size_t to = doc.find(kSectionEnd, from);
  EXPECT_NE(from, std::string::npos);
  EXPECT_NE(to, std::string::npos);
  Tables t;
  std::vector<Cells>* table = nullptr;
  std::istringstream in(doc.substr(from, to - from));
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("| ")) {
      if (!line.starts_with("|---")) table = nullptr;
      continue;
    }
    if (table == nullptr) {  // a header
      if (line.starts_with("| id | framework |")) table = &t.steps;
      if (line.starts_with("| framework | part |")) table = &t.groups;
      if (line.starts_with("| id | part | measured | strata (gather")) table = &t.syncs;
      if (line.starts_with("| id | part | measured | strata |")) table = &t.decode;
      static std::vector<Cells> ignored;
      if (table == nullptr) table = &ignored;
      continue;
    }
    table->push_back(Split(line));
  }
  return t;
}

const Cells& Group(const Tables& t, const std::string& framework, const std::string& part) {
  for (const Cells& c : t.groups) {
    if (c[0] == framework && c[1] == part) return c;
  }
  ADD_FAILURE() << "no summary row " << framework << ", " << part;
  static const Cells empty(7, "?");
  return empty;
}

double Percent(const std::string& cell) { return std::strtod(cell.c_str(), nullptr); }

// The larger of two errors by magnitude, as the doc prints them ("+177%").
std::string Worse(const std::string& a, const std::string& b) {
  return std::fabs(Percent(a)) >= std::fabs(Percent(b)) ? a : b;
}

size_t Count(const Tables& t, const std::string& framework_prefix) {
  return static_cast<size_t>(std::count_if(t.steps.begin(), t.steps.end(), [&](const Cells& c) {
    return c[1].starts_with(framework_prefix);
  }));
}

std::string ReadmeRow(const Tables& t) {
  const Cells& nemo_fit = Group(t, "NeMo RL (H100)", "fit");
  const Cells& nemo_held = Group(t, "NeMo RL (H100)", "held-out");
  const Cells& verl_fit = Group(t, "verl (H20)", "fit");
  const Cells& verl_held = Group(t, "verl (H20)", "held-out");
  const Cells& h100_fit = Group(t, "verl practice (H100)", "fit");
  const Cells& h100_held = Group(t, "verl practice (H100)", "held-out");
  const Cells& h20_fit = Group(t, "verl practice (H20)", "fit");
  const Cells& h20_held = Group(t, "verl practice (H20)", "held-out");
  const Cells& all_fit = Group(t, "all", "fit");
  const Cells& all_held = Group(t, "all", "held-out");
  // The held-out practice rows' range, and the syncs' range without its largest.
  std::vector<double> practice_held;
  for (const Cells& c : t.steps) {
    if (c[1].starts_with("verl practice") && c[2] == "held-out") {
      practice_held.push_back(Percent(c[7]));
    }
  }
  std::vector<std::pair<double, const Cells*>> syncs;
  for (const Cells& c : t.syncs) syncs.emplace_back(Percent(c[4]), &c);
  std::sort(syncs.begin(), syncs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  // The row says none is refused.
  for (const Cells& c : t.steps) EXPECT_NE(c[5], "refused") << c[0];
  EXPECT_GE(syncs.size(), 3u);
  EXPECT_FALSE(practice_held.empty());
  if (syncs.size() < 3 || practice_held.empty() || t.decode.size() < 2) return "";
  const auto [lowest, highest] = std::minmax_element(practice_held.begin(), practice_held.end());
  const Cells& largest = *syncs.back().second;
  return fmt::format(
      "| RL step (`rl`) | {} published RL steps (`docs/rl-validation.md`): {} NeMo RL on H100, {} "
      "verl on H20 and {} verl rows of a verl maintainer's per-phase CSVs (H100 and H20, none "
      "refused by the memory model since the update micro batch is the largest part of verl's "
      "own partition of the samples), all verl rows with an assumed response length; {} fit, {} "
      "held-out predicted; {} verl weight syncs, {} vLLM decode rows; `strata rl --log` puts a "
      "verl or OpenRLHF log beside the prediction, and beside the job priced again at the "
      "lengths the log measured | NeMo RL: fit median {} (worst {}), held-out "
      "{} ({}); verl: fit {} ({}), held-out {} ({}); verl CSVs: fit {} on H100 and {} on H20 "
      "(worst {}), held-out {} ({}) on H100 and {} on H20, long because the runs' samples were "
      "2.3-3.5x shorter than assumed (verl's own MFU column says so); all rows: fit {} (median "
      "\\|error\\| {}, {} rows), held-out {} ({}, {} rows; the held-out verl practice rows are "
      "{:+.0f}% to {:+.0f}%); generation simulated by continuous batching over a "
      "response-length distribution (capped exponential unless the job says, chosen on the fit "
      "rows); syncs {} to {} ({} on the {} sync of {}); decode {}, {} |",
      t.steps.size(), Count(t, "NeMo RL"), Count(t, "verl (H20)"), Count(t, "verl practice"),
      all_fit[2], all_held[2], t.syncs.size(), t.decode.size(), nemo_fit[3], nemo_fit[5],
      nemo_held[3], nemo_held[5], verl_fit[3], verl_fit[5], verl_held[3], verl_held[5], h100_fit[3],
      h20_fit[3], Worse(h100_fit[5], h20_fit[5]), h100_held[3], h100_held[5], h20_held[3],
      all_fit[3], all_fit[4], all_fit[2], all_held[3], all_held[4], all_held[2], *lowest, *highest,
      syncs.front().second->at(4), syncs[syncs.size() - 2].second->at(4), largest[4], largest[2],
      largest[0], t.decode[0][4], t.decode[1][4]);
}

std::string TrustLine(const Tables& t) {
  const Cells& all_fit = Group(t, "all", "fit");
  const Cells& all_held = Group(t, "all", "held-out");
  const Cells& nemo_held = Group(t, "NeMo RL (H100)", "held-out");
  const Cells& h20_fit = Group(t, "verl practice (H20)", "fit");
  const Cells& verl_fit = Group(t, "verl (H20)", "fit");
  return fmt::format(
      "{}the model's whole RL steps are off by a median {} on the {} held-out rows (signed {}; "
      "fit rows: {} over {}). NeMo RL's H100 runs are predicted short (held-out median {}), "
      "verl's H20 runs long (fit median {}, and {} on a verl maintainer's CSVs), mostly because "
      "their responses were shorter than the lengths assumed for them. "
      "Read the reference job's step as an order of magnitude and its split against colocated "
      "as a comparison; the memory by phase is a ledger, the same one `strata memory` checks.\n",
      kTrustBegin, all_held[4], all_held[2], all_held[3], all_fit[4], all_fit[2], nemo_held[3],
      verl_fit[3], h20_fit[3]);
}

TEST(RlReadme, TheRlRowQuotesTheValidationDoc) {
  const Tables t = Read();
  ASSERT_FALSE(t.steps.empty());
  const std::string row = ReadmeRow(t);
  ASSERT_FALSE(row.empty());
  const std::optional<std::string> readme =
      testing::WithSectionReplaced(testing::ReadTestFile(kReadme), kRowBegin, "\n", row + "\n");
  ASSERT_TRUE(readme) << kReadme << " has no row \"" << kRowBegin << "\"";
  const std::optional<std::string> with_trust =
      testing::WithSectionReplaced(*readme, kTrustBegin, "\n", TrustLine(t));
  ASSERT_TRUE(with_trust) << kReadme << " has no line \"" << kTrustBegin << "\"";
  EXPECT_TRUE(testing::MatchesGolden(kReadme, *with_trust));
}

}  // namespace
}  // namespace strata::rl_readme_test

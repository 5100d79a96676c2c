// Evidence assembly, analysis and both renderings of the verdict.
#include <nlohmann/json.hpp>
#include <string>

#include "entries/fuzz_entries.h"
#include "strata/hang/analysis/analysis.h"
#include "strata/hang/analysis/framework_timeouts.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/report/hang_verdict.h"

namespace strata::fuzz {

using namespace strata::hang;

// Several files (split at a line "----8<----"), each sniffed like a loose file `strata hang` is
// given, then the analysis and both renderings of its verdict.
void Evidence(std::string_view input) {
  static const AnalyzeOptions options = [] {
    AnalyzeOptions o;
    if (auto frameworks = LoadFrameworkTimeouts(); frameworks.ok()) o.frameworks = *frameworks;
    return o;
  }();
  EvidenceSet set;
  constexpr std::string_view kSplit = "\n----8<----\n";
  for (int rank = 0; !input.empty() && rank < 16; ++rank) {
    const size_t cut = input.find(kSplit);
    const std::string_view part = input.substr(0, cut);
    AddEvidenceFile(set, part, "rank" + std::to_string(rank) + ".txt", rank, "node1");
    input = cut == std::string_view::npos ? std::string_view() : input.substr(cut + kSplit.size());
  }
  const Verdict verdict = Analyze(set, options);
  const std::string json = CheckJsonOutput(VerdictToJson(verdict));
  CheckTextOutput(VerdictToText(verdict));
  RequireSame(json, CheckJsonOutput(VerdictToJson(Analyze(set, options))),
              "evidence: analysing twice gives one verdict");
}

}  // namespace strata::fuzz

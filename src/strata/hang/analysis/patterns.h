// The recognised hang patterns, each a detector over the joined evidence: OOM at the first
// optimizer step (incident 1), a rank stuck in destroy_process_group (incident 5), communicator
// initialisation with a wrong or inconsistent network interface (incident 6), mismatched
// collectives, every rank identical (a device-side stall), a pipeline send/recv deadlock, and
// dead or missing ranks.
#ifndef STRATA_HANG_ANALYSIS_PATTERNS_H_
#define STRATA_HANG_ANALYSIS_PATTERNS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang {

struct RankView {
  int64_t id = 0;  // the global rank, or the pid when no rank is known
  const RankEvidence* evidence = nullptr;
  const PyThread* main = nullptr;  // null when py-spy gave no stack
  StackActivity activity;
};

struct PatternInput {
  const EvidenceSet& evidence;
  const std::vector<RankView>& views;
  const std::vector<StackGroup>& groups;  // largest first
  const std::vector<PgStall>& stalls;
  const std::vector<int64_t>& dead_or_missing;
  std::optional<int64_t> step;  // the training iteration that stalled, if known
};

std::vector<Pattern> FindPatterns(const PatternInput& in);

/// "first optimizer step", "optimizer step of iteration 12", "backward", ...
std::string NamePhase(const std::string& phase, std::optional<int64_t> step);

/// The phase of a printed Python traceback (frames outermost first, as Python prints them).
std::string PhaseOfTraceback(const std::vector<LogSignal>& frames);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_PATTERNS_H_

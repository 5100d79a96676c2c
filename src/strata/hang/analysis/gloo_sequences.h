// Gloo's flight recorder: torch records Gloo collectives in the same dump format as NCCL's, but
// Gloo never updates the state fields. Every entry stays "scheduled" and "retired", without
// time_discovered_started_ns / time_discovered_completed_ns, and pg_status says the last
// collective completed (last_started -1): placeholders, not observations (torch 2.11; the real
// dumps are in tests/golden/hang-real/strata-h200-gloo*). So a Gloo dump is read by comparing
// the ranks' sequences instead: the same position of the same group with a different op or input
// sizes is a collective mismatch; a rank whose sequence stops earlier is behind; a member of the
// group (pg_config) with no dump is missing. Gloo keys pg_config by "" while pg_status and the
// entries name the group "0": a lone "" config belongs to the lone group the entries use.
#ifndef STRATA_HANG_ANALYSIS_GLOO_SEQUENCES_H_
#define STRATA_HANG_ANALYSIS_GLOO_SEQUENCES_H_

#include <string>
#include <utility>
#include <vector>

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

/// The `source` of a PgStall built from Gloo dumps.
inline constexpr const char* kGlooSource = "Gloo flight recorder";

/// A dump written for Gloo: no comm_lib_version, and every entry's profiling_name is "gloo:...".
bool IsGlooDump(const FrDump& dump);

/// One PgStall per process group of the Gloo dumps: stalled_seq is the first position where the
/// ranks differ (mismatch, with the odd ranks in mismatch_minority when all the others agree), else
/// the last position any rank reached (ranks that stopped earlier are `behind`). `missing`: members
/// of the group with no dump.
std::vector<PgStall> StallsFromGlooSequences(
    const std::vector<std::pair<std::string, FrDump>>& dumps);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_GLOO_SEQUENCES_H_

// The silent rank: when several ranks report a collective timeout and one rank of the job never
// appears anywhere in the evidence (no log line, dump, stack or summary record), that rank is the
// suspect: it never reached the collective (stuck elsewhere, e.g. saving a checkpoint) and a rank
// that never reached it often wrote nothing. The world size comes from the evidence: a manifest's
// WORLD_SIZE, the Flight Recorder's default group, NCCL RAS, NCCL's "nranks N" init lines, else
// the highest rank that appears.
#ifndef STRATA_HANG_ANALYSIS_SILENT_RANKS_H_
#define STRATA_HANG_ANALYSIS_SILENT_RANKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"

namespace strata::hang {

// The largest world a job can have here: the biggest clusters are 1e5 GPUs, and the analysis
// walks every expected rank. A larger figure in the evidence is a misread or corrupt count
// (a PID taken for a rank count, a rank number from binary debris), not a job.
inline constexpr int64_t kMaxWorldSize = int64_t{1} << 20;

struct SilentRanks {
  std::vector<int64_t> silent;  // named as suspects: a minority of the job, the rest waiting
  // Without evidence, but too many to call silent (a partial paste): how many, and their runs
  // ("0-3,9") rather than a list, which could hold a million ranks.
  int64_t unheard_count = 0;
  std::string unheard_ranges;
  std::vector<int64_t> waiting;  // ranks whose timeout lines are in the evidence
  std::optional<int64_t> world;
  std::string world_source;  // "WORLD_SIZE / the default group", "NCCL init lines (nranks 4)", ...
  bool world_at_least = false;  // inferred from the highest rank seen: a lower bound, not a size
  std::string note;             // why no world was inferred, when a rank number is beyond any job
};

/// `v` must have expected_world, ranks_seen and dead filled.
SilentRanks InferSilentRanks(const EvidenceSet& evidence, const Verdict& v);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_SILENT_RANKS_H_

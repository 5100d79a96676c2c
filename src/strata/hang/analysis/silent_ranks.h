// The silent rank: when several ranks report a collective timeout and one rank of the job never
// appears anywhere in the evidence (no log line, dump, stack or summary record), that rank may be
// the one that never reached the collective (stuck elsewhere, e.g. saving a checkpoint): each
// rank's ProcessGroupNCCL watchdog checks only the work that rank enqueued and prints its own
// timeout line (pytorch/pytorch@cf1380dfb6c8552c8cdb791a85a89499775ad409:
// torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, watchdogHandler and WorkNCCL::checkTimeout).
// Its absence is evidence only where the log shows it went on past the timeouts: a launcher's
// record of a worker's end after them (torchrun, DeepSpeed, mpirun, srun), written once the
// watchdog had taken a waiter down: a rank that had waited in the collective as long as the
// others had printed its own line by then, and one that had not is the rank they waited for.
// A log that ends at the timeout lines is read as an excerpt: the missing rank's
// line may simply follow (ai2cm/ace#348, xiuqhou/Salience-DETR#8, tests/golden/hang-real/), and
// the rank is noted, not named. The world size comes from the evidence: a manifest's WORLD_SIZE,
// the Flight Recorder's default group, NCCL RAS, NCCL's "nranks N" init lines, else the highest
// rank that appears.
#ifndef STRATA_HANG_ANALYSIS_SILENT_RANKS_H_
#define STRATA_HANG_ANALYSIS_SILENT_RANKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/hang/analysis/verdict.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/hang/parsers/failure_log.h"

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
  // As few as `silent` would be, but the log ends where their own timeout lines could still
  // follow (no launcher record after the timeouts): noted, not named.
  std::vector<int64_t> unconfirmed;
  std::string last_timeout;  // "train.log:4": where the last timeout line is, for the note
};

/// The notes that say which ranks left no trace and why each is named silent or not.
std::vector<std::string> SilentRanksNotes(const SilentRanks& silent_ranks);

/// The launcher's record of a worker's end (FailureKind kWorkerFailed or kChildFailed) that
/// follows the last collective-timeout line of its file: the log went on past the timeouts. The
/// first such record, or nullptr.
const FailureSignal* RecordAfterTimeouts(const EvidenceSet& evidence);

/// `v` must have expected_world, ranks_seen and dead filled.
SilentRanks InferSilentRanks(const EvidenceSet& evidence, const Verdict& v);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_SILENT_RANKS_H_

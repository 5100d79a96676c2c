// The answer `strata hang` gives: who is dead or missing, where every live rank is, which
// collective each process group is stalled in, the recognised patterns, the culprit with its
// chain of evidence, and how long the watchdog would have waited. Plain data; report/hang_verdict.h
// renders it.
#ifndef STRATA_HANG_ANALYSIS_VERDICT_H_
#define STRATA_HANG_ANALYSIS_VERDICT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/hang/analysis/stack_activity.h"
#include "strata/hang/assembly/evidence_set.h"
#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

struct StackGroup {  // one equivalence class of main-thread stacks
  std::vector<int64_t> ranks;
  StackActivity activity;
  std::vector<PyFrame> frames;  // representative, innermost first
  std::string diverges_below;   // "train_step (megatron/training/training.py)"; "" for the largest
};

struct PgStall {            // one process group's queue, from flight-recorder or watchdog evidence
  std::string pg;           // pg name ("12") or id
  std::string desc;         // "DATA_PARALLEL_GROUP"
  std::string source;       // "flight recorder" or "watchdog log"
  int64_t stalled_seq = 0;  // the first collective not completed by every live member
  std::string op;           // "_all_gather_base"
  std::vector<std::vector<int64_t>> input_sizes;
  std::vector<int64_t> members;  // expected, from pg_config ranks ([] when unknown)
  std::vector<int64_t> waiting;  // enqueued the stalled collective
  std::vector<int64_t> behind;   // never enqueued it
  std::vector<int64_t> ahead;    // already completed it: past the stall, neither waiting nor behind
  std::vector<int64_t> missing;  // members with no evidence for this group
  std::optional<int64_t> timeout_ms;
  std::string mismatch;  // "" or what differs at stalled_seq (ops or sizes by rank)
  std::vector<int64_t>
      mismatch_minority;  // ranks outside the most common (op, sizes) at stalled_seq
};

struct Pattern {
  std::string id;     // "oom_first_optimizer_step", "stuck_in_teardown", ...
  std::string title;  // one line for people
  std::vector<int64_t> ranks;
  std::vector<std::string> evidence;  // "file:line: text" or a sentence naming its source
};

struct Culprit {
  std::vector<int64_t> ranks;
  std::string host;
  std::string phase;               // "first optimizer step", "communicator initialisation", ...
  std::vector<std::string> chain;  // the chain of evidence, strongest first
};

struct TimeoutFinding {
  std::optional<double> effective_s;  // the collective timeout in force
  std::string source;                 // where it was read
  std::string framework;              // "ms-swift", when a framework default applied
  bool watchdog_applies = true;       // false when the stalled ranks wait where no watchdog looks
  std::string note;
};

struct Finding {  // the first failure, in the vocabulary of finding.h
  std::string kind = "unknown";
  std::vector<int64_t> ranks;  // the ranks the evidence names as the cause; [] when it names none
  std::string op;              // the stalled or mismatched collective, as printed
  std::optional<int64_t> seq;  // its sequence number
  std::optional<int64_t> timeout_ms;
  std::string peer;                   // the network peer (address or host) the evidence names
  std::string setting;                // the setting to check first: "NCCL_SOCKET_IFNAME=eth2"
  std::string summary;                // one line for people
  std::vector<std::string> evidence;  // "file:line: text", strongest first
};

// Where a rank ran, as the evidence names it: a manifest (RANK, LOCAL_RANK, host), torchrun's
// failure summary ("host : node3", "rank : 17 (local_rank: 1)") or an NCCL line with a [rankN]:
// prefix ("node3:4242:4242 [1] NCCL ..."). Fields the evidence does not give stay empty.
struct RankPlace {
  int64_t rank = 0;
  std::string host;  // "" when unknown
  std::optional<int64_t> local_rank;
  std::optional<int64_t> pid;
  std::string source;  // "manifest", "torchrun summary", "NCCL log line"
};

// A value the evidence printed that is a placeholder for "unknown", not a measurement: torch's
// 2^64-1 sizes and -1 counters, the Flight Recorder's "N/A" and -1 dimensions, py-spy's and the
// recorder's "<unknown>" frames. Reported so that nobody reads them as real numbers.
struct Placeholder {
  std::string where;    // "log.txt:12" or "fr-rank0.json: entries[3].input_sizes[0][1]"
  std::string field;    // "NumelIn", "last completed work", "input_sizes", "frame"
  std::string value;    // as printed: "18446744073709551615", "-1", "N/A", "<unknown>"
  std::string meaning;  // "unknown size (2^64-1 is torch's placeholder)"
};

struct Verdict {
  bool hang = false;  // a hang or another problem was found (exit code 1)
  std::string headline;
  std::optional<int64_t> expected_world;  // WORLD_SIZE or the default group's size
  std::vector<int64_t> ranks_seen;        // a live process with evidence
  std::vector<int64_t> pid_only;  // ids above and in groups that are process ids: RANK unknown
  std::vector<int64_t> dead;      // no process: py-spy "process gone", RAS DEAD
  std::vector<int64_t> missing;   // expected but absent from every bundle
  // Expected, absent, and more of them than were collected: a partial collection, not named as
  // dead. How many and their runs only (a world can be 2^20 ranks with one collected).
  int64_t uncollected = 0;
  std::string uncollected_ranges;
  std::vector<int64_t> no_stack;  // present but py-spy failed (permission, timeout)
  std::vector<int64_t> moved;     // stacks differ between two snapshots: progressing, not hung
  std::vector<int64_t> silent;    // expected, and no line, dump or stack of theirs anywhere
  std::vector<RankPlace> places;  // host and local rank of every rank the evidence places
  std::vector<Placeholder> placeholders;  // values printed as "unknown" placeholders
  std::vector<StackGroup> groups;
  std::vector<PgStall> pg_stalls;
  std::vector<Pattern> patterns;
  std::optional<Culprit> culprit;
  TimeoutFinding timeout;
  std::vector<Unreadable> unreadable;
  std::vector<std::string> notes;
  Finding finding;
  size_t bytes_read = 0;
  size_t hosts = 0;
};

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_VERDICT_H_

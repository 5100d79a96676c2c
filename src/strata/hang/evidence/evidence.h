// The evidence a hang analysis joins, as plain data. Each parser fills one of these; the analysis
// (hang/analysis/analysis.h) reads them all. Rank numbers say which space they live in:
// `global_rank` is torchrun's RANK; `pg_rank` is the rank inside one process group; RAS ranks are
// communicator-local.
#ifndef STRATA_HANG_EVIDENCE_EVIDENCE_H_
#define STRATA_HANG_EVIDENCE_EVIDENCE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata::hang {

// --- py-spy dump ------------------------------------------------------------
struct PyFrame {
  std::string function;  // "all_reduce"
  std::string file;     // "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py"
  int line = 0;         // 0 when unknown
  bool native = false;  // a --native C/C++ frame
  std::vector<std::pair<std::string, std::string>> locals;  // --locals: name, repr
};

struct PyThread {
  uint64_t thread_id = 0;
  std::string name;             // "MainThread", "" when py-spy printed none
  bool idle = false;            // py-spy's "(idle)"
  bool gil = false;             // holds the GIL
  std::vector<PyFrame> frames;  // innermost first, as py-spy prints
};

struct PySpyDump {
  int64_t pid = 0;
  std::string python_version;  // "3.10.12"
  std::string program;         // the command line py-spy printed
  std::vector<PyThread> threads;
  std::string error;       // py-spy's own failure ("process gone", "permission denied"), if any
  bool truncated = false;  // the text ended mid-line: the dump was cut short
};

// --- PyTorch Flight Recorder --------------------------------------------------
struct FrEntry {
  int64_t record_id = 0;
  int64_t pg_id = 0;
  std::string pg_name;            // process_group[0]
  std::string pg_desc;            // process_group[1], e.g. "DATA_PARALLEL_GROUP"
  int64_t collective_seq_id = 0;  // the cross-rank matching key
  int64_t p2p_seq_id = 0;
  int64_t op_id = 0;
  std::string profiling_name;  // "nccl:all_reduce"
  std::string op;              // profiling_name without the backend prefix: "all_reduce"
  bool is_p2p = false;
  std::optional<int64_t> p2p_src_rank;  // PG-local, from "nccl:send 0->1" / "nccl:recv 1<-0"
  std::optional<int64_t> p2p_dst_rank;
  std::string state;  // "scheduled", "started", "completed"
  bool retired = false;
  int64_t timeout_ms = 0;
  int64_t time_created_ns = 0;
  std::optional<double> duration_ms;
  std::vector<std::vector<int64_t>> input_sizes;
  std::vector<std::vector<int64_t>> output_sizes;
  std::vector<std::string> input_dtypes;
  std::vector<std::string> output_dtypes;
  std::vector<PyFrame> frames;  // innermost first
};

struct FrPgConfig {
  std::string name;
  std::string desc;
  std::vector<int64_t> ranks;  // global ranks, parsed from the "[0, 1, 2]" string
};

struct FrPgStatus {
  int64_t last_enqueued = -1;
  int64_t last_started = -1;
  int64_t last_completed = -1;
};

struct FrDump {
  std::string version;                          // "2.10"
  std::optional<int64_t> rank;                  // from the file name or content
  std::string comm_lib_version;                 // "2.27.5"
  std::map<std::string, FrPgConfig> pg_config;  // key: pg name
  std::map<std::string, FrPgStatus> pg_status;  // key: pg id as string
  std::vector<FrEntry> entries;                 // oldest first
  // Fields holding a placeholder for "unknown" rather than a value, as (field path, value as
  // written): ("entries[3].timeout_ms", "N/A"), ("entries[0].input_sizes[1][0]", "-1"). The
  // field keeps its default; the placeholder is reported, not read as a number.
  std::vector<std::pair<std::string, std::string>> placeholders;
};

// --- ProcessGroupNCCL watchdog and related log lines ---------------------------
enum class WatchdogEventKind {
  kTimeout,           // "Watchdog caught collective operation timeout"
  kWorkStatus,        // "... last enqueued work: N, last completed work: M"
  kDumpSignal,        // "Received a dump signal ... from rank N"
  kAsyncError,        // "Collective WorkNCCL(...) raised the following async exception"
  kHeartbeatTimeout,  // watchdog got stuck / heartbeat monitor timed out
  kTakingDown,        // "we are taking the entire process down"
  kOom,               // "CUDA out of memory" / "OutOfMemoryError"
  kCommInit,          // NCCL INFO/WARN lines about bootstrap, NET/Socket, interfaces
  kDestroy,           // destroy_process_group seen in a traceback or log
  kDesyncReport,      // TORCH_NCCL_DESYNC_DEBUG lines: lagging ranks, "Timeout at collective"
  kTimeoutSetting,    // a configured PG timeout printed by the framework (ddp_timeout=...)
  kOther,
};

struct WatchdogEvent {
  WatchdogEventKind kind = WatchdogEventKind::kOther;
  std::optional<int64_t> global_rank;  // torchrun's "[rankN]:" prefix
  std::optional<int64_t> pg_rank;      // "[Rank N]" / "[PG ... Rank N]" inside the message
  std::string pg_id;                   // "0", "1"
  std::string pg_desc;                 // "default_pg"
  std::string pg_name;         // the "PG GUID" (= Flight Recorder pg_config key), if printed
  std::optional<int64_t> seq;  // SeqNum / "work sequence id"
  std::string op_type;         // "ALLREDUCE"
  std::optional<int64_t> numel_in;
  std::optional<int64_t> numel_out;
  std::optional<int64_t> timeout_ms;
  std::optional<int64_t> ran_for_ms;
  std::optional<int64_t> last_enqueued;
  std::optional<int64_t> last_completed;
  std::optional<int64_t> from_rank;  // the rank that signalled a dump
  std::vector<int64_t> ranks;        // kDesyncReport: the PG-local ranks the line names
  // torch's placeholders for "unknown" the line printed, as (field, value as printed):
  // ("NumelIn", "18446744073709551615"), ("last completed work", "-1"). The field itself stays
  // unset (or, for the counters, -1, which the analysis skips).
  std::vector<std::pair<std::string, std::string>> placeholders;
  std::string host;  // NCCL lines: "<host>:<pid>:<tid> [<dev>] NCCL ..."
  std::optional<int64_t> pid;
  std::string detail;     // kind-specific: the exception text, the NCCL message,
                          // the desync verdict ("lagging", "not_joined", ...)
  std::string timestamp;  // as printed, e.g. "E810 03:04:11.061727749"
  std::string file;       // log file it came from
  int line = 0;           // 1-based line number in that file
  std::string text;       // the line, trimmed
};

/// The process group a watchdog line speaks of, the same on every member: its "PG GUID" where the
/// line prints one, else its "PG ID" (older formats print only that; the default group is "0"
/// under both). "PG ID" alone counts the groups one process created, in that process's order.
inline std::string WatchdogGroupKey(const WatchdogEvent& e) {
  return e.pg_name.empty() ? e.pg_id : e.pg_name;
}

// --- NCCL RAS -----------------------------------------------------------------
struct RasProcess {
  std::string host;
  int64_t pid = 0;
  std::optional<int64_t> comm_rank;  // communicator-local
  std::optional<int64_t> gpu;
  std::string status;  // "DEAD", "UNREACHABLE", "RUNNING", ...
};

// One line of a MISMATCH breakdown: "39 ranks have launched up to operation 1844" (ranks listed
// only when they are few, as NCCL prints them), or the per-collective-type form of NCCL >= 2.26.
struct RasCountGroup {
  std::string coll_type;  // "AllReduce"; "" for the untyped "collective" count
  int64_t ranks_count = 0;
  int64_t op_count = 0;        // 0 for "have not launched any operations"
  std::vector<int64_t> ranks;  // communicator-local, where NCCL named them
};

struct RasCommunicator {
  std::string id;      // "#0-0 (cf264af53edbe986)"
  std::string hash;    // "cf264af53edbe986"
  std::string status;  // "OK", "INCOMPLETE", "MISMATCH", ...
  int64_t nranks = 0;
  std::vector<RasProcess> missing;                // ranks the RAS could not reach
  std::map<int64_t, int64_t> coll_count_by_rank;  // collective operation counts where reported
                                                  // (text: the first breakdown naming the rank;
                                                  // JSON: the sum over collective types)
  std::vector<RasCountGroup> count_groups;        // the MISMATCH breakdown, as printed
  std::vector<std::string> notes;                 // lines kept verbatim for the report
};

struct RasReport {
  std::string nccl_version;
  int64_t total_processes = 0;
  std::vector<RasProcess> dead_or_unreachable;
  std::vector<RasCommunicator> communicators;
  std::vector<std::string> notes;  // report-level lines kept verbatim (TIMEOUT warnings, ...)
};

}  // namespace strata::hang

#endif  // STRATA_HANG_EVIDENCE_EVIDENCE_H_

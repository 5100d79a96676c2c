// Everything `strata hang` was given, parsed: bundle directories written by `strata collect`
// and loose files (py-spy dumps, flight-recorder dumps, logs, NCCL RAS output, Horovod
// timelines), sniffed by content. Any subset works; a file that cannot be read is listed with
// the reason and skipped.
#ifndef STRATA_HANG_ASSEMBLY_EVIDENCE_SET_H_
#define STRATA_HANG_ASSEMBLY_EVIDENCE_SET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/core/result.h"
#include "strata/hang/collect/bundle.h"
#include "strata/hang/evidence/evidence.h"
#include "strata/hang/parsers/failure_log.h"
#include "strata/hang/parsers/gloo_log.h"
#include "strata/hang/parsers/horovod_timeline.h"
#include "strata/hang/parsers/log_signals.h"

namespace strata::hang {

struct RankEvidence {
  ProcessRecord process;  // from a manifest; a loose dump fills pid (and rank, if named)
  std::string host;
  std::optional<PySpyDump> pyspy;  // absent when py-spy was not run or its file was unreadable
  std::string pyspy_file;
  std::string snapshot;  // the bundle's collection time (manifest time_utc); "" for loose files
};

struct GpuApp {  // one row of nvidia-smi --query-compute-apps
  std::string host;
  int64_t pid = 0;
  std::string process_name;
  std::string used_memory;  // as printed, with its unit: "91234 MiB"
  std::string gpu_uuid;
};

struct Unreadable {
  std::string file;
  std::string reason;
};

struct LoadedLog {
  std::string file;
  std::string host;
  std::optional<int64_t> rank;
  bool complete = true;  // the whole log, not a tail: absence of a line means it never printed
  size_t lines = 0;
  // The ranks its lines speak for, by torchrun's "[rankN]:" or mpirun's "[1,N]<stdout>:" prefix:
  // who printed anything, failing or not (sorted, each once).
  std::vector<int64_t> speaking_ranks;
};

struct EvidenceSet {
  std::vector<RankEvidence> ranks;
  std::vector<std::pair<std::string, FrDump>> fr_dumps;  // file, dump
  std::vector<WatchdogEvent> watchdog;
  std::vector<RasReport> ras;
  std::vector<LoadedLog> logs;
  std::vector<LogSignal> log_signals;
  std::vector<FailureSignal> failures;
  std::vector<GlooSignal> gloo;
  std::vector<HorovodTimeline> timelines;  // HOROVOD_TIMELINE files
  std::vector<GpuApp> gpu_apps;
  std::vector<Unreadable> unreadable;
  std::vector<std::string> hosts;
  size_t bytes_read = 0;
};

/// Reads bundle directories (with manifest.json), plain directories (every file in them) and
/// files. A path that does not exist is an Error (a usage mistake); a file that exists but cannot
/// be parsed is recorded in `unreadable` and skipped.
Result<EvidenceSet> LoadEvidence(const std::vector<std::string>& paths);

/// Adds one file's contents, sniffing what it is. `rank` and `host` come from a manifest when
/// known. Used by LoadEvidence and by the benchmark (in-memory dumps).
void AddEvidenceFile(EvidenceSet& set, std::string_view contents, const std::string& file,
                     std::optional<int64_t> rank = std::nullopt, const std::string& host = "");

/// The N of "rank17", "rank_17" or "rank-17" in a file name, if any.
std::optional<int64_t> RankInFileName(std::string_view path);

/// Rows of `nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid
/// --format=csv`.
std::vector<GpuApp> ParseComputeApps(std::string_view csv, const std::string& host);

}  // namespace strata::hang

#endif  // STRATA_HANG_ASSEMBLY_EVIDENCE_SET_H_

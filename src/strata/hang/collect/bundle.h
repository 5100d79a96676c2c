// The per-node bundle `strata collect` writes and `strata hang` reads: a directory with a
// manifest.json (host, time, one record per trainer process) beside the py-spy dumps, the
// nvidia-smi compute-apps CSV, copied flight-recorder dumps and log tails it names.
//
//   <out>/<host>/manifest.json
//               pyspy/rank<R>.txt        py-spy dump stdout+stderr of one trainer process
//               fr/<file>                flight-recorder dumps, copied byte for byte
//               logs/<name>              the tail of each --log file
//               nvidia-smi.csv           nvidia-smi --query-compute-apps=... --format=csv
#ifndef STRATA_HANG_COLLECT_BUNDLE_H_
#define STRATA_HANG_COLLECT_BUNDLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/json_output.h"
#include "strata/core/result.h"

namespace strata::hang {

inline constexpr const char* kManifestName = "manifest.json";
inline constexpr const char* kManifestKind = "hang_bundle";

struct ProcessRecord {
  int64_t pid = 0;
  std::optional<int64_t> rank;             // RANK from /proc/<pid>/environ
  std::optional<int64_t> local_rank;       // LOCAL_RANK
  std::optional<int64_t> world_size;       // WORLD_SIZE
  std::string cmdline;                     // argv joined by spaces
  std::string state;                       // /proc/<pid>/status "State:", e.g. "S (sleeping)"
  std::map<std::string, std::string> env;  // NCCL_*, TORCH_NCCL_*, TORCH_FR_*, MASTER_ADDR, ...
  std::string pyspy_file;                  // relative to the bundle; "" when py-spy was not run
  int pyspy_exit_code = 0;
  bool pyspy_timed_out = false;       // py-spy was killed after the timeout (trainer resumed)
  std::vector<std::string> fr_files;  // relative to the bundle
};

struct LogRecord {
  std::string file;             // relative to the bundle
  std::string source;           // the path it was read from on the node
  std::optional<int64_t> rank;  // from the file name, when it names one
  int64_t bytes_total = 0;      // size of the source file
  bool truncated = false;       // only the tail was kept: earlier lines are missing
};

struct Manifest {
  std::string host;
  std::string time_utc;  // ISO 8601, e.g. "2026-01-01T03:12:44Z"
  std::string strata_version;
  std::vector<ProcessRecord> processes;
  std::string nvidia_smi_file;  // relative; "" when nvidia-smi was not available
  std::vector<LogRecord> logs;
  std::vector<std::string> notes;  // what the collector could not do, and why
};

Json ManifestToJson(const Manifest& manifest);

/// Strict: a wrong type or an unknown key is an error naming the file and field.
Result<Manifest> ParseManifest(std::string_view text, const std::string& file);

/// `relative` (a path a manifest names) joined to the bundle directory `dir`, or an error when it
/// would leave the bundle: empty, absolute, a ".." component, or a link resolving outside `dir`.
/// A manifest is input like any other; it must not make strata read /dev/zero or ~/.ssh.
Result<std::string> PathInBundle(const std::string& dir, const std::string& relative);

}  // namespace strata::hang

#endif  // STRATA_HANG_COLLECT_BUNDLE_H_

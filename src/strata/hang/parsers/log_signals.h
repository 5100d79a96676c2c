// The few log lines the hang analysis needs beyond the watchdog's own messages (watchdog_log.h):
// CUDA out-of-memory errors, training-loop iteration lines (which step was running), the Python
// frames of a printed traceback, and NCCL's choice of network interface.
#ifndef STRATA_HANG_PARSERS_LOG_SIGNALS_H_
#define STRATA_HANG_PARSERS_LOG_SIGNALS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

enum class LogSignalKind {
  kOom,        // "CUDA out of memory" / "OutOfMemoryError" / NCCL "Cuda failure 'out of memory'" /
               // the driver's "CUDA_ERROR_OUT_OF_MEMORY"
  kIteration,  // Megatron " iteration   12/ 1000 |", HF "{'loss': ..., 'epoch': ...}" excluded
  kNcclInterface,   // "Bootstrap: Using eth0:10.0.0.1<0>", "NET/Socket : Using [0]docker0:..."
  kTracebackFrame,  // '  File "x.py", line 3, in step'
  kCommAborted,     // "NCCL communicator was aborted on rank 2.": that rank's own communicator
};

struct LogSignal {
  LogSignalKind kind = LogSignalKind::kOom;
  std::optional<int64_t> global_rank;  // torchrun's "[rankN]:" prefix
  std::string host;                    // NCCL lines: "<host>:<pid>:<tid> [dev] NCCL INFO ..."
  int64_t value = 0;   // kIteration: the iteration number; kCommAborted: the communicator's rank
  std::string detail;  // kNcclInterface: "eth0:10.0.0.1"; kTracebackFrame: function
  std::string frame_file;  // kTracebackFrame: the file
  std::string file;
  int line = 0;      // 1-based
  std::string text;  // the line, trimmed, at most 300 characters
};

/// Scans a log (or a log tail); unrecognised lines are skipped: a log is free text.
std::vector<LogSignal> ScanLogSignals(std::string_view text, const std::string& file);

/// The "[rankN]:" prefix's N at the start of a line (after any launcher prefix), if present.
std::optional<int64_t> RankPrefix(std::string_view line);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_LOG_SIGNALS_H_

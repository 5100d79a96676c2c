// ProcessGroupNCCL watchdog lines and their neighbours in a rank's log: collective timeouts in
// every generation of the message, "last enqueued / last completed work", dump signals, heartbeat
// monitor and async-exception lines, the desync report, CUDA OOM, NCCL's own INFO/WARN lines
// about bootstrap and network, destroy_process_group in tracebacks, and configured timeouts.
//
// Rank numbers are kept in their own spaces: torchrun's "[rankN]:" line prefix is the global
// rank; "[Rank N]" and "[PG ... Rank N]" inside a message are PG-local. Lines that match nothing
// are skipped: a log is mostly other text, and an unknown line is never an error.
#ifndef STRATA_HANG_PARSERS_WATCHDOG_LOG_H_
#define STRATA_HANG_PARSERS_WATCHDOG_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/json_output.h"
#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

/// Every recognised event in `text`, in line order. `file` is recorded on each event.
/// ANSI colour codes and CR line ends are stripped; invalid UTF-8 bytes become '?'.
std::vector<WatchdogEvent> ParseWatchdogLog(std::string_view text, const std::string& file);

/// The collective timeout the evidence says was in force, and where it was read.
struct TimeoutEvidence {
  int64_t timeout_ms = 0;
  std::string source;  // "Timeout(ms)=600000 in a watchdog line", "ddp_timeout=18000000 (s)", ...
  std::string file;
  int line = 0;
};

/// The effective collective timeout: the largest Timeout(ms) printed with a WorkNCCL (what the
/// watchdog really used), else the largest configured timeout (ddp_timeout, Megatron's
/// distributed_timeout_minutes, timedelta(...) in an init_process_group call), else nullopt.
std::optional<TimeoutEvidence> EffectiveCollectiveTimeout(const std::vector<WatchdogEvent>& events);

/// "timeout", "work_status", ... (the enum's name in snake case, without the k).
std::string_view WatchdogEventKindName(WatchdogEventKind kind);

/// Canonical JSON of the events; only fields that were read appear.
Json ToJson(const std::vector<WatchdogEvent>& events);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_WATCHDOG_LOG_H_

// The fields a watchdog-log line carries, read out of it (watchdog_log.h): the cleaned line,
// torchrun's rank prefix, the glog header, the process-group prefix, a rendered WorkNCCL(...),
// the queue status, the desync report, configured timeouts and NCCL's INFO/WARN lines. Used by
// the log scanner (watchdog_log.cc) only.
#ifndef STRATA_HANG_PARSERS_WATCHDOG_FIELDS_H_
#define STRATA_HANG_PARSERS_WATCHDOG_FIELDS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "strata/hang/evidence/evidence.h"

namespace strata::hang::watchdog_fields {

/// `v` times `factor`, or nullopt when `v` is absent or negative or the product would overflow.
std::optional<int64_t> Multiply(std::optional<int64_t> v, int64_t factor);

/// Without ANSI escape sequences and CR, bytes that are not valid UTF-8 replaced with '?' (the
/// events end up in JSON), trimmed.
std::string CleanLine(std::string_view raw);

/// torchrun's "[rankN]:" prefix, anywhere before the message; *end is set after it.
std::optional<int64_t> GlobalRankPrefix(std::string_view line, size_t* end);

/// The message after a glog header ("[E810 03:04:11.061727749 ProcessGroupNCCL.cpp:683] "), whose
/// time goes to *timestamp.
std::string_view StripGlogHeader(std::string_view line, std::string* timestamp);

/// "[PG ID 0 PG GUID 0(default_pg) Rank 1]", "[PG 1 Rank 0]" or "[Rank 1]": the PG-local rank and
/// the group's id, name and description.
void ReadPgPrefix(std::string_view message, WatchdogEvent* e);

/// Where a rendered work item opens: "WorkNCCL(" (ProcessGroupNCCL) or "WorkHCCL(" (torch_npu's
/// ProcessGroupHCCL, which renders its work the same way); npos when neither is there.
size_t FindWork(std::string_view message);

/// The fields of a rendered WorkNCCL(...) (or WorkHCCL(...)) in any generation.
void ReadWorkNccl(std::string_view message, WatchdogEvent* e);

/// "last enqueued [NCCL] work: N, last completed [NCCL] work: M", in either order and case;
/// false when neither number is there.
bool ReadLastWork(std::string_view m, WatchdogEvent* e);

/// One line of the TORCH_NCCL_DESYNC_DEBUG report; *snapshot_seq carries the collective number
/// from one line of the report to the next.
bool ReadDesyncLine(std::string_view message, int64_t* snapshot_seq, WatchdogEvent* e);

/// A framework's printout of the configured process-group timeout.
bool ReadTimeoutSetting(std::string_view line, WatchdogEvent* e);

/// "<host>:<pid>:<tid> [<dev>] NCCL INFO|WARN ...": host, pid and what the line says.
bool ReadNcclLine(std::string_view line, WatchdogEvent* e);

}  // namespace strata::hang::watchdog_fields

#endif  // STRATA_HANG_PARSERS_WATCHDOG_FIELDS_H_

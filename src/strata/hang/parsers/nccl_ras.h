// NCCL RAS status reports (ncclras / "echo verbose status | nc localhost 28028"), in the text
// layout of NCCL 2.24 onwards and the JSON of `ncclras -f json` (2.28.7 onwards), plus monitor
// mode's PEER_DEAD events. RAS ranks are communicator-local; processes are named by host and pid.
#ifndef STRATA_HANG_PARSERS_NCCL_RAS_H_
#define STRATA_HANG_PARSERS_NCCL_RAS_H_

#include <string>
#include <string_view>

#include "strata/core/json_output.h"
#include "strata/core/result.h"
#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

/// Parses one RAS report, text or JSON (sniffed: JSON starts with '{'). Dead and unreachable
/// processes, communicators with INCOMPLETE / MISMATCH / ERROR and their missing ranks and
/// per-rank collective counts. An "ERROR: ..." reply, an empty file or text that is not a RAS
/// report is an error naming the file and line.
Result<RasReport> ParseNcclRas(std::string_view text, const std::string& file);

/// Canonical JSON of a report (stable key order).
Json ToJson(const RasReport& report);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_NCCL_RAS_H_

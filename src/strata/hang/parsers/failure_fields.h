// The fields a failure line carries, read out of it (failure_log.h): the cleaned line, the
// token after a key, the PG-local rank and group, NCCL's host prefix, rank sets and lists, the
// two sides of a collective mismatch, the host of a store connection. Used by the line
// classifier (failure_line.h) and the block scanner (failure_log.cc) only.
#ifndef STRATA_HANG_PARSERS_FAILURE_FIELDS_H_
#define STRATA_HANG_PARSERS_FAILURE_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/hang/parsers/failure_log.h"

namespace strata::hang::failure_fields {

/// Without ANSI escape sequences, markdown links (their text kept) and CR, trimmed.
std::string Clean(std::string_view raw);

/// `line` with each markdown link "[text](http://...)" or "[text](https://...)" replaced by its
/// text: a paste outside a code block, as GitHub renders it, turns file:line names and addresses
/// into links ("transport/[net_ib.cc:101](http://net_ib.cc:101/)", "peer
/// [10.1.3.201](http://10.1.3.201/)<33057>", NVIDIA/nccl#1710), and a stored copy of the thread
/// keeps them so. The text is what the program wrote. Returns `line` itself when it holds no
/// link, else a view of `buffer`.
std::string_view UnwrapMarkdownLinks(std::string_view line, std::string& buffer);

/// The token after `key` up to '<' (NCCL's "<port>"), a space, a comma or a quote.
std::string TokenAfter(std::string_view s, std::string_view key);

/// "[PG ID 0 PG GUID 0(default_pg) Rank 2]", "[PG 1 Rank 1]", "[PG 0 (default_pg) Rank 0]" or
/// "[Rank 6]": sets the PG-local rank and the group id.
void ReadPgRank(std::string_view line, FailureSignal* s);

/// "<host>:<pid>:<tid> [dev] ..." after any launcher prefix: the host.
std::string NcclHost(std::string_view line);

/// "{3, 4, 5}" -> ranks.
std::vector<int64_t> RankSet(std::string_view s);

/// SGLang's worker process reporting an exception, "[23:17:08 TP4] Exception in run_tp_server:"
/// or "[2025-04-21 04:13:43 TP3] Scheduler hit an exception: Traceback ...": true, with
/// `*tp_rank` the TP rank of the prefix when the prefix names no other parallel dimension (a
/// "DP1 TP1" prefix counts within its data-parallel replica, not the job).
bool SglangWorkerException(std::string_view line, std::optional<int64_t>* tp_rank);

/// ProcessGroupWrapper's report of two ranks running different collectives: sets ranks, seq,
/// op, other_seq, other_op and detail.
void ReadDetailMismatch(std::string_view line, FailureSignal* s);

/// The N of Horovod's runner tag "[N]<stderr>:" or "[N]<stdout>:" opening `line` (the rank;
/// Open MPI's "[job,rank]" form is horovod_stall.h's MpiTagRank).
std::optional<int64_t> HorovodRunnerRank(std::string_view line);

/// The host of "failed to connect to <host>:<port>", without its port.
std::string StoreHost(std::string_view line);

/// The peer of NCCL's "Call to send to <addr><port> failed" or "Call to recv from <addr><port>
/// failed": the token after the last " to " or " from " before " failed" (not the "to" of
/// "Call to").
std::string SocketPeer(std::string_view line);

/// The peer of Gloo's "connect [<addr>]:<port>: <error>", without its port or brackets.
std::string GlooConnectPeer(std::string_view line);

/// Python's str() of a datetime.timedelta after `key`, "timeout=0:30:00", "timeout=1 day,
/// 2:00:00" or "timeout=0:00:30.500000", in milliseconds; nullopt when `key` is absent or what
/// follows is not that form.
std::optional<int64_t> TimedeltaMsAfter(std::string_view line, std::string_view key);

}  // namespace strata::hang::failure_fields

#endif  // STRATA_HANG_PARSERS_FAILURE_FIELDS_H_

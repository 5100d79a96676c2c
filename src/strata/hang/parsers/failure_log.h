// First-failure lines a log holds beyond the watchdog's own messages (watchdog_log.h): CUDA
// errors and kernel Xid events, crashes (faulthandler, fatal signals), torchrun's ChildFailedError
// summary, NCCL bootstrap and network failures with the peer they name, NCCL's collective-size
// mismatch, communicator teardown, the end of training, the Flight Recorder analyser's report
// ("Not all ranks joining collective") and ProcessGroupWrapper fingerprints and mismatch reports,
// torchrun's "failed (exitcode: -9) local_rank: N" line and Horovod's stall inspector.
//
// Lines that match nothing are skipped: a log is mostly other text.
#ifndef STRATA_HANG_PARSERS_FAILURE_LOG_H_
#define STRATA_HANG_PARSERS_FAILURE_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::hang {

enum class FailureKind {
  kCudaError,       // "CUDA error: ...", NCCL "Cuda failure N", "NVRM: Xid", a GPU nvidia-smi lost
  kCrash,           // "Fatal Python error: Segmentation fault", "Segmentation fault (core dumped)"
  kChildFailed,     // one record of torchrun's ChildFailedError summary
  kBootstrap,       // "no socket interface found", "Bootstrap Root : rank N ... already checked in"
  kBootstrapTrace,  // NCCL's unwinding through bootstrap.cc ("bootstrap.cc:270 -> 2")
  kNetwork,      // IB completion errors, "Broken pipe", "Connection closed by remote peer", retcode
  kNetMismatch,  // "NET/IB : ... collective mismatch error, local size X remote size Y", "message
                 // truncated" in a transport (more bytes than the operation posted)
  kFrNotJoined,  // the Flight Recorder analyser: "Not all ranks joining collective", missing ranks
  kFingerprint,  // TORCH_DISTRIBUTED_DEBUG=DETAIL "CollectiveFingerPrint(SequenceNumber=...)"
  kTeardown,     // ncclCommAbort / commReclaim / ProcessGroupNCCL::abort / "Abort COMPLETE"
  kTrainingEnded,  // the training loop said it finished
  kProcessExit,    // the process reached its exit: ProcessGroupNCCL's destructor warns that
                   // "process group has NOT been destroyed" (torch >= 2.4, on normal exit)
  kSetting,        // a setting to check: "NCCL_SOCKET_IFNAME set by environment to eth2", env dumps
  kC10dFrame,  // a traceback or faulthandler frame in torch's distributed_c10d.py: the collective
  kWorkerFailed,    // torchrun's launcher: "failed (exitcode: -9) local_rank: 3 (pid: 812917)"
  kDetailMismatch,  // "Detected mismatch between collectives on ranks. Rank A is running ..."
  kHorovodStall,    // Horovod's stall inspector: the ranks that have not submitted a tensor
  kStoreCollectiveTimeout,  // a c10d store wait that timed out after training had run: the
                            // store used as a barrier or collective, a member never arrived
  kBarrierMissing,  // monitored_barrier: "Ranks 4, 5, 6, 7 failed to pass monitoredBarrier in N ms"
  kBarrierNoAnswer,  // monitored_barrier on a rank but 0: "Rank 1 successfully reached
                     // monitoredBarrier, but received errors ... from rank 0"
  kInitTrace,        // NCCL's unwinding through communicator init ("NCCL INFO init.cc:1263 -> 2")
  kHcclTimeout,  // Ascend HCCL: a collective waited past its timeout for a peer (EI0006, EI0002)
  kMpiCollectiveWait,  // a stack dump's frame inside an MPI collective (gdb: "in PMPI_Gather ()")
  kPythonError,   // a traceback ended by an error of the program's own ("NameError: name 'x' ...")
  kUccNotPosted,  // torch_ucc's comm check: ranks that never posted the collective others wait in
  kFrMismatch,    // the Flight Recorder analyser: "Culprit rank N; Error type: ..._MISMATCH"
  kEpTimeout,     // DeepEP's own timeouts: "DeepEP error: timeout (dispatch CPU)" (host side) or a
                  // kernel's "DeepEP dispatch NVL receiver timeout, channel: ..." (device side)
  kLockWait,      // a faulthandler dump whose thread waits on a lock file: torch's FileBaton (the
                  // extension build lock) or the filelock package, outside any collective
};

struct FailureSignal {
  FailureKind kind = FailureKind::kCudaError;
  std::optional<int64_t> global_rank;  // torchrun's "[rankN]:" prefix, or the summary's "rank : N"
  std::optional<int64_t> pg_rank;      // "[PG ... Rank N]" / "[Rank N]" inside the message
  std::optional<int64_t> local_rank;   // kChildFailed: the summary's "rank : N (local_rank: L)"
  std::string pg_id;                   // "0" for the default group
  std::string peer;                    // the network peer the line names: "10.0.0.3", a host
  std::string host;                    // NCCL lines: "<host>:<pid>:<tid>"; summary: "host : h"
  std::optional<int64_t> seq;          // kFrNotJoined, kFrMismatch, kFingerprint, kUccNotPosted
  std::string op;                      // kFrNotJoined ("all_reduce"), kFingerprint ("ALLREDUCE")
  std::vector<int64_t> ranks;          // kFrNotJoined, kHorovodStall, kBarrierMissing,
                                       // kUccNotPosted: the missing;
                                       // kDetailMismatch: the two ranks compared; kBarrierNoAnswer:
                                       // the rank that arrived
  std::optional<int64_t> other_seq;    // kDetailMismatch: the second rank's SequenceNumber
  std::string other_op;                // kDetailMismatch: the second rank's OpType
  std::optional<int64_t> exit_code;    // kChildFailed, kWorkerFailed
  std::optional<int64_t> timeout_ms;   // a store wait's or monitored barrier's own timeout
  // kBootstrap: a resource the process's own host refused while its communicator was set up (an
  // InfiniBand verbs object, the OFI plugin's libfabric objects), no peer involved: the process
  // that prints it is the one that failed, not one left waiting.
  bool own_host = false;
  bool store_wait = false;  // kBootstrap, kStoreCollectiveTimeout: a wait on the c10d store timed
                            // out (start-up or mid-run is the scanner's call, from the context)
  std::string signal;       // kChildFailed: "SIGABRT"; kCrash: "Segmentation fault"
  std::string time;         // kChildFailed: "2024-07-26_10:59:45"
  bool root_cause = false;  // kChildFailed: the "Root Cause (first observed failure)"
  bool killed = false;      // kWorkerFailed: gone without exiting itself, no exit code (Ray)
  std::optional<int64_t> pid;  // kWorkerFailed (Ray): the process reported gone ("Worker PID: N")
  // kWorkerFailed (Open MPI's box): how many processes it counts with a non-zero exit code ("but 1
  // process returned"), when the box says so.
  std::optional<int64_t> failed_processes;
  bool split = false;  // kHorovodStall: ranks ready on different tensors, in disjoint groups
  std::string detail;  // what the line says, kind-specific ("Xid 45", "NCCL_SOCKET_IFNAME=eth2")
  std::string file;
  int line = 0;      // 1-based
  std::string text;  // the line, cleaned, at most 300 characters
  // The last line before this one that shows the run went on (training progress, run_context.h,
  // or a batch size lowered after an out-of-memory error); 0 when none.
  int went_on_line = 0;
  // The last progress bar before the line stood at 0 done ("0/128 [10:02<?"): its elapsed time,
  // how long the stage had already run without progress when the line was written.
  std::optional<int64_t> stalled_ms;
};

/// The detail of NCCL's "Message truncated" in bootstrap.cc: set-up messages of a size the
/// receiver did not expect, which points at the NCCL version and settings, not at the interface.
inline constexpr std::string_view kBootstrapTruncated =
    "a bootstrap message of the wrong size during communicator set-up (ranks differ in NCCL "
    "version or settings)";

/// The detail of NCCL's "NET/IB : Got completion from peer X with error N": a transfer on an
/// InfiniBand queue pair failed (failure_line.cc).
inline constexpr std::string_view kInfiniBandCompletionError = "InfiniBand completion error";

/// The detail of NCCL's "Call to ibv_modify_qp failed with error ...": an InfiniBand queue pair
/// could not be brought up against its peer's, the connection was never made (failure_line.cc).
inline constexpr std::string_view kQueuePairNotConnected =
    "InfiniBand queue pair could not be connected to its peer (ibv_modify_qp failed)";

/// The detail of NCCL's "unhandled system error" (ncclSystemError): a socket or system call
/// failed, read as a set-up fault unless a network failure it reports came first (finding.cc).
inline constexpr std::string_view kUnhandledSystemError =
    "NCCL unhandled system error (a socket or network call failed while connecting)";

/// The detail of NCCL's "socketFinalizeAccept: wrong type 4 != 3": a peer on the InfiniBand
/// transport connected to one on the socket transport during set-up (failure_line.cc).
inline constexpr std::string_view kNetTransportMismatch =
    "ranks set up different NCCL network transports: a peer on InfiniBand (socket type 4) "
    "connected to one using sockets (type 3) while the communicator was built";

/// The detail of Open MPI's "... a non-zero exit code. Per user-direction, the job has been
/// aborted.": a process exited with an error; the box names no rank (failure_line.cc).
inline constexpr std::string_view kOpenMpiAborted =
    "Open MPI: a process exited with a non-zero exit code and mpirun aborted the job (the box "
    "does not name the rank)";
// Horovod's "has been shut down" on every rank after one failed or left: no rank named.
inline constexpr std::string_view kHorovodShutDown =
    "Horovod shut down after an exception on one of the ranks or a rank that finished early "
    "(every rank prints it; it names none)";

/// Every recognised failure line of `text`, in line order.
std::vector<FailureSignal> ScanFailures(std::string_view text, const std::string& file);

/// "cuda_error", "crash", ... (the enum's name in snake case, without the k).
std::string_view FailureKindName(FailureKind kind);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_FAILURE_LOG_H_

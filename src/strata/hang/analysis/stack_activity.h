// What one main-thread stack says a rank is doing: blocked in a collective, in point-to-point,
// in communicator initialisation, in teardown, in a host sync, in the data loader, or running;
// and in which phase of the training step (optimizer step, backward, forward, ...).
#ifndef STRATA_HANG_ANALYSIS_STACK_ACTIVITY_H_
#define STRATA_HANG_ANALYSIS_STACK_ACTIVITY_H_

#include <string>
#include <vector>

#include "strata/hang/evidence/evidence.h"

namespace strata::hang {

enum class Activity {
  kCollective,  // in a torch.distributed collective (all_reduce, all_gather_into_tensor, ...)
  kP2p,         // in send/recv (pipeline parallelism)
  kCommInit,    // creating an NCCL communicator, init_process_group, new_group, rendezvous
  kTeardown,    // destroy_process_group / ProcessGroupNCCL shutdown or abort
  kDeviceSync,  // waiting for the GPU (torch.cuda.synchronize, an event or stream wait)
  kDataLoader,  // waiting for a batch
  kIdle,        // py-spy says the thread sleeps (queue, lock, select)
  kRunning,     // anything else: computing
  kNoStack,     // no main thread (py-spy failed or printed none)
};

struct StackActivity {
  Activity kind = Activity::kNoStack;
  std::string op;        // "all_reduce", "recv", "ncclCommInitRankConfig", "destroy_process_group"
  int frame_index = -1;  // the frame that decided `kind` (innermost first); -1 when none
  std::string phase;     // "optimizer step", "backward", "forward", ... or "" when unknown
};

/// Classifies a stack (innermost first, as py-spy prints).
StackActivity ClassifyStack(const std::vector<PyFrame>& frames, bool thread_idle);

/// The training phase a stack is in: "optimizer step", "teardown", "checkpoint save",
/// "backward", "forward", "evaluation", "data loading", "initialisation", or "".
std::string PhaseOfStack(const std::vector<PyFrame>& frames);

/// "collective", "point-to-point", "communicator init", "teardown", ...
std::string ActivityName(Activity kind);

/// Waiting for someone else: a collective, p2p, communicator init, teardown, or a device sync.
bool IsBlockedOnPeers(Activity kind);

/// Waiting on a lock file another process took: a FileLock (the filelock package) or torch's
/// FileBaton (torch.utils.cpp_extension's build lock).
bool IsLockWait(const StackActivity& a);

}  // namespace strata::hang

#endif  // STRATA_HANG_ANALYSIS_STACK_ACTIVITY_H_

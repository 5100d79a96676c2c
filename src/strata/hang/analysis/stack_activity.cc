#include "strata/hang/analysis/stack_activity.h"

#include <array>
#include <string_view>

#include "strata/core/strings.h"

namespace strata::hang {
namespace {

// torch.distributed's public collectives and their older private spellings.
constexpr std::array<std::string_view, 26> kCollectives = {"all_reduce",
                                                           "all_gather",
                                                           "all_gather_into_tensor",
                                                           "all_gather_object",
                                                           "_all_gather_base",
                                                           "reduce_scatter",
                                                           "reduce_scatter_tensor",
                                                           "_reduce_scatter_base",
                                                           "broadcast",
                                                           "broadcast_object_list",
                                                           "all_to_all",
                                                           "all_to_all_single",
                                                           "reduce",
                                                           "gather",
                                                           "scatter",
                                                           "barrier",
                                                           "monitored_barrier",
                                                           "all_reduce_coalesced",
                                                           "all_gather_coalesced",
                                                           "gather_object",
                                                           "scatter_object_list",
                                                           "_coalescing_manager",
                                                           "all_gather_object",
                                                           "reduce_scatter_tensor_coalesced",
                                                           "all_gather_into_tensor_coalesced",
                                                           "allreduce_coalesced"};
constexpr std::array<std::string_view, 7> kP2p = {
    "send", "recv", "isend", "irecv", "batch_isend_irecv", "send_object_list", "recv_object_list"};
constexpr std::array<std::string_view, 7> kInitPython = {
    "init_process_group",   "new_group",  "_new_group_with_tag", "new_subgroups",
    "_store_based_barrier", "rendezvous", "init_device_mesh"};

template <size_t N>
bool OneOf(std::string_view s, const std::array<std::string_view, N>& set) {
  for (std::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

bool InC10d(const PyFrame& f) { return f.file.ends_with("distributed_c10d.py"); }

// DeepSpeed wraps torch's collectives under the same names (deepspeed/comm, ZeRO-3's
// partition_parameters.all_gather_coalesced); a partial dump can end there, torch's frame cut.
bool InCollectiveWrapper(const PyFrame& f) { return InC10d(f) || Contains(f.file, "deepspeed/"); }

bool IsCommInit(const PyFrame& f) {
  if (f.native) {
    return f.function.rfind("ncclCommInit", 0) == 0 || Contains(f.function, "initNCCLComm") ||
           Contains(f.function, "NCCLComm::create") || f.function.rfind("bootstrap", 0) == 0;
  }
  return (InC10d(f) || Contains(f.file, "torch/distributed/")) && OneOf(f.function, kInitPython);
}

bool IsTeardown(const PyFrame& f) {
  if (f.function == "destroy_process_group") return true;
  return f.native &&
         (Contains(f.function, "ProcessGroupNCCL::shutdown") ||
          Contains(f.function, "ProcessGroupNCCL::abort") ||
          f.function.rfind("ncclCommDestroy", 0) == 0 || f.function.rfind("ncclCommAbort", 0) == 0);
}

// A frame outer than frames[i] is an iterator's __next__ (Python code, not a native frame).
bool CalledFromNext(const std::vector<PyFrame>& frames, size_t i) {
  for (size_t j = i + 1; j < frames.size(); ++j) {
    if (!frames[j].native && frames[j].function == "__next__") return true;
  }
  return false;
}

std::string P2pOp(std::string_view function) {
  const bool send = Contains(function, "send");
  const bool recv = Contains(function, "recv");
  if (send && recv) return "send+recv";
  return send ? "send" : "recv";
}

}  // namespace

std::string PhaseOfStack(const std::vector<PyFrame>& frames) {
  auto any = [&](auto pred) {
    for (const PyFrame& f : frames) {
      if (!f.native && pred(f)) return true;
    }
    return false;
  };
  if (any([](const PyFrame& f) {
        return f.function == "step" && (Contains(f.file, "optim") || Contains(f.file, "zero"));
      })) {
    return "optimizer step";
  }
  if (any([](const PyFrame& f) { return f.function == "destroy_process_group"; }))
    return "teardown";
  if (any([](const PyFrame& f) { return f.function == "save_checkpoint"; }))
    return "checkpoint save";
  if (any([](const PyFrame& f) { return f.function == "load_checkpoint"; }))
    return "checkpoint load";
  if (any([](const PyFrame& f) {
        return f.function == "backward_step" ||
               (f.function == "backward" && Contains(f.file, "autograd"));
      })) {
    return "backward";
  }
  if (any([](const PyFrame& f) {
        return f.function == "forward_step" || f.function == "forward";
      })) {
    return "forward";
  }
  if (any([](const PyFrame& f) { return f.function == "evaluate"; })) return "evaluation";
  if (any([](const PyFrame& f) { return Contains(f.file, "torch/utils/data/"); }))
    return "data loading";
  if (any([](const PyFrame& f) {
        return OneOf(f.function, kInitPython) || f.function == "initialize_model_parallel" ||
               f.function == "setup_model_and_optimizer";
      })) {
    return "initialisation";
  }
  return "";
}

StackActivity ClassifyStack(const std::vector<PyFrame>& frames, bool thread_idle) {
  StackActivity a;
  if (frames.empty()) return a;
  a.phase = PhaseOfStack(frames);
  // Teardown and communicator creation sit *under* a collective frame (the first all_reduce
  // creates the communicator lazily), so they are looked for first.
  for (size_t i = 0; i < frames.size(); ++i) {
    if (IsTeardown(frames[i])) {
      a.kind = Activity::kTeardown;
      a.op = frames[i].function;
      a.frame_index = static_cast<int>(i);
      return a;
    }
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    if (IsCommInit(frames[i])) {
      a.kind = Activity::kCommInit;
      a.op = frames[i].function;
      a.frame_index = static_cast<int>(i);
      return a;
    }
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    const PyFrame& f = frames[i];
    if (f.native) continue;
    if (InCollectiveWrapper(f) && OneOf(f.function, kCollectives)) {
      a.kind = Activity::kCollective;
      a.op = f.function;
    } else if ((InC10d(f) && OneOf(f.function, kP2p)) ||
               (Contains(f.file, "p2p_communication") &&
                (Contains(f.function, "send") || Contains(f.function, "recv")))) {
      a.kind = Activity::kP2p;
      a.op = P2pOp(f.function);
    } else if ((f.function == "synchronize" && Contains(f.file, "torch/cuda")) ||
               (f.function == "wait" &&
                (Contains(f.file, "torch/cuda/streams") || Contains(f.file, "torch/cuda/event")))) {
      a.kind = Activity::kDeviceSync;
      a.op = f.function;
    } else if (Contains(f.file, "torch/utils/data/dataloader")) {
      a.kind = Activity::kDataLoader;
      a.op = f.function;
    } else if (f.function == "get" &&
               (f.file.ends_with("queue.py") || f.file.ends_with("queues.py")) &&
               CalledFromNext(frames, i)) {
      // A queue read under an iterator's __next__: the loop waits for its next batch from the
      // threads or processes that produce it (a framework's own data iterator, not torch's
      // DataLoader: fairseq's, pytorch/pytorch#87995).
      a.kind = Activity::kDataLoader;
      a.op = "queue.get";
    } else if (Contains(f.file, "filelock/")) {
      // A FileLock wait (torch / DeepSpeed extension builds, dataset caches): blocked on another
      // process's lock file, which no collective and no watchdog sees.
      a.kind = Activity::kIdle;
      a.op = "FileLock." + f.function;
    } else if (Contains(f.file, "torch/utils/file_baton")) {
      // torch.utils.cpp_extension's FileBaton: polls for the lock file of a build another
      // process began. The file is a plain file, not an OS lock: a build killed mid-way leaves
      // it behind and the wait never ends (pytorch/pytorch#189245).
      a.kind = Activity::kIdle;
      a.op = "FileBaton." + f.function;
    } else {
      continue;
    }
    a.frame_index = static_cast<int>(i);
    return a;
  }
  a.kind = thread_idle ? Activity::kIdle : Activity::kRunning;
  a.op = frames.front().function;
  a.frame_index = 0;
  return a;
}

std::string ActivityName(Activity kind) {
  switch (kind) {
    case Activity::kCollective:
      return "collective";
    case Activity::kP2p:
      return "point-to-point";
    case Activity::kCommInit:
      return "communicator init";
    case Activity::kTeardown:
      return "teardown";
    case Activity::kDeviceSync:
      return "device sync";
    case Activity::kDataLoader:
      return "data loader";
    case Activity::kIdle:
      return "idle";
    case Activity::kRunning:
      return "running";
    case Activity::kNoStack:
      return "no stack";
  }
  return "unknown";
}

bool IsBlockedOnPeers(Activity kind) {
  return kind == Activity::kCollective || kind == Activity::kP2p || kind == Activity::kCommInit ||
         kind == Activity::kTeardown || kind == Activity::kDeviceSync;
}

bool IsLockWait(const StackActivity& a) {
  return a.kind == Activity::kIdle &&
         (a.op.starts_with("FileLock.") || a.op.starts_with("FileBaton."));
}

}  // namespace strata::hang

#include "strata/hang/parsers/failure_line.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <utility>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/hang/parsers/failure_fields.h"

namespace strata::hang {

using failure_fields::GlooConnectPeer;
using failure_fields::HorovodRunnerRank;
using failure_fields::ReadDetailMismatch;
using failure_fields::SocketPeer;
using failure_fields::StoreHost;
using failure_fields::TokenAfter;

namespace {
constexpr size_t kMaxListedRanks = 100000;  // a bound on a hostile line, above any real world
}  // namespace

bool ClassifyFailureLine(std::string_view line, FailureSignal* s) {
  using K = FailureKind;
  // CUDA and the GPU itself. "CUDA error: out of memory" is an OOM (log_signals.h).
  if (const size_t at = line.find("CUDA error: "); at != std::string_view::npos) {
    if (Contains(line, "out of memory")) return false;
    s->kind = K::kCudaError;
    s->detail = std::string(line.substr(at + 12, 120));
    return true;
  }
  // ROCm builds of torch report the HIP runtime's errors the same way, "HIP error: operation not
  // permitted when stream is capturing" (ROCm/hip#3876, from c10_hip_check_implementation): the
  // device runtime's error, as CUDA's is. Its out-of-memory is an OOM (log_signals.h).
  if (const size_t at = line.find("HIP error: "); at != std::string_view::npos) {
    if (Contains(line, "out of memory")) return false;
    s->kind = K::kCudaError;
    s->detail = "HIP: " + std::string(line.substr(at + 11, 120));
    return true;
  }
  // The THC-era format (torch before 1.5): "cuda runtime error (39) : uncorrectable ECC error
  // encountered at .../THCCachingHostAllocator.cpp:265" (NVIDIA/semantic-segmentation#33).
  if (const size_t at = line.find("cuda runtime error ("); at != std::string_view::npos) {
    if (Contains(line, "out of memory")) return false;
    s->kind = K::kCudaError;
    s->detail = std::string(line.substr(at, 120));
    return true;
  }
  if (const size_t at = line.find("Triton Error [CUDA]: "); at != std::string_view::npos) {
    s->kind = K::kCudaError;
    s->detail = std::string(line.substr(at + 21, 120));
    return true;
  }
  if (Contains(line, "Cuda failure")) {
    // NCCL's allocator failing: "NCCL WARN Cuda failure 'out of memory'" (NCCL 2,
    // NVIDIA/nccl#1235) or "init.cu:218 WARN Cuda failure 'out of memory'" (NCCL 1,
    // pytorch/pytorch#4921) is an OOM like PyTorch's own (log_signals.h), not a CUDA fault.
    if (Contains(line, "out of memory")) return false;
    s->kind = K::kCudaError;
    s->detail = std::string(line.substr(line.find("Cuda failure"), 120));
    return true;
  }
  // nccl-tests' CUDACHECK, from the process whose CUDA call failed (it exits next): "<host>: Test
  // CUDA failure common.cu:732 'invalid device ordinal'" (NVIDIA/nccl#348, under mpirun's
  // -tag-output "[1,13]<stdout>:", the rank).
  if (const size_t at = line.find("Test CUDA failure "); at != std::string_view::npos) {
    s->kind = K::kCudaError;
    s->detail = std::string(TrimSpace(line.substr(at + 18, 120)));
    return true;
  }
  if (const size_t xid = line.find("NVRM: Xid"); xid != std::string_view::npos) {
    s->kind = K::kCudaError;
    const size_t colon = line.find("): ", xid);
    if (colon != std::string_view::npos) {
      if (auto n = LeadingInt(line.substr(colon + 3))) s->detail = "Xid " + std::to_string(*n);
    }
    return true;
  }
  // Newer drivers wrap the report over three kernel-log lines, "NVRM: The NVIDIA GPU
  // 0000:b3:00.0 / NVRM: (PCI ID: ...) installed in this system has / NVRM: fallen off the bus and
  // is not responding to commands." (NVIDIA/NVSentinel#155): the last alone names the fault.
  if (Contains(line, "Unable to determine the device handle for GPU") ||
      Contains(line, "fallen off the bus")) {
    s->kind = K::kCudaError;
    s->detail = "the GPU no longer answers";
    return true;
  }
  // AMD GPUs: the ROCm runtime's report of a device fault, "Memory access fault by GPU node-4
  // (Agent handle: 0x56387095fa40) on address (nil). Reason: Unknown." (deepspeedai/DeepSpeed
  // #6725: CUDA's illegal memory access) and "HW Exception by GPU node-9 (Agent handle: 0x...)
  // reason :GPU Hang" (ROCm/legacy-rocm-build#4021: the GPU hung and the runtime aborts the
  // process). The fault is the device's, as a CUDA error is; the node is the runtime's own
  // numbering of agents, not a rank.
  for (std::string_view rocm : {"Memory access fault by GPU node-", "HW Exception by GPU node-"}) {
    if (const size_t at = line.find(rocm); at != std::string_view::npos) {
      s->kind = K::kCudaError;
      s->detail = "ROCm: " + std::string(TrimSpace(line.substr(at, 120)));
      return true;
    }
  }
  if (Contains(line, "Fatal Python error: ")) {
    s->kind = K::kCrash;
    s->signal = std::string(line.substr(line.find("Fatal Python error: ") + 20, 60));
    return true;
  }
  // A data-loader worker killed (the OOM killer, most often): its rank fails outside any
  // collective, and the others wait for it.
  if (Contains(line, "DataLoader worker (pid") &&
      (Contains(line, "is killed by signal") || Contains(line, "exited unexpectedly"))) {
    s->kind = K::kCrash;
    const size_t at = line.find("DataLoader worker (pid");
    s->signal = std::string(line.substr(at, 90));
    return true;
  }
  // torch's data loader worker, when its shared memory runs out: "ERROR: Unexpected bus error
  // encountered in worker. This might be caused by insufficient shared memory (shm)." The
  // worker dies and its rank raises (horovod/horovod#2255).
  if (Contains(line, "Unexpected bus error encountered in worker")) {
    s->kind = K::kCrash;
    s->signal = "DataLoader worker bus error (shared memory)";
    return true;
  }
  // The fatal-signal report of Open MPI's (and UCX's) handler, in the process that got it:
  // "[host:pid] Signal: Segmentation fault (11)" after "*** Process received signal ***"
  // (horovod/horovod#489), or UCX's "[host:pid:0] Caught signal 11 (Segmentation fault: ...)".
  // The process ended by its own fault; mpirun's "[1,N]<stderr>:" tag, when there, is its rank.
  // A signal sent from outside (SIGINT 2, SIGKILL 9, SIGTERM 15) is no fault of the process's:
  // not read here.
  const auto own_fault = [](std::optional<int64_t> signal) {
    return signal && *signal != 2 && *signal != 9 && *signal != 15;
  };
  if (const size_t at = line.find("] Signal: "); at != std::string_view::npos) {
    const std::string_view rest = line.substr(at + 10);
    const size_t open = rest.rfind(" (");
    if (open != std::string_view::npos && rest.ends_with(")") &&
        own_fault(LeadingInt(rest.substr(open + 2)))) {
      s->kind = K::kCrash;
      s->signal = std::string(rest.substr(0, 60));
      return true;
    }
  }
  // The failure signal handler of Google's libraries (absl, glog), which JAX, XLA and TensorFlow
  // install: "*** SIGSEGV (@(nil)), see gl__________41#s15 received by PID 11743 (TID 12350) on
  // cpu 17; stack trace: ***" (jax-ml/jax#12456), "*** SIGSEGV received at time=... on cpu 3 ***"
  // or glog's "*** SIGABRT (@0x3e8) received by PID 2735 (TID 0x7f...) from PID 1000; stack
  // trace: ***". The process ended by its own fault; a SIGTERM or SIGINT reported the same way
  // came from outside and is not read here.
  if (const std::string_view t = TrimSpace(line); t.starts_with("*** SIG")) {
    const std::string_view name = t.substr(4, t.find_first_of(" (", 4) - 4);
    constexpr std::array<std::string_view, 5> kOwnFaults = {"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE",
                                                            "SIGABRT"};
    if (Contains(t, " received ") &&
        std::find(kOwnFaults.begin(), kOwnFaults.end(), name) != kOwnFaults.end()) {
      s->kind = K::kCrash;
      s->signal = std::string(name);
      return true;
    }
  }
  if (const size_t at = line.find("] Caught signal "); at != std::string_view::npos) {
    size_t used = 0;
    const std::string_view rest = line.substr(at + 16);
    if (own_fault(LeadingInt(rest, &used)) && rest.substr(used).starts_with(" (")) {
      s->kind = K::kCrash;
      s->signal = std::string(line.substr(at + 2, 60));
      return true;
    }
  }
  if (Contains(line, "Segmentation fault (core dumped)")) {
    s->kind = K::kCrash;
    s->signal = "Segmentation fault";
    return true;
  }
  // The kernel's own record of a process ended by an invalid access, in dmesg or syslog:
  // "kernel: python[3551]: segfault at 1378 ip 00007fff859dbeff sp 00007fff3b60ce60 error 4 in
  // libcuda.so.418.67[7fff858c5000+dec000]", and abrt's "Process 18817 (python3.7) of user
  // 171971032 killed by SIGSEGV - dumping core" (ai4d-iasc/trixie#55). The process crashed on its
  // own fault (in the library named); the kernel names a pid, never a rank.
  if (Contains(line, "]: segfault at ") && Contains(line, " ip ") && Contains(line, " error ")) {
    s->kind = K::kCrash;
    s->signal = "Segmentation fault";
    if (const size_t in = line.rfind(" in ");
        in != std::string_view::npos && in > line.find(" error "))
      s->detail = "segfault in " + std::string(TrimSpace(line.substr(in + 4, 80)));
    return true;
  }
  for (std::string_view fatal : {"killed by SIGSEGV", "killed by SIGBUS", "killed by SIGILL",
                                 "killed by SIGFPE", "killed by SIGABRT"}) {
    if (Contains(line, fatal)) {
      s->kind = K::kCrash;
      s->signal = std::string(fatal.substr(10));
      return true;
    }
  }
  // NCCL could not open a socket of its interface's address family: "include/socket.h:344 WARN
  // Socket creation failed : Address family not supported by protocol" (NVIDIA/nccl#210: NCCL 2.3,
  // which prints "WARN" without "NCCL", on every rank of an mpirun while rank 0 hung in
  // ncclCommInitRank). NCCL opens its sockets to bootstrap the communicator: a start-up fault of
  // the interface and address family it chose.
  if (Contains(line, "Socket creation failed")) {
    s->kind = K::kBootstrap;
    s->detail =
        "NCCL could not create a socket for its interface's address family: check "
        "NCCL_SOCKET_IFNAME and NCCL_SOCKET_FAMILY";
    return true;
  }
  // An extension loader's warning that the build directory of a torch C++/CUDA extension holds a
  // lock file, "Lock file exists in build directory: '.../nvdiffrast_plugin/lock'" (NVlabs/
  // nvdiffrast#190, NVlabs/nvdiffrec#39): torch's load then waits in FileBaton.wait until the file
  // goes away, and one left by a build killed mid-way never does. The process is stuck outside any
  // collective, on the lock (as a faulthandler dump in file_baton.py's wait shows it).
  if (Contains(line, "Lock file exists in build directory")) {
    s->kind = K::kLockWait;
    s->op = "FileBaton.wait";
    s->detail = "torch's FileBaton lock of a C++/CUDA extension build";
    return true;
  }
  // torch's FileBaton takes an extension's build lock by creating its 'lock' file and releases it
  // by deleting it: a second process building the same extension that finds the file gone raises
  // "FileNotFoundError: [Errno 2] No such file or directory: '~/.cache/torch_extensions/py39_cu121/
  // gsplat_cuda/lock'" (nerfstudio-project/gsplat#297, two trainings on one machine) and exits.
  if (Contains(line, "No such file or directory") && Contains(line, "torch_extensions") &&
      (Contains(line, "/lock'") || Contains(line, "\\lock'"))) {
    s->kind = K::kPythonError;
    s->detail =
        "the build lock of a torch C++/CUDA extension vanished under the process (another "
        "process building the same extension released it)";
    return true;
  }
  // NCCL bootstrap: which interface, who checked in.
  if (Contains(line, "no socket interface found") || Contains(line, "Bootstrap : no socket")) {
    s->kind = K::kBootstrap;
    s->detail = "no usable network interface: check NCCL_SOCKET_IFNAME";
    return true;
  }
  if (Contains(line, "has already checked in")) {
    s->kind = K::kBootstrap;
    s->detail = "two processes registered the same rank (launcher or RANK setup)";
    return true;
  }
  if (Contains(line, "ncclSocketInit: connecting to address") ||
      Contains(line, "is neither AF_INET(2) nor AF_INET6(10)")) {
    s->kind = K::kBootstrap;
    s->detail = "no address for the configured interface: check NCCL_SOCKET_IFNAME";
    return true;
  }
  // Ascend NPUs: HCCL's error codes (torch_npu). EJ0001 "Failed to initialize the HCCP process.
  // Reason: Maybe the last training process is running." (hiyouga/LlamaFactory#3839): the
  // device's communication process could not start, so the group never formed.
  if (Contains(line, "Failed to initialize the HCCP process")) {
    s->kind = K::kBootstrap;
    s->detail =
        "HCCL could not start the device's communication process (HCCP): a previous training "
        "process may still hold the NPU";
    return true;
  }
  // HCCL's collective timeouts: EI0006 "Getting socket times out. Reason: Remote Rank did not
  // send the data in time" (vllm-project/vllm-ascend#486) and EI0002 "The wait execution of the
  // Notify register times out. Reason: The Notify register has not received the Notify record
  // from remote rank [N]" with the task's tag "tag[AllReduce_<ip>%<nic>_...]" (hiyouga/
  // LlamaFactory#975). The rank that prints it waited for a peer inside a collective: NCCL's
  // watchdog timeout, in HCCL's words. The peer is not named by global rank (EI0002 prints
  // 4294967295, -1 unsigned, when it is not known).
  if (Contains(line, "Remote Rank did not send the data in time") ||
      Contains(line, "The wait execution of the Notify register times out")) {
    s->kind = K::kHcclTimeout;
    if (const size_t tag = line.find("tag["); tag != std::string_view::npos) {
      const std::string_view rest = line.substr(tag + 4);
      std::string op;
      for (char c : rest.substr(0, rest.find_first_of("_]"))) {
        if (std::isalpha(static_cast<unsigned char>(c)) == 0) break;
        op.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
      }
      s->op = op;
    }
    s->detail = std::string(TrimSpace(line.substr(0, 160)));
    return true;
  }
  // DeepEP's timeouts (deepseek-ai/DeepEP, csrc/legacy/buffer.hpp and the kernels): the host
  // throws "DeepEP error: timeout (dispatch CPU)" or "DeepEP error: CPU recv timeout" when the
  // dispatch kernel's receive counts never arrive; a kernel prints "DeepEP dispatch NVL receiver
  // timeout, channel: ...", "DeepEP timeout for combine receivers, rank 3, ..." or "DeepEP
  // timeout check failed: rank = ..." and traps (deepseek-ai/DeepEP#553, #137). Either way the
  // expert-parallel all-to-all waited past DeepEP's own timeout for data of other ranks: a
  // collective timeout in DeepEP's words. The waiting ranks' coordinates name no rank that failed
  // to send. Only DeepEP's own shapes count: the word "timeout" right after "DeepEP error: " or
  // followed by ", ", " (", " for " or " check failed", not prose that mentions both words.
  if (const size_t at = line.find("DeepEP "); at != std::string_view::npos) {
    const std::string_view body = TrimSpace(line.substr(at));
    bool ep_timeout = body.starts_with("DeepEP error: timeout") ||
                      body.starts_with("DeepEP error: CPU recv timeout");
    if (const size_t word = body.find(" timeout");
        !ep_timeout && word != std::string_view::npos &&
        body.substr(0, word).find(',') == std::string_view::npos) {
      const std::string_view after = body.substr(word + 8);
      ep_timeout = after.starts_with(", ") || after.starts_with(" (") ||
                   after.starts_with(" for ") || after.starts_with(" check failed");
    }
    if (ep_timeout) {
      s->kind = K::kEpTimeout;
      s->detail = std::string(body.substr(0, 160));
      return true;
    }
  }
  // Start-up: the process group never formed.
  if (Contains(line, "connectFullMesh failed")) {
    s->kind = K::kBootstrap;
    s->detail = "Gloo could not connect to every peer (connectFullMesh): check GLOO_SOCKET_IFNAME";
    return true;
  }
  // c10d's socket layer names the socket ("The server socket has failed to bind to ... (errno: 98 -
  // Address already in use)"); torch before 1.11 raised the bind failure of the rendezvous
  // store bare, "RuntimeError: Address already in use" under TCPStore(...) (pytorch/pytorch#17041,
  // NVIDIA/Megatron-LM#343, and pytorch/pytorch#72816, which asked for the address to be named).
  // torch's exception whose whole message is those words is that failure; prose that mentions
  // them is not, nor another library's exception (pyzmq's "ZMQError: Address already in use" is
  // an inference server's socket, not the store's port).
  if (Contains(line, "failed to listen on any local network address") ||
      Contains(line, "EADDRINUSE") ||
      (Contains(line, "Address already in use") &&
       (Contains(line, "socket") ||
        TrimSpace(line).ends_with("RuntimeError: Address already in use") ||
        TrimSpace(line).ends_with("DistNetworkError: Address already in use")))) {
    s->kind = K::kBootstrap;
    s->detail =
        "the rendezvous store's port is already in use (another job or a leftover process): "
        "choose a free MASTER_PORT";
    return true;
  }
  if (Contains(line, "Timed out initializing process group in store based barrier")) {
    s->kind = K::kBootstrap;
    // "(world_size=2048, worker_count=1792, timeout=0:30:00)": the barrier's timeout is the
    // process group's, printed as Python prints a timedelta (facebookresearch/metaseq#52).
    s->timeout_ms = failure_fields::TimedeltaMsAfter(line, "timeout=");
    const auto world = IntAfter(line, "world_size=");
    const auto count = IntAfter(line, "worker_count=");
    // worker_count is the number of check-ins on the barrier's key: fewer than the world is
    // a process that never arrived; more is two launches on one store, or a process count the
    // world size does not match (ultralytics/yolov5#4290, ligang-cs/PseCo#15: 16 for a world of
    // 4), whose count never equals the world size.
    s->detail = !world || !count ? "a process never reached the store-based barrier of init"
                : *count > *world
                    ? std::to_string(*count) +
                          " processes checked in to the store-based barrier "
                          "of a world of " +
                          std::to_string(*world) +
                          ": more than the world (two launches share one store, or the process "
                          "count does not match the world size)"
                    : "only " + std::to_string(*count) + " of " + std::to_string(*world) +
                          " processes reached the store-based barrier in time";
    return true;
  }
  if (Contains(line, "Waiting in store based barrier to initialize process group")) {
    const auto world = IntAfter(line, "world_size=");
    const auto count = IntAfter(line, "worker_count=");
    if (!world || !count || *count <= *world) return false;  // still arriving: normal start-up
    s->kind = K::kBootstrap;
    s->detail = std::to_string(*count) + " processes checked in to a world of " +
                std::to_string(*world) + ": two launches share one store (MASTER_PORT)";
    return true;
  }
  // ProcessGroupNCCL builds a communicator (at init, or lazily at a group's first collective):
  // rank R fetches the NCCL unique ID that rank 0 of the group put in the c10d store, "[45] is
  // setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by
  // key '0', but store->get('0') got error: wait timeout after 1800000ms" (huggingface/trl#3119).
  // The communicator never formed: a start-up fault of that group, even when the first collective
  // is what triggered it (a broadcast frame above it), so never read as a mid-run store wait.
  if (Contains(line, "ncclUniqueId from [") && Contains(line, "got error")) {
    s->kind = K::kBootstrap;
    if (const auto ms = IntAfter(line, "wait timeout after ")) s->timeout_ms = *ms;
    const auto root = IntAfter(line, "ncclUniqueId from [");
    s->detail = "the NCCL communicator never formed: a rank waited for the unique ID of rank " +
                (root ? std::to_string(*root) : std::string("0")) +
                " of its group in the c10d store and the wait failed (that rank never got to the "
                "group's set-up, or the store is unreachable)";
    return true;
  }
  // The same fetch seen only in c10's backtrace of the error, its message cut off above: "frame
  // #9: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID(ncclUniqueId*, bool, ...)" under
  // "c10d::PrefixStore::get" frames, above "initNCCLComm" (THUDM/slime#1309). The frames of a
  // c10 error are the stack where it was raised: inside the unique ID's exchange through the
  // store, so the communicator never formed, as above.
  if (Contains(line, "frame #") && Contains(line, "ProcessGroupNCCL::broadcastUniqueNCCLID(")) {
    s->kind = K::kBootstrap;
    s->detail =
        "the NCCL communicator never formed: an error was raised while a rank exchanged the NCCL "
        "unique ID through the c10d store (broadcastUniqueNCCLID; the error's message is not in "
        "the file)";
    return true;
  }
  // torch_xla's XRT mesh service while xmp.spawn sets up replication (_setup_replication ->
  // xm.xla_device()): an ordinal could not reach the mesh master, "Failed to connect to client
  // mesh master: d7c1c93dfe8c:56419" (pytorch/xla#2604) or "mesh_service.cc:331 : Failed to
  // retrieve mesh configuration: Connection reset by peer (14)" (pytorch/xla#2341). The replicas
  // never formed: a start-up fault, whichever ordinal reports it.
  static constexpr std::string_view kMeshMaster = "Failed to connect to client mesh master: ";
  if (const size_t at = line.find(kMeshMaster); at != std::string_view::npos) {
    std::string_view addr = TrimSpace(line.substr(at + kMeshMaster.size()));
    addr = addr.substr(0, addr.find(' '));
    s->kind = K::kBootstrap;
    s->peer = std::string(addr);
    s->detail = "torch_xla could not connect to its mesh master at " + std::string(addr) +
                " while setting up replication";
    return true;
  }
  // JAX's TPU driver backend dials the TPU host's gRPC server when it starts: "RuntimeError:
  // Deadline exceeded: Failed to connect to remote server at address: grpc://10.59.106.169:8470."
  // (jax-ml/jax#6157, a v3-32 pod slice whose other hosts were not connected). The backend never
  // came up: a start-up fault whose peer is that server.
  static constexpr std::string_view kRemoteServer =
      "Failed to connect to remote server at address: ";
  if (const size_t at = line.find(kRemoteServer); at != std::string_view::npos) {
    std::string_view addr = TrimSpace(line.substr(at + kRemoteServer.size()));
    if (const size_t scheme = addr.find("://"); scheme != std::string_view::npos && scheme < 12)
      addr.remove_prefix(scheme + 3);
    addr = addr.substr(0, addr.find_first_of(" ,"));
    while (addr.ends_with('.')) addr.remove_suffix(1);
    s->kind = K::kBootstrap;
    s->peer = std::string(addr.substr(0, 120));
    s->detail = "could not connect to the remote gRPC server at " + s->peer +
                " before its deadline while the backend started";
    return true;
  }
  // The same failure logged through TensorFlow's logging helper, "tf_logging.cc:11] Failed to
  // retrieve mesh configuration: ordinal (13)" (pytorch/xla#2342): the message is torch_xla's
  // own, whichever file logs it.
  if (Contains(line, "Failed to retrieve mesh configuration")) {
    s->kind = K::kBootstrap;
    s->detail =
        "torch_xla could not retrieve the mesh configuration from its mesh master while setting "
        "up replication";
    return true;
  }
  // The mesh client's gRPC channel to the master, which it waits for when first created
  // (MeshClient::MeshClient, from xm.xla_device() in _setup_replication): "mesh_service.cc:329 :
  // Check failed: impl_->channel->WaitForConnected( std::chrono::system_clock::now() + ..."
  // (pytorch/xla#4115, two VMs). The channel never connected: the same start-up fault as the
  // master unreachable, its address not on this line.
  if (Contains(line, "mesh_service.cc:") &&
      Contains(line, "Check failed: impl_->channel->WaitForConnected")) {
    s->kind = K::kBootstrap;
    s->detail =
        "torch_xla's mesh client could not connect to its mesh master while setting up "
        "replication (WaitForConnected failed)";
    return true;
  }
  // torch_xla's XRT mesh service: the ordinals' rendezvous (a barrier of all of them through the
  // mesh master) failed, "mesh_service.cc:247 : Failed to meet rendezvous 'init': Socket closed
  // (14)" (pytorch/xla#1995). Like a store-based barrier, it is a start-up fault unless the run
  // had begun (the scanner's call, from the context); torch_xla's own tags name an operation of
  // the running job ('torch_xla.core.xla_model.save' is xm.save's, pytorch/xla#4831): mid-run.
  if (Contains(line, "mesh_service.cc:") && Contains(line, "Failed to meet rendezvous '")) {
    const size_t open = line.find("Failed to meet rendezvous '") + 27;
    const std::string_view tag = line.substr(open, line.find('\'', open) - open);
    const size_t colon = line.find("': ", open);
    const std::string_view why =
        colon == std::string_view::npos ? std::string_view() : TrimSpace(line.substr(colon + 3));
    s->op = "xla_rendezvous";
    s->detail = "torch_xla's mesh rendezvous '" + std::string(tag.substr(0, 120)) + "' failed" +
                (why.empty() ? "" : " (" + std::string(why.substr(0, 80)) + ")");
    if (tag.starts_with("torch_xla.")) {
      s->kind = K::kStoreCollectiveTimeout;
    } else {
      s->kind = K::kBootstrap;
      s->store_wait = true;
    }
    return true;
  }
  if ((Contains(line, "DistStoreError") || Contains(line, "Socket Timeout")) &&
      (Contains(line, "wait timeout") || Contains(line, "Timed out after") ||
       Contains(line, "Socket Timeout"))) {
    s->kind = K::kBootstrap;
    s->store_wait = true;
    // "wait timeout after 300000ms, keys: /broadcast_from/0/75465" (torch's TCPStore client);
    // "Timed out after 6 seconds waiting for workers" (the store-based rendezvous).
    if (const auto ms = IntAfter(line, "wait timeout after ")) s->timeout_ms = *ms;
    if (const auto sec = IntAfter(line, "Timed out after "); sec && !s->timeout_ms)
      s->timeout_ms = *sec * 1000;
    s->detail = "a wait on the rendezvous store timed out at start-up (a rank never arrived)";
    return true;
  }
  // The c10d stores of torch 1.0 to 1.x raised a bare "Wait timeout" when the keys waited for
  // never appeared (FileStore::wait and TCPStore::wait, torch/lib/c10d/FileStore.cpp @
  // pytorch/pytorch 10afd1af: `throw std::runtime_error("Wait timeout")`); ProcessGroupGloo's
  // constructor waits there for every member's address (pytorch/gloo#148, under
  // init_process_group with a file:// store). The same fault as the DistStoreError above; start-up
  // or mid-run is the scanner's call from the traceback's frames.
  if (const size_t error = line.find("RuntimeError: Wait timeout");
      error != std::string_view::npos && TrimSpace(line.substr(error + 26)).empty()) {
    s->kind = K::kBootstrap;
    s->store_wait = true;
    s->detail = "a wait on the c10d store timed out at start-up (a process never set its key)";
    return true;
  }
  // c10d's store client warns before its wait raises: "[c10d] waitForInput: socket
  // SocketImpl(fd=58, addr=[localhost]:42412, remote=[localhost]:51216) timed out after
  // 300000ms" (huggingface/open-r1#690), or "waitForInput: poll for socket SocketImpl(...)
  // returned 0, likely a timeout" (huggingface/trl#2923). A wait on the c10d store timed out,
  // the same fault as the DistStoreError below; start-up or mid-run is the scanner's call.
  if (Contains(line, "waitForInput: ") &&
      (Contains(line, "timed out after ") || Contains(line, "likely a timeout"))) {
    s->kind = K::kBootstrap;
    s->store_wait = true;
    s->timeout_ms = IntAfter(line, "timed out after ");
    // The socket's far end is the store: "SocketImpl(fd=100, addr=[node-0.company.net]:43590,
    // remote=[node-0.company.net]:20000)" (sgl-project/sglang#7478); an IPv4 address mapped
    // into IPv6 ("[::ffff:33.148.62.162]") is given as the IPv4 address.
    if (const size_t remote = line.find("remote=["); remote != std::string_view::npos) {
      std::string_view host = line.substr(remote + 8);
      host = host.substr(0, host.find(']'));
      if (host.starts_with("::ffff:") && host.find(':', 7) == std::string_view::npos)
        host.remove_prefix(7);
      if (host.size() < 256) s->peer = std::string(host);
    }
    s->detail = "a wait on the c10d store timed out at start-up (a rank never arrived)";
    return true;
  }
  // torch.distributed.monitored_barrier, rank 0's report of the ranks that never reached it:
  // "RuntimeError: [Rank 0]: Ranks 4, 5, 6, 7 failed to pass monitoredBarrier in 2000000 ms"
  // (NVIDIA/nccl#849), "Rank 1 failed to pass monitoredBarrier in 1800000 ms" (one rank, without
  // wait_all_ranks). ProcessGroupGloo::monitoredBarrier numbers the ranks within the barrier's
  // group (1 to the group's size - 1): they are global ranks only on the default group.
  if (const size_t failed = line.find(" failed to pass monitoredBarrier");
      failed != std::string_view::npos) {
    const size_t rank = line.rfind("Rank", failed);
    if (rank == std::string_view::npos) return false;
    std::string_view list = line.substr(rank + 4, failed - rank - 4);
    if (list.starts_with('s')) list.remove_prefix(1);
    s->kind = K::kBarrierMissing;
    while (!(list = TrimSpace(list)).empty() && s->ranks.size() < kMaxListedRanks) {
      size_t used = 0;
      const auto r = LeadingInt(list, &used);
      if (!r) break;
      s->ranks.push_back(*r);
      list.remove_prefix(used);
      if (list.starts_with(',')) list.remove_prefix(1);
    }
    s->timeout_ms = IntAfter(line, "monitoredBarrier in ");
    s->op = "monitored_barrier";
    return !s->ranks.empty();
  }
  // The other ranks' side of it: each sends to rank 0 and waits for its answer, and only rank 0
  // enforces the timeout and names the ranks that did not arrive. "Rank 1 successfully reached
  // monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check
  // rank 0 logs for faulty rank." (pytorch/pytorch#76198) says "rank 0" whatever went wrong:
  // rank 0 reported a rank missing, or failed itself (ProcessGroupGloo::monitoredBarrier).
  if (const size_t reached = line.find(" successfully reached monitoredBarrier");
      reached != std::string_view::npos) {
    const size_t rank = line.rfind("Rank ", reached);
    if (rank == std::string_view::npos) return false;
    const auto arrived = LeadingInt(line.substr(rank + 5, reached - rank - 5));
    if (!arrived) return false;
    s->kind = K::kBarrierNoAnswer;
    s->ranks = {*arrived};
    s->op = "monitored_barrier";
    s->detail = "reached monitored_barrier, no answer from rank 0 (the barrier's coordinator)";
    return true;
  }
  // c10d's store client: the rendezvous host cannot be reached or resolved.
  if (Contains(line, "client socket has failed to connect") ||
      Contains(line, "client socket has timed out after") ||
      (Contains(line, "network addresses of (") && Contains(line, "cannot be retrieved"))) {
    s->kind = K::kBootstrap;
    s->peer = StoreHost(line);
    s->detail = "cannot reach the rendezvous store (MASTER_ADDR/MASTER_PORT)";
    return true;
  }
  // A launch script that looks the master up before starting the launcher: busybox's "nslookup:
  // can't resolve 'dlc1dwuhvtro4c27-master-0': Name does not resolve" (modelscope/ms-swift
  // #6368, then "waiting for master"), BIND's "** server can't find master-0: NXDOMAIN". The
  // host the workers must reach has no address: the rendezvous cannot form. "(null)" is a
  // script's unset variable, no host.
  if (line.starts_with("nslookup: can't resolve '") ||
      (line.starts_with("** server can't find ") && Contains(line, ": NXDOMAIN"))) {
    const bool busybox = line.starts_with("nslookup: ");
    const size_t from = busybox ? 25 : 21;
    const size_t end = line.find(busybox ? '\'' : ':', from);
    const std::string_view host =
        end == std::string_view::npos ? std::string_view() : line.substr(from, end - from);
    if (host.empty() || host == "(null)") return false;
    s->kind = K::kBootstrap;
    s->peer = std::string(host);
    s->detail = "the host name " + s->peer +
                " does not resolve (DNS): the workers cannot find the rendezvous host";
    return true;
  }
  // The TCPStore client of older torch: "RuntimeError: connect() timed out. Original timeout was
  // 60000 ms." (in c10d_rendezvous_backend's _create_tcp_store, pytorch/pytorch#69197).
  if (Contains(line, "connect() timed out") && Contains(line, "Original timeout was")) {
    s->kind = K::kBootstrap;
    s->detail = "cannot reach the rendezvous store (MASTER_ADDR/MASTER_PORT, rdzv_endpoint)";
    return true;
  }
  // torchrun's elastic agent could not form (or re-form) its worker group, before any worker
  // runs: torch.distributed.elastic.rendezvous.api's errors, in a traceback or in the JSON record
  // of its error handler ("message": "RendezvousTimeoutError: ").
  if (Contains(line, "RendezvousTimeoutError")) {
    s->kind = K::kBootstrap;
    s->detail =
        "the nodes did not all join torchrun's rendezvous in time (a node not started, or one "
        "that cannot reach rdzv_endpoint)";
    return true;
  }
  if (Contains(line, "RendezvousClosedError")) {
    s->kind = K::kBootstrap;
    s->detail =
        "torchrun's rendezvous was closed (another node's agent ended the job or left): this "
        "agent could not (re)join it";
    return true;
  }
  if (Contains(line, "RendezvousConnectionError")) {
    s->kind = K::kBootstrap;
    s->detail = "torchrun's agent cannot reach the rendezvous store (rdzv_endpoint)";
    return true;
  }
  // Gloo's TCP pairs connect to every peer while the group is created (ProcessGroupGloo's
  // constructor, in init_process_group or new_group): "pair.cc:799] connect [172.31.71.170]:13195:
  // Connection refused" (pytorch/pytorch#108732) is that set-up failing.
  if (Contains(line, "pair.cc") && Contains(line, "] connect [") &&
      (Contains(line, "Connection refused") || Contains(line, "Connection timed out") ||
       Contains(line, "No route to host"))) {
    s->kind = K::kBootstrap;
    s->peer = GlooConnectPeer(line);
    s->detail =
        "Gloo could not connect to a peer while creating the process group: check that every "
        "member creates the group and GLOO_SOCKET_IFNAME";
    return true;
  }
  if (Contains(line, "Connection refused") &&
      (Contains(line, "client socket") || Contains(line, "TCPStore") ||
       Contains(line, "rendezvous") || Contains(line, "DistNetworkError"))) {
    s->kind = K::kBootstrap;
    s->detail = "the rendezvous store refused the connection (MASTER_ADDR/MASTER_PORT)";
    return true;
  }
  // NCCL's shared-memory transport and proxy create their segments under /dev/shm while the
  // communicator is set up (transport/shm.cc, misc/shmutils.cc): "Error while creating shared
  // memory segment /dev/shm/nccl-KWfVyt (size 5967872)", "failed to extend /dev/shm/nccl-...
  // to 5967876 bytes" (NVIDIA/nccl-tests#166). The communicator never forms: a start-up fault of
  // the host or container (a small or full /dev/shm), not a hang.
  if (Contains(line, "Error while creating shared memory segment") ||
      (Contains(line, "failed to extend /dev/shm/") && Contains(line, " bytes"))) {
    s->kind = K::kBootstrap;
    s->detail =
        "NCCL could not create its shared-memory segment in /dev/shm while setting up the "
        "communicator (/dev/shm too small or full: a container's --shm-size)";
    return true;
  }
  // ncclUnhandledCudaError: "NCCL error in: .../NCCLUtils.hpp:181, unhandled cuda error, NCCL
  // version 21.0.3" (facebookresearch/metaseq#90): a CUDA call inside NCCL failed, a CUDA fault
  // on the rank that printed it, whatever teardown follows.
  if (Contains(line, "unhandled cuda error")) {
    s->kind = K::kCudaError;
    s->detail = "NCCL unhandled cuda error (a CUDA call inside NCCL failed)";
    return true;
  }
  // ncclInvalidArgument: "RuntimeError: NCCL error in: .../NCCLUtils.hpp:82, invalid argument,
  // NCCL version 2.4.8", raised in DDP's first broadcast (Lightning-AI/pytorch-lightning#3029,
  // ParlAI#3084). NCCL refused the call the process made (a bad buffer, count, device or root):
  // the process raised and exited, a crash of its own, not a fault of the network or a peer.
  if ((Contains(line, "NCCL error") && Contains(line, ", invalid argument")) ||
      Contains(line, "ncclInvalidArgument")) {
    s->kind = K::kCrash;
    s->signal = "NCCL refused a call with an invalid argument (ncclInvalidArgument)";
    return true;
  }
  // ncclInvalidUsage's last error when two ranks of one communicator share a device: "Duplicate
  // GPU detected : rank 1 and rank 0 both on CUDA device 10" (verl-project/verl#161, NVIDIA/nccl
  // #1241). NCCL checks every rank's bus id while it builds the communicator, before any
  // collective runs: the launch mapped two ranks to one GPU (more processes than GPUs, no
  // torch.cuda.set_device, a scheduler's placement). A start-up fault whose pair shares the blame.
  if (const size_t at = line.find("Duplicate GPU detected : rank "); at != std::string_view::npos) {
    s->kind = K::kBootstrap;
    s->detail = "two ranks on one GPU (" +
                std::string(TrimSpace(line.substr(at, line.find_first_of("^`", at) - at))) + ")";
    return true;
  }
  // torch's elastic launcher over etcd keeps its rendezvous under "/torchelastic/p2p/run_<id>/rdzv"
  // and its store under "/torch/elastic/store"; python-etcd raises on them as
  // "etcd.EtcdKeyNotFound: Key not found : /torchelastic/p2p/run_.../rdzv/next_strategy"
  // (JF-D/Parcae#1). The workers never formed: a start-up fault of the rendezvous backend.
  if (line.starts_with("etcd.Etcd") &&
      (Contains(line, "/torchelastic/") || Contains(line, "/torch/elastic/"))) {
    s->kind = K::kBootstrap;
    s->detail = "the elastic launcher's etcd rendezvous failed (" +
                std::string(TrimSpace(line.substr(0, 120))) + "): check the etcd server at " +
                "rdzv_endpoint";
    return true;
  }
  // gdb's backtrace of a thread inside an MPI collective: "#4  0x00007fe93f3e518d in PMPI_Gather
  // () from /usr/local/openmpi/lib/libmpi.so.40" (horovod/horovod#1182: Horovod's coordinator
  // thread). Every member must enter an MPI collective before it completes on any, so a thread
  // dumped inside one waits on the ranks that have not come; the dump names none of them.
  if (line.size() > 2 && line[0] == '#' && std::isdigit(static_cast<unsigned char>(line[1]))) {
    static constexpr std::array<std::string_view, 13> kMpiCollectives = {
        "Allreduce", "Allgather", "Allgatherv", "Alltoall", "Alltoallv", "Bcast",         "Barrier",
        "Gather",    "Gatherv",   "Reduce",     "Scatter",  "Scatterv",  "Reduce_scatter"};
    for (std::string_view prefix : {" in PMPI_", " in MPI_"}) {
      const size_t at = line.find(prefix);
      if (at == std::string_view::npos) continue;
      const std::string_view name = line.substr(at + prefix.size());
      const size_t end = name.find(" (");
      if (end == std::string_view::npos) continue;
      const std::string_view op = name.substr(0, end);
      if (std::find(kMpiCollectives.begin(), kMpiCollectives.end(), op) == kMpiCollectives.end())
        continue;
      s->kind = K::kMpiCollectiveWait;
      s->op = "MPI_" + std::string(op);
      s->detail = std::string(TrimSpace(line.substr(0, 160)));
      return true;
    }
  }
  if (Contains(line, "unhandled system error")) {
    s->kind = K::kBootstrap;
    s->detail = std::string(kUnhandledSystemError);
    return true;
  }
  if (const size_t at = line.find("set by environment to "); at != std::string_view::npos) {
    const size_t name_end = line.rfind(' ', at - 1);
    const size_t name_start =
        line.rfind(' ', name_end == std::string_view::npos ? 0 : name_end - 1);
    if (name_end != std::string_view::npos && name_start != std::string_view::npos) {
      s->kind = K::kSetting;
      s->detail = std::string(line.substr(name_start + 1, name_end - name_start - 1)) + "=" +
                  TokenAfter(line, "set by environment to ");
      return true;
    }
  }
  if (line.starts_with("NCCL_") && line.find('=') != std::string_view::npos &&
      line.find(' ') > line.find('=')) {  // an environment dump: "NCCL_NET_GDR_LEVEL=SYS"
    s->kind = K::kSetting;
    s->detail = std::string(TrimSpace(line));
    return true;
  }
  // NCCL's receive got more bytes than the operation posted: the two sides disagree. In
  // bootstrap.cc it is communicator set-up (NVIDIA/nccl#1176: NCCL 2.19.3, fixed by 2.18.6 on
  // every node); in a transport ("NET/Socket : peer X message truncated", NVIDIA/nccl#626) the
  // ranks called different collectives or sizes, or use different protocols (the maintainer's
  // two causes there; NVIDIA/nccl PR 605 words the warning so).
  if (Contains(line, "essage truncated")) {
    if (Contains(line, "bootstrap.cc:")) {
      s->kind = K::kBootstrap;
      s->detail = std::string(kBootstrapTruncated);
      return true;
    }
    s->kind = K::kNetMismatch;
    s->peer = TokenAfter(line, " peer ");
    s->detail =
        "message truncated: the peer sent more bytes than this rank posted (different "
        "collectives or sizes on the two ranks, or different NCCL protocols)";
    return true;
  }
  // Older NCCL 2.x releases were built from CUDA sources (NVIDIA/nccl@1450d42675be
  // src/bootstrap.cu:15-16, its bootstrap over the socket net; src/init.cu), so their trace names
  // bootstrap.cu and init.cu, and the earliest print "INFO" without "NCCL " (horovod/horovod#210:
  // "[3] INFO bootstrap.cu:169 -> 2", "INFO init.cu:422 -> 2").
  if ((Contains(line, "bootstrap.cc:") || Contains(line, "bootstrap.cu:")) &&
      Contains(line, " -> ")) {
    s->kind = K::kBootstrapTrace;
    return true;
  }
  // The error climbing out of ncclCommInitRank ("NCCL INFO init.cc:1263 -> 2"): the failure
  // below it happened while the communicator was being built (sgl-project/sglang#5594).
  if ((Contains(line, "NCCL INFO init.cc:") || Contains(line, "INFO init.cu:")) &&
      Contains(line, " -> ")) {
    s->kind = K::kInitTrace;
    return true;
  }
  // NCCL 2.4's check of the collectives the ranks launch together: "init.cc:1247 NCCL WARN
  // Mismatched collective detected, please check your collective calls at and around rank 39"
  // (NVIDIA/nccl#296). The ranks of a communicator called different collectives; the rank NCCL
  // prints is where the check ran ("at and around"), not shown to be the one that went wrong.
  if (Contains(line, "NCCL WARN Mismatched collective detected")) {
    s->kind = K::kNetMismatch;
    s->detail =
        "NCCL saw the ranks of a communicator call different collectives (its warning names "
        "the rank where it looked, not the one that called the wrong one)";
    return true;
  }
  // NCCL network failures and the peer they name.
  if (Contains(line, "collective mismatch error")) {
    s->kind = K::kNetMismatch;
    s->peer = TokenAfter(line, " peer ");
    s->detail = std::string(line.substr(line.find("collective mismatch error"), 100));
    return true;
  }
  if (Contains(line, "Got completion from peer")) {
    s->kind = K::kNetwork;
    s->peer = TokenAfter(line, "Got completion from peer");
    s->detail = std::string(kInfiniBandCompletionError);
    return true;
  }
  // NCCL's IB transport relays the adapter's asynchronous events: "NET/IB : Got async event :
  // local catastrophic error" (NVIDIA/nccl#230), "NET/IB : mlx5_0:1 Got async event : local
  // access violation work queue error" (NVIDIA/nccl#1710); the words are ibv_event_type_str's.
  // The error events (IBV_EVENT_DEVICE_FATAL "local catastrophic error", a queue pair's "work
  // queue error", "port error") say the adapter, a port or a queue on it failed; the others
  // ("port active", "LID change", "GID table change") are routine and not read.
  if (const size_t event = line.find("Got async event : "); event != std::string_view::npos) {
    const std::string_view what = TrimSpace(line.substr(event + 18, 80));
    if (!Contains(what, "error") && !Contains(what, "fatal")) return false;
    s->kind = K::kNetwork;
    s->detail = "the InfiniBand adapter reported '" + std::string(what) + "'";
    return true;
  }
  // The InfiniBand queue pair gave up resending: UCX prints "Transport retry count exceeded on
  // mlx5_0:1/IB (synd 0x15 ...)" (openucx/ucx#5199), ibv_wc_status_str's text for status 12 is
  // "transport retry counter exceeded". The peer never acknowledged: a link down, or the peer's
  // adapter or host gone.
  if (Contains(line, "Transport retry count exceeded") ||
      Contains(line, "transport retry counter exceeded")) {
    s->kind = K::kNetwork;
    s->detail =
        "InfiniBand transport retry count exceeded: the peer never acknowledged (a link down, or "
        "the peer's adapter or host gone)";
    return true;
  }
  // NCCL's verbs wrapper: "ibvwrap.c:160 NCCL WARN Call to ibv_modify_qp failed with error
  // Connection timed out" (OpenRLHF/OpenRLHF#335). ibv_modify_qp moves a queue pair through its
  // states to ready-to-receive/send against the peer's; failing there, the InfiniBand connection
  // to that peer could not be brought up (a link, a port or the peer's adapter).
  if (Contains(line, "Call to ibv_modify_qp failed")) {
    s->kind = K::kNetwork;
    s->detail = std::string(kQueuePairNotConnected);
    return true;
  }
  // The same wrapper when a verbs object could not be created: "misc/ibvwrap.cc:268 NCCL WARN Call
  // to ibv_create_cq failed" (NVIDIA/nccl#380), "ibvwrap.c:130 NCCL WARN Call to ibv_create_qp
  // failed". NCCL creates its protection domain, completion queues and queue pairs on the local
  // adapter while it connects a communicator's channels (net_ib.cc's connect and accept), before
  // any data moves: the host's adapter refused the resource (its limits, the locked-memory limit
  // of a container, a driver mismatch), no peer involved. A start-up fault of the host.
  if (const size_t call = line.find("Call to ibv_"); call != std::string_view::npos) {
    const std::string_view verb = line.substr(call + 8, line.find(' ', call + 8) - call - 8);
    if ((verb.starts_with("ibv_create_") || verb == "ibv_alloc_pd") &&
        Contains(line.substr(call), " failed")) {
      s->kind = K::kBootstrap;
      s->own_host = true;
      s->detail = "NCCL could not create an InfiniBand resource on this host's adapter (" +
                  std::string(verb) +
                  " failed) while connecting the communicator: the adapter's or the container's "
                  "limits (locked memory, ulimit -l), not a link";
      return true;
    }
  }
  // The OFI network plugin (aws-ofi-nccl) the same way: "create_nccl_ofi_component:459 NCCL WARN
  // NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument" (aws/aws-ofi-nccl#24). The plugin
  // opens its libfabric objects (a fabric, a domain, an endpoint, its address vector, its
  // completion queue) on the host's adapter when NCCL first uses the network while connecting a
  // communicator; every "Couldn't ..." of those is a resource the host's provider refused,
  // before any data moves and with no peer named. A start-up fault of the host. Not the plugin's
  // search for a provider at its init ("NET/OFI Couldn't find any optimal provider"): finding
  // none, it declines and NCCL runs on its own transports.
  if (Contains(line, "NET/OFI Couldn't ") && !Contains(line, "NET/OFI Couldn't find")) {
    const size_t at = line.find("NET/OFI Couldn't ");
    const std::string_view what = line.substr(at + 8, line.find('.', at) - at - 8);
    s->kind = K::kBootstrap;
    s->own_host = true;
    s->detail =
        "NCCL's OFI network plugin could not set up its libfabric resources on this host (" +
        std::string(what.substr(0, 80)) +
        ") while connecting the communicator: the provider or the adapter refused it";
    return true;
  }
  if (Contains(line, "failed : Broken pipe") || Contains(line, "failed : Connection reset")) {
    s->kind = K::kNetwork;
    s->peer = SocketPeer(line);
    s->detail = Contains(line, "Broken pipe") ? "Broken pipe" : "Connection reset";
    return true;
  }
  if (Contains(line, "Connection closed by remote peer")) {
    s->kind = K::kNetwork;
    s->peer = TokenAfter(line, "Connection closed by remote peer");
    s->detail = "Connection closed by remote peer";
    return true;
  }
  // A connect refused: nothing listens at the address. NCCL 2.4's connectAddress retries a refused
  // connect ("Call to connect returned Connection refused, retrying", 2e4 times a millisecond
  // apart), then warns "Connect to 10.38.10.112<21724> failed : Connection refused" and fails
  // (src/include/socket.h @ v2.4.8-1, NVIDIA/nccl 7c72dee6; pytorch/pytorch#38702, whose address
  // is none of the job's nodes). The sockets are connected while a communicator is set up
  // (bootstrap, then its transports): the address a rank was given is stale or its listener never
  // started, a start-up fault naming that address, as the later socketPollConnect's refusals are
  // read (WatchXlaStartupWait). Other connect errors (a reset, a route) stay network faults below.
  if (Contains(line, "Connection refused") &&
      (Contains(line, "Call to connect returned") ||
       (Contains(line, "Connect to ") && Contains(line, " failed : ")))) {
    s->kind = K::kBootstrap;
    s->peer = TokenAfter(line, "Connect to ");
    s->detail = "a connection was refused while the communicator was set up (nothing listened at " +
                (s->peer.empty() ? std::string("the address") : s->peer) +
                "): a stale or wrong address, or its listener never started";
    return true;
  }
  // A connect whose poll came back without the socket writable: "misc/socket.cc:586 ... NCCL WARN
  // socketPollConnect poll() returned 1, no POLLOUT events" (NVIDIA/nccl#1618, ranks 604 and 607
  // of 1024 in a hang during NCCL's bootstrap). socketPollConnect polls a non-blocking connect for
  // POLLOUT; an event without it is POLLERR or POLLHUP, the connect failed (the destination dropped
  // the SYNs there), and NCCL returns ncclSystemError without naming the address (the PR's reading
  // of src/misc/socket.cc; "poll() failed with error ..." is the same connect's poll failing). NCCL
  // connects sockets only while a communicator is set up, and the address is not printed, so no
  // peer is named: a start-up fault of the connection set-up, read as the refused connects above.
  if (Contains(line, "socketPollConnect poll() returned") ||
      Contains(line, "socketPollConnect poll() failed")) {
    s->kind = K::kBootstrap;
    s->detail =
        Contains(line, "no POLLOUT events")
            ? "a socket connect failed while the communicator was set up (socketPollConnect:"
              " the socket reported an error or hang-up, not writable; the address is not "
              "printed)"
            : "a socket connect failed while the communicator was set up (socketPollConnect"
              "'s poll failed)";
    return true;
  }
  // A connection that could not be made: "socketStartConnect: Connect to 10.0.0.82<38455> failed
  // : Software caused connection abort", "socketPollConnect: Connect to 10.0.0.4<56849> returned
  // 113(No route to host)" (sgl-project/sglang#3820).
  if (Contains(line, "socketStartConnect: Connect to ") ||
      Contains(line, "socketPollConnect: Connect to ") ||
      Contains(line, "Call to connect returned")) {
    s->kind = K::kNetwork;
    s->peer = TokenAfter(line, "Connect to ");
    s->detail = "connect failed";
    return true;
  }
  // An NCCL listening socket accepted a connection of another kind: "misc/socket.cc:441 NCCL WARN
  // socketFinalizeAccept: wrong type 4 != 3" (NVIDIA/nccl-tests#188, then the proxy's "Failed to
  // execute operation Connect"). The connecting side sends its socket type first; include/socket.h
  // numbers them 1 Bootstrap, 2 Proxy, 3 NetSocket, 4 NetIb, 5 RasNetwork. Type 4 against 3 is a
  // peer on the InfiniBand transport connecting to one on the socket transport: the ranks chose
  // different network transports while the communicator was set up (NCCL_NET, NCCL_IB_DISABLE
  // or an IB adapter on some nodes only). A start-up fault of the settings, not a link that failed.
  if (Contains(line, "socketFinalizeAccept: wrong type ")) {
    s->kind = K::kBootstrap;
    const auto got = IntAfter(line, "wrong type ");
    const size_t ne = line.find(" != ");
    const auto want = ne == std::string_view::npos ? std::nullopt : LeadingInt(line.substr(ne + 4));
    const bool net_types =
        got && want && *got != *want && (*got == 3 || *got == 4) && (*want == 3 || *want == 4);
    s->detail = net_types
                    ? std::string(kNetTransportMismatch)
                    : "an NCCL socket accepted a connection of another kind during set-up "
                      "(socket type " +
                          (got ? std::to_string(*got) : std::string("?")) + " where " +
                          (want ? std::to_string(*want) : std::string("?")) + " was expected)";
    return true;
  }
  // A process's call to a proxy thread of its node failed: "Proxy Call to rank 7 failed (Connect)"
  // (vllm-project/vllm#798, NVIDIA/nccl#914). ncclProxyCall sends the request over the socket to
  // the proxy of a local rank and warns with that rank and the request's type when the exchange
  // fails (src/proxy.cc @ v2.14.3-1, NVIDIA/nccl c4e2aa6c: "Init", "SharedInit", "Setup",
  // "Connect", ...). A failed Connect or Setup is the transport's connection to a peer not made
  // while the communicator's channels were connected: a network failure (nccl-914's peer closed
  // the connection). The rank printed is the local proxy's, not a peer shown at fault.
  if (const size_t call = line.find("Proxy Call to rank "); call != std::string_view::npos) {
    const std::string_view rest = line.substr(call);
    if (Contains(rest, " failed (Connect)") || Contains(rest, " failed (Setup)")) {
      s->kind = K::kNetwork;
      s->detail = "a transport connection was not made while the communicator was set up (" +
                  std::string(TrimSpace(rest.substr(0, rest.find(')') + 1))) + ")";
      return true;
    }
  }
  if (Contains(line, "Failed to execute operation") && Contains(line, "retcode")) {
    s->kind = K::kNetwork;
    s->detail = "proxy " + std::string(line.substr(line.find("retcode"), 12));
    return true;
  }
  if (Contains(line, "remote process exited or there was a network error") ||
      Contains(line, "ncclRemoteError")) {
    s->kind = K::kNetwork;
    s->detail = "ncclRemoteError";
    return true;
  }
  if (Contains(line, "GPU Direct RDMA Disabled for HCA")) {
    s->kind = K::kNetwork;
    s->detail = "GPU Direct RDMA disabled: check NCCL_NET_GDR_LEVEL and the PCIe topology (ACS)";
    return true;
  }
  // TORCH_DISTRIBUTED_DEBUG=DETAIL: the wrapper's own report of two ranks that differ.
  if (Contains(line, "Detected mismatch between collectives on ranks")) {
    s->kind = K::kDetailMismatch;
    ReadDetailMismatch(line, s);
    return true;
  }
  // DeepSpeed's launcher, when a worker exits: "[launch.py:321:sigkill_handler] ['/usr/bin/python',
  // '-u', 'train.py', '--local_rank=4', ...] exits with return code = 1" (deepspeedai/DeepSpeed
  // #5302); a negative code is the signal that ended it (-9 SIGKILL). The command it prints is not
  // the failed worker's: sigkill_handler logs `cmd`, the variable the spawn loop last assigned, so
  // the last worker started (deepspeedai/DeepSpeed@32c6645218a3c7b6e7eb6247b3523e73f8b1e882
  // deepspeed/launcher/launch.py: `for local_proc in range(0, num_local_procs)` builds `cmd` and
  // spawns; the poll loop finds the process with `returncode != 0` and calls sigkill_handler, which
  // logs f"{cmd} exits with return code = {last_return_code}"). Its --local_rank names no worker.
  if (Contains(line, "sigkill_handler") && Contains(line, "exits with return code = ")) {
    s->kind = K::kWorkerFailed;
    s->exit_code = IntAfter(line, "exits with return code = ");
    if (s->exit_code == -9) s->signal = "SIGKILL";
    if (s->exit_code == -6) s->signal = "SIGABRT";
    if (s->exit_code == -15) s->signal = "SIGTERM";
    if (s->exit_code == -11) s->signal = "SIGSEGV";
    s->detail = "DeepSpeed's launcher: a worker exited with code " +
                std::to_string(s->exit_code.value_or(0));
    return true;
  }
  // Horovod's runner tags each rank's output "[N]<stderr>:"; a rank's line that is only "Killed"
  // is the shell's report of that process ending by SIGKILL (horovod/horovod#2907: rank 0 killed,
  // exit status 137 = 128 + 9, the others then fail on Gloo's closed sockets).
  if (const auto rank = HorovodRunnerRank(line); rank && line.ends_with(">:Killed")) {
    s->kind = K::kWorkerFailed;
    s->killed = true;
    s->exit_code = -9;
    s->signal = "SIGKILL";
    s->global_rank = rank;
    s->detail = "Horovod: rank " + std::to_string(*rank) +
                "'s process was killed (SIGKILL: the shell printed 'Killed'; the kernel's OOM "
                "killer or the scheduler)";
    return true;
  }
  // Open MPI's mpirun, when a rank exits with an error code: the box "Primary job  terminated
  // normally, but 1 process returned / a non-zero exit code. Per user-direction, the job has
  // been aborted." (horovod/horovod#410, #3412). A process ended with an error of its own (a
  // signal is reported by "mpirun noticed ... on signal" instead); the box does not say which.
  // Open MPI names the rank in "The first process to do so was: / Process name: [[j,1],R]" when
  // it prints that block (the scanner, failure_log.cc): that record is preferred where present.
  if (Contains(line, "non-zero exit code") &&
      Contains(line, "Per user-direction, the job has been aborted")) {
    s->kind = K::kWorkerFailed;
    s->detail = std::string(kOpenMpiAborted);
    return true;
  }
  // Horovod, on every rank once it has shut down: "Horovod has been shut down. This was caused by
  // an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor
  // after one of the ranks finished execution." (horovod/horovod#2097, under mpirun's timestamp
  // and rank tags). A rank failed or left first; the rank printing this is not it, and the
  // message names none (the scanner's other signals, an exception or an exit, say more).
  if (Contains(line, "Horovod has been shut down. This was caused by an exception on one of")) {
    s->kind = K::kWorkerFailed;
    s->detail = std::string(kHorovodShutDown);
    return true;
  }
  // Open MPI's mpirun, when a rank ends by a signal: "mpirun noticed that process rank 7 with PID
  // 0 on node HOSTNAME exited on signal 9 (Killed)." (horovod/horovod#469). The MPI rank is the
  // global rank; signal 9 (SIGKILL) came from outside, another signal is the process's own end.
  if (Contains(line, "mpirun noticed that process rank ") && Contains(line, " on signal ")) {
    const auto signal = IntAfter(line, " on signal ");
    s->kind = K::kWorkerFailed;
    s->global_rank = IntAfter(line, "process rank ");
    if (signal) s->exit_code = -*signal;
    constexpr std::array<std::pair<int64_t, std::string_view>, 5> kNames = {
        {{9, "SIGKILL"}, {6, "SIGABRT"}, {11, "SIGSEGV"}, {15, "SIGTERM"}, {7, "SIGBUS"}}};
    for (const auto& [number, name] : kNames) {
      if (signal == number) s->signal = std::string(name);
    }
    s->killed = signal == 9;
    const size_t open = line.find(" (", line.find(" on signal "));
    s->detail = "Open MPI: rank " + std::to_string(s->global_rank.value_or(-1)) +
                " exited on signal " + std::to_string(signal.value_or(0)) +
                (open == std::string_view::npos
                     ? ""
                     : " " + std::string(line.substr(open + 1, line.find(')', open) - open)));
    if (s->killed) s->detail += ", killed from outside (the kernel's OOM killer or the scheduler)";
    return true;
  }
  // horovodrun's Gloo launcher, when a worker it started exits non-zero: "Process 2 exit with
  // status code 1." (horovod/horovod#3060, #2907). horovod/runner/gloo_run.py prints it with the
  // index it runs the worker under, slot_info.rank: the Horovod rank, the same number that tags
  // the worker's output "[2]<stderr>:". The code is the exit status of the shell the worker runs
  // in: 128 + N when signal N ended it (137: SIGKILL, sent from outside; 134: SIGABRT, the
  // process's own abort).
  if (line.starts_with("Process ") && Contains(line, " exit with status code ")) {
    const auto rank = LeadingInt(line.substr(8));
    const auto status = IntAfter(line, " exit with status code ");
    if (rank && status && *status != 0) {
      s->kind = K::kWorkerFailed;
      s->global_rank = rank;
      s->exit_code = status;
      if (*status > 128 && *status < 128 + 32) {
        const int64_t signal = *status - 128;
        s->exit_code = -signal;
        s->killed = signal == 9;
        if (signal == 9) s->signal = "SIGKILL";
        if (signal == 6) s->signal = "SIGABRT";
        if (signal == 11) s->signal = "SIGSEGV";
      }
      s->detail = "Horovod: rank " + std::to_string(*rank) + "'s process exited with status " +
                  std::to_string(*status);
      if (s->killed) {
        s->detail += ", killed by SIGKILL from outside (the kernel's OOM killer or the scheduler)";
      } else if (!s->signal.empty()) {
        s->detail += " (" + s->signal + ")";
      }
      return true;
    }
  }
  // Slurm, when the step's cgroup ran out of memory: "slurmstepd: error: Detected 1 oom-kill
  // event(s) in StepId=37205392.0 ..." and "srun: error: node107: task 0: Out Of Memory"
  // (brain-score/vision#950). The kernel's out-of-memory handler killed a process of the step
  // (SIGKILL). Slurm's task number is its own count, not shown to be a training rank.
  // srun also prints "task 5: Killed" or "tasks 0-7: Killed" for the tasks it killed itself after
  // another task failed or the step was cancelled: the block scanner (failure_log.cc) reads those
  // as consequences, from the lines before them.
  const size_t tasks = line.find(": task");
  if ((Contains(line, "slurmstepd") && Contains(line, "oom-kill event")) ||
      (Contains(line, "srun: error: ") && tasks != std::string_view::npos &&
       (line.ends_with(": Out Of Memory") || line.ends_with(": Killed")))) {
    s->kind = K::kWorkerFailed;
    s->killed = true;
    s->exit_code = -9;
    s->signal = "SIGKILL";
    std::string who;  // "task 5", "tasks 0-7"
    if (tasks != std::string_view::npos) {
      const size_t end = line.find(':', tasks + 2);
      who = std::string(line.substr(tasks + 2, end - tasks - 2));
    }
    s->detail =
        "Slurm: " +
        (Contains(line, "slurmstepd")
             ? std::string("the cgroup's out-of-memory handler killed a process of the step")
             : who + (who.starts_with("tasks") ? " were killed" : " was killed") +
                   (line.ends_with("Out Of Memory") ? " out of memory" : "")) +
        " (SIGKILL from outside; Slurm's task number is not the global rank)";
    return true;
  }
  // srun's report of tasks that ended by themselves with an error: "srun: error:
  // slurm-job-compute-0-0: tasks 2-7: Exited with exit code 1" (facebookresearch/ParlAI#3084).
  // The step's processes exited non-zero on their own (a signal would read "Aborted", "Killed"):
  // workers that failed. The block scanner (failure_log.cc) drops those printed after Slurm
  // already ended the step (a cancel, an earlier task's failure): they are its consequences.
  if (line.starts_with("srun: error: ") && tasks != std::string_view::npos) {
    const size_t exited = line.find(": Exited with exit code ", tasks);
    const auto code = exited == std::string_view::npos ? std::nullopt
                                                       : IntAfter(line, ": Exited with exit code ");
    if (code && *code != 0) {
      s->kind = K::kWorkerFailed;
      s->exit_code = *code;
      const std::string who(line.substr(tasks + 2, exited - tasks - 2));  // "tasks 2-7"
      s->detail = "Slurm: " + who + " exited with code " + std::to_string(*code) + " by " +
                  (who.starts_with("tasks") ? "themselves" : "itself") +
                  " (Slurm's task number is not the global rank)";
      return true;
    }
  }
  // Kubernetes, when the kubelet reclaims a node's memory: "Message: The node was low on resource:
  // memory." in `kubectl describe pod` (kubeflow/trainer#301) or the event of the same words
  // before "Killing container ..." (kubeflow/kubeflow#1261); a container over its own limit shows
  // "Reason: OOMKilled". The pod's process was killed from outside (SIGTERM, then SIGKILL), as
  // Slurm's out-of-memory kill; a pod's name says no rank.
  if (Contains(line, "The node was low on resource: ") ||
      (TrimSpace(line).starts_with("Reason:") && Contains(line, "OOMKilled"))) {
    s->kind = K::kWorkerFailed;
    s->killed = true;
    s->exit_code = -9;
    s->signal = "SIGKILL";
    if (Contains(line, "OOMKilled")) {
      s->detail = "Kubernetes: the container was killed over its memory limit (OOMKilled)";
    } else {
      std::string_view resource = line.substr(line.find("low on resource: ") + 17);
      resource = resource.substr(0, resource.find_first_of(".`'\" \r"));
      s->detail =
          "Kubernetes: the kubelet evicted the pod, killing its processes, because the "
          "node was low on " +
          std::string(resource.substr(0, 40)) + " (from outside; a pod's name says no rank)";
    }
    return true;
  }
  // torch.distributed.launch before torchrun (and other launchers built on subprocess) raise
  // CalledProcessError for the first worker they find ended: "subprocess.CalledProcessError:
  // Command '[..., '--local_rank=7', ...]' died with <Signals.SIGSEGV: 11>." (pytorch/pytorch
  // #61839) or "... returned non-zero exit status 1.". The signal, when there is one, ended the
  // process (9 from outside). The command's --local_rank names no failed worker: the launcher
  // waits on its workers in local-rank order and raises with `cmd=cmd`, the command its spawn
  // loop built last, the highest local rank (torch/distributed/launch.py of the torch 1.x
  // launcher as copied in tgerimantas/pytorch@9be25b81 and vdabravolski/pytorch@cadd81ae; the
  // upstream history could not be fetched), as DeepSpeed's launcher does. Only a command that
  // carries --local_rank is a launcher's worker: CalledProcessError is raised for any subprocess
  // (a compiler OOM-killed while building an extension, ninja failing), which is no rank.
  if (Contains(line, "CalledProcessError: Command ") &&
      (Contains(line, "--local_rank") || Contains(line, "--local-rank")) &&
      (Contains(line, "' died with <Signals.") ||
       Contains(line, "returned non-zero exit status "))) {
    s->kind = K::kWorkerFailed;
    if (const size_t sig = line.rfind("<Signals."); sig != std::string_view::npos) {
      const std::string_view rest = line.substr(sig + 9);
      s->signal = std::string(rest.substr(0, rest.find(':')));
      if (const auto number = IntAfter(rest, ": ")) s->exit_code = -*number;
    } else {
      s->exit_code = IntAfter(line.substr(line.rfind("returned non-zero exit status ")),
                              "returned non-zero exit status ");
    }
    s->killed = s->exit_code == -9;
    s->detail = "a launcher's worker" +
                (s->signal.empty() ? " exited with code " + std::to_string(s->exit_code.value_or(0))
                                   : " died with " + s->signal) +
                " (the command printed is the last worker started, not the failed one)";
    return true;
  }
  // Open MPI, when MPI itself fails to start in a process: "*** An error occurred in
  // MPI_Init_thread", "*** on a NULL communicator", then "[host1:71142] Local abort before MPI_INIT
  // completed completed successfully, but am not able to aggregate error messages"
  // (horovod/horovod#465, from three processes). Before MPI_Init returns no rank exists and no
  // collective can run: a start-up fault. An error in any other MPI call comes later and is not
  // this.
  static constexpr std::string_view kMpiInitError = "*** An error occurred in MPI_Init";
  const std::string_view after_init =
      line.starts_with(kMpiInitError) ? TrimSpace(line.substr(kMpiInitError.size())) : "-";
  if (after_init.empty() || after_init == "_thread" ||
      Contains(line, "Local abort before MPI_INIT completed")) {
    s->kind = K::kBootstrap;
    s->detail =
        "MPI could not initialise (an error in MPI_Init, the process aborted before it "
        "completed): the job never formed; check the MPI installation and its launch on every "
        "host";
    return true;
  }
  // DeepSpeed's runner checks passwordless ssh to every host of its hostfile before it launches:
  // "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100
  // hostname' returned non-zero exit status 255." (deepspeedai/DeepSpeed#4907), and asks the
  // first host for its address with the command given as a Python list: "Command '['ssh
  // deepspeed-helloworld-worker-0 hostname -I']' returned non-zero exit status 255."
  // (deepspeedai/DeepSpeed#4649). 255 is ssh's own failure (the host unreachable, or refusing the
  // login): no worker started, a start-up fault that names the host (the word before "hostname").
  static constexpr std::string_view kCommand = "CalledProcessError: Command '";
  if (const size_t at = line.find(kCommand);
      at != std::string_view::npos && Contains(line, "returned non-zero exit status 255")) {
    std::string_view command = line.substr(at + kCommand.size());
    if (command.starts_with("['")) command.remove_prefix(2);
    if (command.starts_with("ssh ")) {
      s->kind = K::kBootstrap;
      if (const size_t remote = command.find(" hostname"); remote != std::string_view::npos) {
        const std::string_view before = command.substr(0, remote);
        s->peer = std::string(before.substr(before.rfind(' ') + 1));
      }
      s->detail = "the launcher could not ssh to " + (s->peer.empty() ? "a host" : s->peer) +
                  " before starting the workers (ssh exit status 255): check that host is "
                  "reachable and accepts the key";
      return true;
    }
  }
  // torchrun, when a worker exits: "failed (exitcode: -9) local_rank: 3 (pid: 812917)".
  if (Contains(line, "failed (exitcode: ") && Contains(line, "local_rank: ")) {
    s->kind = K::kWorkerFailed;
    s->exit_code = IntAfter(line, "failed (exitcode: ");
    s->local_rank = IntAfter(line, "local_rank: ");
    if (s->exit_code == -9) s->signal = "SIGKILL";
    if (s->exit_code == -6) s->signal = "SIGABRT";
    if (s->exit_code == -15) s->signal = "SIGTERM";
    s->detail = "a worker exited with code " + std::to_string(s->exit_code.value_or(0));
    return true;
  }
  // Ray, when the process behind an actor or task is gone: "The actor is dead because its worker
  // process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits
  // with a connection error code 2. End of file." (RUC-NLPIR/Tool-Star#10) or the raylet's "A
  // worker died or was killed while executing a task by an unexpected system error. ... Worker
  // PID: 87687 ..." (verl-project/verl#4921). SYSTEM_ERROR is Ray's exit type for a process
  // that ended without exiting itself (killed, by the OOM killer first of all, or crashed in C);
  // a Python exception in the actor is USER_ERROR.
  if (Contains(line, "Worker exit type: SYSTEM_ERROR")) {
    s->kind = K::kWorkerFailed;
    s->killed = true;
    const auto pid = IntAfter(line, "Worker PID: ");
    s->pid = pid;
    s->detail = "Ray: a worker process" + (pid ? " (pid " + std::to_string(*pid) + ")" : "") +
                " died without exiting (exit type SYSTEM_ERROR: killed from outside, the OOM "
                "killer first of all, or crashed); its rank is not printed";
    return true;
  }
  // Ray, when an actor is dead because the process that owned it died: "The actor is dead because
  // its owner has died. Owner Id: ... Owner Ip address: 172.21.160.9 Owner worker exit type:
  // SYSTEM_ERROR Worker exit detail: Owner's node has crashed." (hiyouga/EasyR1#324). The owner,
  // a Ray worker process, ended without exiting itself, here with its whole node: a process gone.
  if (Contains(line, "Owner worker exit type: SYSTEM_ERROR")) {
    s->kind = K::kWorkerFailed;
    s->killed = true;
    s->detail = Contains(line, "Owner's node has crashed")
                    ? "Ray: the process that owned an actor died with its node (\"Owner's node "
                      "has crashed\"); its rank is not printed"
                    : "Ray: the process that owned an actor died without exiting (exit type "
                      "SYSTEM_ERROR); its rank is not printed";
    return true;
  }
  // Ray's GCS, when a node stopped answering its health checks: "The node with node id: 0fc1...
  // and ip: 172.31.57.35 has been marked dead because the detector has missed too many heartbeats
  // from it. This can happen when a raylet crashes unexpectedly or has lagging heartbeats."
  // (ray-project/ray#18449). The node and every process on it are gone; the line names its
  // address, not a rank.
  if (Contains(line, "has been marked dead because the detector has missed too many heartbeats")) {
    s->kind = K::kWorkerFailed;
    s->killed = true;
    const std::string ip = TokenAfter(line, " and ip: ");
    s->detail = "Ray: the node" + (ip.empty() ? std::string() : " at " + ip) +
                " was marked dead (its heartbeats stopped: the raylet crashed, the node was lost "
                "or is lagging); the ranks on it are not printed";
    return true;
  }
  // Ray's memory monitor, when the raylet kills a worker because the host runs out of memory:
  // "(raylet) node_manager.cc:2963: System memory low at node with IP 172.17.0.2. Used memory
  // (23.63GB) / total capacity (33.28GB) (0.709971) exceeds threshold 0.7, killing latest task
  // with name the_real_oom_actor:Leaker.__init__ ..." (ray-project/ray#27716); newer Ray raises
  // "Task was killed due to the node running low on memory." A process killed from outside.
  if ((Contains(line, "System memory low at node") && Contains(line, "killing latest task")) ||
      Contains(line, "Task was killed due to the node running low on memory")) {
    s->kind = K::kWorkerFailed;
    s->killed = true;
    s->detail =
        "Ray's memory monitor killed a worker because the node ran low on host memory; its rank "
        "is not printed";
    return true;
  }
  // Ray's core worker, when an actor's constructor raised: "received notification on actor,
  // state: DEAD, actor_id: ..., has creation_task_exception=1" (ray-project/ray#18586). The actor
  // never started: its process failed on its own error.
  if (Contains(line, "state: DEAD") && Contains(line, "creation_task_exception=1")) {
    s->kind = K::kCrash;
    s->signal = "Ray: an actor's constructor raised (creation_task_exception)";
    return true;
  }
  // The coordination service of JAX and TensorFlow (TSL), when a task stopped sending
  // heartbeats: "/job:jax_worker/replica:0/task:37 has been set to ERROR in coordination service:
  // UNAVAILABLE: Task /job:jax_worker/replica:0/task:37 heartbeat timeout. This indicates that the
  // remote task has failed, got preempted, or crashed unexpectedly."
  // (EleutherAI/architecture-objective#26). A JAX task is a process, its index the process index
  // (jax.process_index(), the rank): that process is gone.
  if (Contains(line, "coordination service") && Contains(line, "heartbeat timeout")) {
    const auto task = IntAfter(line, "/task:");
    if (!task) return false;
    s->kind = K::kWorkerFailed;
    s->killed = true;
    s->global_rank = task;
    s->detail = "the coordination service lost task " + std::to_string(*task) +
                " (no heartbeat: the process failed, was preempted or crashed)";
    return true;
  }
  // TensorFlow's ShutdownHook (session_support.py, TPUEstimator) runs a heartbeat manager over
  // the worker tasks; a task that stopped answering is "lame": "ShutdownHook: lame workers found:
  // HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)" (megagonlabs/t5-japanese#1, a
  // preemptible TPU preempted). That worker is gone, its task index read as the coordination
  // service's is. The manager prints every lame device; with several tasks none is singled out.
  if (Contains(line, "lame workers found") && Contains(line, "HeartbeatManager(")) {
    const auto task = IntAfter(line, "/task:");
    if (!task) return false;
    const bool one = line.find("/task:") == line.rfind("/task:");
    s->kind = K::kWorkerFailed;
    s->killed = true;
    if (one) s->global_rank = task;
    s->detail = one ? "TensorFlow's heartbeat manager found worker task " + std::to_string(*task) +
                          " lame (no heartbeat: its host failed or was preempted)"
                    : "TensorFlow's heartbeat manager found several worker tasks lame (no "
                      "heartbeat: their hosts failed or were preempted)";
    return true;
  }
  // The coordination service at start-up (jax.distributed.initialize; TensorFlow's TSL): a process
  // that could not register with it, "DEADLINE_EXCEEDED: Deadline Exceeded" then "RPC:
  // /tensorflow.CoordinationService/RegisterTask" (jax-ml/jax#35905), or the connect barrier every
  // process must pass before the job exists, timed out because tasks never arrived:
  // "DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect. Timed out task names:"
  // (ayaka14732/llama-2-jax#20). The job never formed: a start-up fault. The tasks that barrier
  // lists are the ones that never connected, not processes that failed at something. A barrier of
  // the program's own (levanter's "multihost_broadcast_sync") times out mid-run and is not this.
  // Newer JAX words the same start-up barrier "Barrier timed out. Id:
  // [Init]Wait_for_all_tasks_to_register::0", after "Stopping coordination service as cluster
  // registration failed. This may be due to 1) some tasks crashed earlier before connecting, 2)
  // some tasks were never scheduled, or 3) scheduling delays." (AI-Hypercomputer/gpu-recipes#2).
  const bool registration =
      Contains(line, "Wait_for_all_tasks_to_register") ||
      (Contains(line, "coordination service") && Contains(line, "cluster registration failed"));
  if (Contains(line, "CoordinationService/RegisterTask") || registration ||
      (Contains(line, "Barrier timed out") && Contains(line, "PjRT_Client_Connect"))) {
    s->kind = K::kBootstrap;
    s->detail =
        Contains(line, "RegisterTask")
            ? "a process could not register with the coordination service at start-up "
              "(coordinator address or port unreachable)"
        : registration
            ? "the coordination service's registration barrier timed out: some processes never "
              "registered at start-up (crashed before connecting, never scheduled, or late)"
            : "the coordination service's connect barrier timed out: some processes never "
              "connected at start-up (not launched, or the coordinator address is wrong for them)";
    return true;
  }
  // torch.multiprocessing.spawn, when a process it started ends: "ProcessExitedException: process
  // 0 terminated with signal SIGKILL" or "ProcessRaisedException: ... process 1 terminated with
  // exit code 1". The number is the spawn index (a local index, like torchrun's local rank),
  // not a global rank.
  if (const size_t exc = line.find("ProcessExitedException");
      exc != std::string_view::npos && Contains(line, " terminated with ") &&
      line.find("process ", exc) != std::string_view::npos) {
    const size_t at = line.find("process ", exc);
    const std::string_view rest = line.substr(at + 8);
    s->kind = K::kWorkerFailed;
    s->local_rank = LeadingInt(rest);
    if (const size_t sig = rest.find("with signal "); sig != std::string_view::npos) {
      s->signal = TokenAfter(rest, "with signal ");
      constexpr std::array<std::pair<std::string_view, int64_t>, 5> kSignals = {
          {{"SIGKILL", -9}, {"SIGABRT", -6}, {"SIGSEGV", -11}, {"SIGTERM", -15}, {"SIGBUS", -7}}};
      for (const auto& [name, code] : kSignals) {
        if (s->signal == name) s->exit_code = code;
      }
    } else {
      s->exit_code = IntAfter(rest, "exit code ");
    }
    s->detail = "torch.multiprocessing.spawn: process " +
                std::to_string(s->local_rank.value_or(-1)) + " terminated with " +
                (s->signal.empty() ? "exit code " + std::to_string(s->exit_code.value_or(0))
                                   : "signal " + s->signal);
    return true;
  }
  // TORCH_DISTRIBUTED_DEBUG=DETAIL: each rank's next collective.
  if (Contains(line, "CollectiveFingerPrint(SequenceNumber=")) {
    s->kind = K::kFingerprint;
    s->seq = IntAfter(line, "SequenceNumber=");
    s->op = TokenAfter(line, "OpType=");
    return true;
  }
  // Teardown and the end of training.
  if (Contains(line, "ncclCommAbort") || Contains(line, "commReclaim") ||
      Contains(line, "ProcessGroupNCCL::abort()") || Contains(line, "- Abort COMPLETE")) {
    s->kind = K::kTeardown;
    return true;
  }
  // ProcessGroupNCCL's destructor, run when the program ends without destroy_process_group
  // (torch >= 2.4): "Warning: WARNING: process group has NOT been destroyed before we destruct
  // ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group
  // ..." (sehoffmann/dmlcloud#61). The message itself says where it is printed: the process is
  // at its exit. An error before it is read as that error; alone, the process ended.
  if (Contains(line, "process group has NOT been destroyed before we destruct")) {
    s->kind = K::kProcessExit;
    return true;
  }
  if (Contains(line, "End time of running main") || Contains(line, "Training completed") ||
      Contains(line, "'train_runtime'") || Contains(line, "Training finished") ||
      Contains(line, "worker group successfully finished") ||
      Contains(line, "WorkerState.SUCCEEDED")) {
    s->kind = K::kTrainingEnded;
    return true;
  }
  // Horovod's start-up, as faulthandler prints it: '  File ".../horovod/common/basics.py", line 60
  // in init' (horovod/horovod#1364): the process is inside hvd.init, its controller (Gloo or MPI)
  // still connecting to the others.
  if (Contains(line, "horovod/common/basics.py\", line ") &&
      (TrimSpace(line).ends_with(" in init") || TrimSpace(line).ends_with(", in init"))) {
    s->kind = K::kC10dFrame;
    s->op = "hvd.init";
    return true;
  }
  // '  File ".../distributed_c10d.py", line 2070, in all_gather' (Python) or
  // '  File ".../distributed_c10d.py", line 2501 in all_reduce' (faulthandler). torch 2.1 and later
  // wrap c10d's functions in a decorator whose frame, "in wrapper", comes first
  // (lyuwenyu/RT-DETR#599: "line 1451, in wrapper", then "line 1700, in all_reduce"): that frame
  // names no call, so it is no signal.
  if (Contains(line, "distributed_c10d.py\", line ")) {
    const size_t in = line.rfind(" in ");
    if (in == std::string_view::npos) return false;
    s->kind = K::kC10dFrame;
    s->op = std::string(TrimSpace(line.substr(in + 4)));
    return !s->op.empty() && s->op.find(' ') == std::string::npos && s->op != "wrapper";
  }
  // A traceback prints each frame's source line under it; the caller's line names the call into
  // torch.distributed when the traceback is cut before c10d's own frame ("    dist.barrier()",
  // then "  Fil", sql-machine-learning/elasticdl#1895). Only a statement that calls one of c10d's
  // collectives through the module ("dist." or "torch.distributed.", optionally assigned or
  // returned) counts, as a whole statement: the line ends at its call's closing parenthesis, or
  // with the call's arguments continued on the next line ("dist.all_reduce(t,"); printed text
  // that goes on after a call ("dist.barrier() done") is no source line.
  {
    std::string_view code = TrimSpace(line);
    // An assignment's target comes before the call: " = " inside the arguments is a keyword
    // argument ("dist.all_reduce(t, op = dist.ReduceOp.SUM)"), not an assignment.
    if (const size_t eq = code.find(" = "); eq != std::string_view::npos && eq < code.find('(')) {
      code = TrimSpace(code.substr(eq + 3));
    }
    if (code.starts_with("return ")) code = TrimSpace(code.substr(7));
    if (const size_t close = code.rfind(')'); close != std::string_view::npos
                                                  ? close + 1 != code.size()
                                                  : !(code.ends_with(',') || code.ends_with('('))) {
      return false;
    }
    for (const std::string_view module : {"torch.distributed.", "dist."}) {
      if (!code.starts_with(module)) continue;
      const std::string_view call = code.substr(module.size());
      const size_t paren = call.find('(');
      if (paren == std::string_view::npos) return false;
      static constexpr std::array<std::string_view, 14> kCollectives = {"all_reduce",
                                                                        "all_gather",
                                                                        "all_gather_into_tensor",
                                                                        "all_gather_object",
                                                                        "barrier",
                                                                        "broadcast",
                                                                        "broadcast_object_list",
                                                                        "reduce",
                                                                        "reduce_scatter",
                                                                        "reduce_scatter_tensor",
                                                                        "gather",
                                                                        "scatter",
                                                                        "all_to_all",
                                                                        "all_to_all_single"};
      const std::string_view name = call.substr(0, paren);
      if (std::find(kCollectives.begin(), kCollectives.end(), name) == kCollectives.end()) {
        return false;
      }
      s->kind = K::kC10dFrame;
      s->op = std::string(name);
      return true;
    }
  }
  return false;
}

}  // namespace strata::hang

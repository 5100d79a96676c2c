#include "strata/hang/parsers/failure_log.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/core/utf8.h"
#include "strata/hang/parsers/failure_fields.h"
#include "strata/hang/parsers/failure_line.h"
#include "strata/hang/parsers/horovod_stall.h"
#include "strata/hang/parsers/log_signals.h"
#include "strata/hang/parsers/run_context.h"
#include "strata/hang/parsers/ucc_comm_check.h"

namespace strata::hang {
namespace {

using failure_fields::Clean;
using failure_fields::NcclHost;
using failure_fields::RankSet;
using failure_fields::ReadPgRank;
using failure_fields::TokenAfter;

constexpr size_t kMaxTextChars = 300;
constexpr size_t kMaxListedTasks = 100000;  // a bound on a hostile list, above any real job
constexpr int kAtExitTracebackLines = 60;   // an exit handler's traceback, read after its header

// One line at a time: a line that reports a failure alone (failure_line.h) is emitted at once;
// the blocks that span lines (torchrun's summary records, the Flight Recorder analyser's report,
// Horovod's stall warnings, horovod_stall.h) are collected here.
class Scanner {
 public:
  explicit Scanner(const std::string& file) : file_(file), horovod_(file), ucc_(file) {}

  void Line(std::string_view raw, int number) {
    const std::string line = Clean(raw);
    if (line.empty()) return;
    const std::string previous = std::exchange(previous_line_, line);
    // The exception line after a kept raise (ReadCommInitError), whichever rule reads it.
    if (comm_init_raise_ && Contains(line, "NCCL error") &&
        !Contains(line, "raise RuntimeError(")) {
      comm_init_raise_.reset();
    }
    if (WatchXlaStartupWait(line, number)) return;
    if (WatchMeshMasterWait(line, number)) return;
    Context(line, number);
    if (horovod_.Line(line, number)) return;
    if (ucc_.Line(line, number)) return;
    if (ReadSummary(line, number)) return;
    if (ReadOpenMpiFirst(line, number)) return;
    if (ReadOpenMpiPeerGone(line, number)) return;
    if (ReadJaxBarrier(line, number)) return;
    WatchStoreBarrier(line, number);
    WatchDdpMembers(line, number);
    if (WatchAtExit(line, number)) return;
    if (traceback_ended_ && ReadProgramError(line, number)) return;
    if (ReadFaulthandlerTop(line, number)) return;
    if (ReadWorkerException(line, number)) return;
    FailureSignal s;
    if (!ClassifyFailureLine(line, &s)) {
      if (ReadCommInitError(line, number)) return;
      SlurmEnding(line);
      return;
    }
    // "waiting for clients" / "waiting for workers": the TCPStore server waits for the ranks to
    // join while the store is created, a start-up fault whatever was printed before it (torchrun
    // restarting the workers after progress).
    const bool store_creation =
        Contains(line, "waiting for clients") || Contains(line, "waiting for workers");
    if (s.store_wait && !store_creation && MidRun()) MarkMidRun(s, line);
    if (s.store_wait) frames_.clear();
    // c10d's "waitForInput: ... timed out" warning is printed before the traceback of the
    // exception it raises (huggingface/open-r1#690): that traceback's frames, read next, say
    // where the job was.
    const bool warning_first = s.store_wait && !store_creation &&
                               s.kind == FailureKind::kBootstrap &&
                               Contains(line, "waitForInput: ");
    if (s.kind == FailureKind::kWorkerFailed && line.ends_with(": Killed") &&
        line.starts_with("srun: error: ") && (slurm_ending_ || Contains(line, ": tasks "))) {
      // srun's kill of the tasks left after another task failed or the step was cancelled (the
      // plural form is always srun's own kill of a range): a consequence, not a first cause.
      s.killed = false;
      s.exit_code.reset();
      const size_t paren = s.detail.find(" (SIGKILL");
      s.detail = s.detail.substr(0, paren) +
                 " by srun after another task failed or the step was cancelled (a consequence, "
                 "not the first failure; Slurm's task number is not the global rank)";
    }
    // srun's "tasks 2-3: Exited with exit code 1" after the step was cancelled or another task
    // failed (facebookresearch/submitit#1708: "CANCELLED ... DUE TO JOB REQUEUE", then the
    // exits): the tasks ended because Slurm ended the step, not a failure of their own.
    if (s.kind == FailureKind::kWorkerFailed && slurm_ending_ &&
        line.starts_with("srun: error: ") && Contains(line, ": Exited with exit code ")) {
      return;
    }
    // Open MPI's box, "Primary job  terminated normally, but 1 process returned" / "a non-zero
    // exit code. Per user-direction, the job has been aborted." (NVIDIA/nccl-tests#165): the
    // count is on the line before the one read, or on the same line when it was not wrapped.
    if (s.detail == kOpenMpiAborted) {
      for (const std::string_view text : {std::string_view(line), std::string_view(previous)}) {
        const size_t but = text.find("terminated normally, but ");
        if (but == std::string_view::npos) continue;
        s.failed_processes = LeadingInt(text.substr(but + 25));
        break;
      }
    }
    // torch_xla's failure to fetch the mesh configuration names no address; the client's wait
    // lines before it name the master it fetches from, "Waiting to connect to client mesh master
    // (300 seconds) 10.164.0.6:8477" (pytorch/xla#2342): that master is the peer.
    if (s.kind == FailureKind::kBootstrap && s.peer.empty() && !mesh_master_.empty() &&
        Contains(line, "Failed to retrieve mesh configuration")) {
      s.peer = mesh_master_;
      s.detail = "torch_xla could not retrieve the mesh configuration from its mesh master at " +
                 mesh_master_ + " while setting up replication";
    }
    SlurmEnding(line);
    Emit(std::move(s), line, number);
    if (warning_first) {
      pending_warning_ = out_.size() - 1;
      pending_frames_ = 0;
    }
  }

  std::vector<FailureSignal> Take() {
    FlushRecord();
    FlushJaxBarrier();
    if (mesh_wait_) Emit(std::move(*mesh_wait_), mesh_wait_text_, mesh_wait_line_);
    mesh_wait_.reset();
    if (clique_wait_) Emit(std::move(*clique_wait_), clique_wait_text_, clique_wait_line_);
    clique_wait_.reset();
    if (fr_) out_.push_back(std::move(*fr_));
    fr_.reset();
    if (comm_init_raise_) {
      FailureSignal s;
      s.kind = FailureKind::kBootstrap;
      s.detail =
          "NCCL could not create the communicator (ncclCommInitRank's NCCL_CHECK raised; the "
          "paste ends before the error's text)";
      Emit(std::move(s), comm_init_raise_->first, comm_init_raise_->second);
      comm_init_raise_.reset();
    }
    for (FailureSignal& s : horovod_.Take()) out_.push_back(std::move(s));
    for (FailureSignal& s : ucc_.Take()) out_.push_back(std::move(s));
    // A worker's exception header is the failure only when the log holds no other failure line
    // (ReadWorkerException): any other is the exception's own error, after the header in its
    // traceback or before it when C++ logged it first (sgl-project/sglang#5602), or a failure
    // the header merely follows.
    if (out_.empty()) {
      for (FailureSignal& w : worker_exceptions_) out_.push_back(std::move(w));
    }
    worker_exceptions_.clear();
    StoreBarrierStuck();
    DdpRanksTakenTwice();
    // A launch script's DNS lookup of the master ("nslookup: can't resolve ...") is retried until
    // the master's name exists ("waiting for master"): one the run went on after (training
    // progress printed later) was a wait, not the failure.
    std::erase_if(out_, [this](const FailureSignal& s) {
      const bool lookup = s.text.starts_with("nslookup: ") || s.text.starts_with("** server can");
      return lookup && went_on_line_ > s.line;
    });
    std::stable_sort(out_.begin(), out_.end(), [](const FailureSignal& a, const FailureSignal& b) {
      return a.line < b.line;
    });
    return std::move(out_);
  }

 private:
  void Emit(FailureSignal s, std::string_view line, int number) {
    s.global_rank = s.global_rank ? s.global_rank : RankPrefix(line);
    if (!s.global_rank) s.global_rank = MpiTagRank(line);
    // Horovod's runner tags each rank's output "[N]<stderr>:" (horovod/horovod#2907's "Killed"
    // lines): N is the rank, whatever the line reports (pytorch/ignite#3466's rank 1 raising
    // "ncclCommInitRank failed: unhandled cuda error").
    if (!s.global_rank) s.global_rank = failure_fields::HorovodRunnerRank(line);
    if (!s.pg_rank) ReadPgRank(line, &s);
    if (s.host.empty()) s.host = NcclHost(line);
    s.file = file_;
    s.line = number;
    s.went_on_line = went_on_line_;
    s.stalled_ms = stalled_ms_;
    s.text = std::string(line.substr(0, kMaxTextChars));
    out_.push_back(std::move(s));
  }

  // Python's faulthandler prints each thread's frames innermost first, under a header: "Timeout
  // (0:02:00)!" (dump_traceback_later), "Thread 0x00007f... (most recent call first):", "Current
  // thread 0x... (most recent call first):" or "Stack (most recent call first):". The first
  // frame under a header is where that thread is. A thread there inside a lock file's wait,
  // torch's FileBaton.wait (torch.utils.cpp_extension's build lock, a plain file a killed build
  // leaves behind) or the filelock package's acquire, is blocked outside any collective
  // (PASSIONLab/OpenEquivariance#156: "Timeout (0:02:00)!", then file_baton.py "in wait").
  bool ReadFaulthandlerTop(std::string_view line, int number) {
    const std::string_view t = TrimSpace(line);
    const bool header = (t.starts_with("Timeout (") && t.ends_with(")!")) ||
                        ((t.starts_with("Thread 0x") || t.starts_with("Current thread 0x") ||
                          t.starts_with("Stack")) &&
                         t.ends_with("(most recent call first):"));
    if (header) {
      faulthandler_top_ = true;
      return false;
    }
    if (!std::exchange(faulthandler_top_, false) || !t.starts_with("File \"")) return false;
    // faulthandler writes 'File "f.py", line 50 in wait', without the traceback's comma.
    const bool baton = Contains(t, "torch/utils/file_baton.py\"") && t.ends_with(" in wait");
    const bool filelock = Contains(t, "filelock/") && t.ends_with(" in acquire");
    if (!baton && !filelock) return false;
    FailureSignal s;
    s.kind = FailureKind::kLockWait;
    s.op = baton ? "FileBaton.wait" : "FileLock.acquire";
    s.detail = baton ? "torch's FileBaton lock of a C++/CUDA extension build"
                     : "a FileLock (the filelock package)";
    Emit(std::move(s), line, number);
    return true;
  }

  // A Python binding of NCCL's C API (vLLM's pynccl_wrapper.py, SGLang's copy of it) checks each
  // call's result and raises "RuntimeError: NCCL error: <ncclGetErrorString's text>" from its
  // NCCL_CHECK. Under a ncclCommInitRank frame of the traceback being read the communicator could
  // not be created, whichever result NCCL gave (vllm-project/vllm#7871: "internal error - please
  // report this issue to the NCCL developers"; akash-network/awesome-akash#543, the paste cut
  // inside "unhandled syst"): a start-up fault. A result failure_line.cc reads by its name
  // ("unhandled system error", "unhandled cuda error") keeps that reading; this one is read only
  // where that one found nothing.
  //
  // A paste cut after the binding's own source line (`raise RuntimeError(f"NCCL error: ...")`,
  // vllm-project/vllm#17160) still shows the raise: Python prints a frame's source line only on
  // the path the exception took. That line is kept (comm_init_raise_) and read as the same fault
  // at the end of the log, unless the exception's own line follows it and is read instead.
  bool ReadCommInitError(std::string_view line, int number) {
    constexpr std::string_view kRaised = "RuntimeError: NCCL error: ";
    constexpr std::string_view kRaiseSource = "raise RuntimeError(f\"NCCL error: ";
    const size_t at = line.find(kRaised);
    const bool source = at == std::string_view::npos && Contains(line, kRaiseSource);
    if (at == std::string_view::npos && !source) return false;
    if (std::none_of(frames_.begin(), frames_.end(),
                     [](const std::string& f) { return f.starts_with("ncclCommInitRank"); })) {
      return false;
    }
    if (source) {
      comm_init_raise_ = std::make_pair(std::string(line), number);
      return true;
    }
    comm_init_raise_.reset();
    FailureSignal s;
    s.kind = FailureKind::kBootstrap;
    s.detail = "NCCL could not create the communicator (ncclCommInitRank raised \"NCCL error: " +
               std::string(TrimSpace(line.substr(at + kRaised.size(), 100))) + "\")";
    Emit(std::move(s), line, number);
    return true;
  }

  // The exception line that ends a traceback, when it is an error of the program's own rather
  // than of the distributed runtime: "NameError: name 'garbageeeeee' is not defined", printed by
  // each of the two workers DeepSpeed's launcher started (deepspeedai/DeepSpeed#618). The process
  // raised it and exited. RuntimeError and OSError are left out: NCCL, c10d and the store raise
  // them for failures of their own (failure_line.cc reads those).
  bool ReadProgramError(std::string_view line, int number) {
    // A program error ending a thread's traceback ended that thread only, not the process.
    const bool thread = std::exchange(thread_traceback_, false);
    static constexpr std::array<std::string_view, 14> kProgramErrors = {
        "NameError",         "AttributeError",      "TypeError",         "KeyError",
        "IndexError",        "ValueError",          "AssertionError",    "ImportError",
        "SyntaxError",       "ModuleNotFoundError", "ZeroDivisionError", "FileNotFoundError",
        "UnboundLocalError", "NotImplementedError"};
    std::string_view body = line;
    if (RankPrefix(line)) body = body.substr(body.find("]:") + 2);
    body = TrimSpace(body);
    for (std::string_view name : kProgramErrors) {
      if (!body.starts_with(name)) continue;
      const std::string_view rest = body.substr(name.size());
      if (!rest.empty() && !rest.starts_with(": ")) continue;
      if (thread) return true;
      FailureSignal s;
      s.kind = FailureKind::kPythonError;
      s.detail = std::string(body.substr(0, 120));
      Emit(std::move(s), line, number);
      return true;
    }
    return false;
  }

  // SGLang's worker reporting an exception, "[23:17:08 TP4] Exception in run_tp_server:" then a
  // traceback (sgl-project/sglang#1479, in CUDA graph capture, the paste cut before the error
  // line): that worker failed, and SGLang ends the server when a worker does. Kept aside until
  // the log ends: another failure line is the exception's own error or what it follows
  // (sglang#5602: Gloo's monitored barrier, logged just before, which names no failed rank) and
  // is read instead (Take()).
  bool ReadWorkerException(std::string_view line, int number) {
    std::optional<int64_t> tp;
    if (!failure_fields::SglangWorkerException(line, &tp)) return false;
    FailureSignal s;
    s.kind = FailureKind::kPythonError;
    s.global_rank = tp;
    s.detail = "SGLang's TP " + (tp ? std::to_string(*tp) : std::string("?")) +
               " worker raised an exception (its error line is not in the log)";
    s.file = file_;
    s.line = number;
    s.went_on_line = went_on_line_;
    s.text = std::string(line.substr(0, kMaxTextChars));
    worker_exceptions_.push_back(std::move(s));
    return true;
  }

  // A store wait that timed out while the job ran: the store used as a barrier or collective,
  // a member never arrived (FailureKind::kStoreCollectiveTimeout). Its key, when the line
  // names one, is the detail.
  static void MarkMidRun(FailureSignal& s, std::string_view line) {
    s.kind = FailureKind::kStoreCollectiveTimeout;
    if (s.op == "xla_rendezvous") return;  // its detail names the rendezvous
    const size_t keys = line.find("keys: ");
    s.detail = keys == std::string::npos ? "" : std::string(TrimSpace(line.substr(keys + 6, 120)));
  }

  // The traceback after a store-wait warning (pending_warning_): a running frame in it, with no
  // set-up frame, makes the wait mid-run; the watch ends with that traceback's exception line.
  void WatchPendingWarning(bool frame) {
    if (pending_warning_ == kNone) return;
    pending_frames_ += frame ? 1 : 0;
    if (frame && MidRun()) {
      FailureSignal& s = out_[pending_warning_];
      MarkMidRun(s, s.text);
      pending_warning_ = kNone;
    } else if (traceback_ended_ && pending_frames_ > 0) {
      pending_warning_ = kNone;
    }
  }

  // torch's _store_based_barrier at the end of init_process_group logs "Waiting in store based
  // barrier to initialize process group for rank: R, key: K (world_size=W, worker_count=C, ...)"
  // on every rank that arrived, once per logging interval, until all W have (Lightning-AI/
  // pytorch-lightning#4420). One such line is start-up going on; a rank that logs it again with the
  // same count below W waited a whole interval with nobody arriving: the barrier is stuck.
  struct BarrierWait {
    int64_t world = 0;
    int64_t count = 0;
    std::map<int64_t, int64_t> count_of;  // rank -> the count it last logged
    int stuck_line = 0;                   // the first repeat with an unchanged count; 0 if none
    bool completed = false;  // "Completed store-based barrier for key:K with W nodes." was logged
  };

  // Python's "Exception ignored in atexit callback: <function shutdown_compile_workers ...>" and,
  // in the traceback under it, a wait that gave up ("raise TimeoutExpired(self.args, timeout)",
  // "subprocess.TimeoutExpired: ...", "TimeoutError"): the program's work was done and the
  // interpreter, exiting, waited in an exit handler until that wait's timeout
  // (pytorch/pytorch#162199: inductor's compile workers, 300 s). A hang at exit, read as a
  // teardown. Another exception in an exit handler is no hang.
  bool WatchAtExit(std::string_view line, int number) {
    if (Contains(line, "Exception ignored in atexit callback")) {
      at_exit_line_ = number;
      return false;
    }
    if (at_exit_line_ == 0 || number - at_exit_line_ > kAtExitTracebackLines) return false;
    const std::string_view t = TrimSpace(line);
    const bool timed_out =
        t.starts_with("raise TimeoutExpired(") || t.starts_with("raise TimeoutError") ||
        t.starts_with("subprocess.TimeoutExpired") || t.starts_with("TimeoutError");
    if (!timed_out) return false;
    FailureSignal s;
    s.kind = FailureKind::kTeardown;
    s.detail =
        "Python exit handler: an atexit callback waited until its timeout while the process "
        "exited";
    at_exit_line_ = 0;
    Emit(std::move(s), line, number);
    return true;
  }

  void WatchStoreBarrier(std::string_view line, int number) {
    // "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 4 nodes.":
    // every rank arrived in the end; the waits before it were a late rank, not a stuck barrier.
    constexpr std::string_view kCompleted = "Completed store-based barrier for key:";
    if (const size_t done = line.find(kCompleted); done != std::string_view::npos) {
      std::string_view key = line.substr(done + kCompleted.size());
      key = key.substr(0, key.find(" with "));
      if (auto it = barrier_waits_.find(std::string(key)); it != barrier_waits_.end()) {
        it->second.completed = true;
      }
      return;
    }
    if (!Contains(line, "Waiting in store based barrier to initialize process group")) return;
    const auto rank = IntAfter(line, "for rank: ");
    const auto world = IntAfter(line, "world_size=");
    const auto count = IntAfter(line, "worker_count=");
    const size_t key_at = line.find("key: ");
    if (!rank || !world || !count || *count >= *world || key_at == std::string_view::npos) return;
    if (*rank < 0 || *rank >= *world || *world > kMaxBarrierWorld) return;
    const std::string_view key = line.substr(key_at + 5, line.find(" (", key_at) - key_at - 5);
    BarrierWait& w = barrier_waits_[std::string(key)];
    if (*count > w.count) w.stuck_line = 0;  // somebody arrived since: the barrier moves
    w.world = *world;
    w.count = *count;
    if (auto it = w.count_of.find(*rank);
        it != w.count_of.end() && it->second == *count && w.stuck_line == 0) {
      w.stuck_line = number;
    }
    w.count_of[*rank] = *count;
  }

  // A stuck barrier is a start-up fault, unless it completed, ranks arrived later, or training
  // progress was printed after it (went_on_line_). When every rank that arrived logged (as many
  // distinct ranks as the count), the ranks below the world size that never logged are the absent
  // ones.
  void StoreBarrierStuck() {
    for (const auto& [key, w] : barrier_waits_) {
      if (w.stuck_line == 0 || w.completed || went_on_line_ > w.stuck_line) continue;
      FailureSignal s;
      s.kind = FailureKind::kBootstrap;
      s.file = file_;
      s.line = w.stuck_line;
      if (static_cast<int64_t>(w.count_of.size()) == w.count) {
        for (int64_t r = 0; r < w.world; ++r) {
          if (!w.count_of.contains(r)) s.ranks.push_back(r);
        }
      }
      s.detail = fmt::format(
          "only {} of {} processes reached the store-based barrier of init ({}) and the count "
          "did not move{}",
          w.count, w.world, key,
          s.ranks.empty() ? "" : fmt::format(": rank {} never arrived", fmt::join(s.ranks, ", ")));
      s.text = s.detail;
      out_.push_back(std::move(s));
    }
  }

  // Lightning announces each process's place before it joins the process group: "initializing
  // ddp: GLOBAL_RANK: 1, MEMBER: 2/8" (1.x) or "Initializing distributed: GLOBAL_RANK: 1, MEMBER:
  // 2/8" (2.x), once per process. The same global rank announced twice while some rank below the
  // world size never is announced means two processes took one place (each node believed it was
  // node 0: Lightning-AI/pytorch-lightning#4389): the group can never form, a start-up fault. A
  // log that shows every rank again (a restart) is not this.
  void WatchDdpMembers(std::string_view line, int number) {
    const size_t at = line.find("GLOBAL_RANK: ");
    if (at == std::string_view::npos || !Contains(line, "MEMBER: ")) return;
    const auto rank = IntAfter(line, "GLOBAL_RANK: ");
    const size_t slash = line.find('/', line.find("MEMBER: "));
    if (!rank || slash == std::string_view::npos) return;
    const auto world = LeadingInt(line.substr(slash + 1));
    if (!world || *rank < 0 || *rank >= *world || *world > kMaxBarrierWorld) return;
    ddp_world_ = *world;
    if (++ddp_members_[*rank] == 2 && ddp_twice_line_ == 0) ddp_twice_line_ = number;
  }

  void DdpRanksTakenTwice() {
    if (ddp_twice_line_ == 0 || static_cast<int64_t>(ddp_members_.size()) >= ddp_world_) return;
    std::vector<int64_t> twice;
    for (const auto& [rank, times] : ddp_members_) {
      if (times > 1) twice.push_back(rank);
    }
    FailureSignal s;
    s.kind = FailureKind::kBootstrap;
    s.file = file_;
    s.line = ddp_twice_line_;
    s.detail = fmt::format(
        "global rank {} announced by two processes while only {} of {} ranks appear: processes "
        "took the same places (the launcher's node rank or tasks per node disagree with the "
        "trainer's), so the process group cannot form",
        fmt::join(twice, ", "), ddp_members_.size(), ddp_world_);
    s.text = s.detail;
    out_.push_back(std::move(s));
  }

  // Slurm ends the step: a step or job cancelled ("slurmstepd: error: *** STEP 1234.0 ON node1
  // CANCELLED AT ..."), srun aborting it, or srun's report of a task that failed by itself
  // ("srun: error: node1: task 3: Aborted (core dumped)", "...: Exited with exit code 1").
  void SlurmEnding(std::string_view line) {
    const bool cancelled = Contains(line, "slurmstepd") && Contains(line, " CANCELLED");
    const bool task_failed = line.starts_with("srun: error: ") && Contains(line, ": task") &&
                             !line.ends_with(": Killed");
    if (cancelled || task_failed || Contains(line, "srun: Job step aborted")) slurm_ending_ = true;
  }

  // Where the job was when the line was written (run_context.h): training progress printed so
  // far, and the functions of the traceback being read.
  // A traceback's frames hold for its own exception line and for no line after it.
  void Context(std::string_view line, int number) {
    // Python's threading module opens the traceback of an exception that ended a thread, not
    // the program, with "Exception in thread Thread-4:" (tensorflow/tpu#590: TensorFlow's
    // preemption watcher thread died on "KeyError: 'health'"); the process runs on.
    std::string_view opening = line;
    if (RankPrefix(line)) opening = opening.substr(opening.find("]:") + 2);
    if (TrimSpace(opening).starts_with("Exception in thread ")) {
      thread_exception_next_ = true;
    } else if (Contains(line, "Traceback (most recent call last)")) {
      thread_traceback_ = std::exchange(thread_exception_next_, false);
    }
    if (traceback_ended_ || Contains(line, "Traceback (most recent call last)")) frames_.clear();
    traceback_ended_ = false;
    if (std::string f = run_context::FrameFunction(line); !f.empty()) {
      if (frames_.size() >= kMaxFrames) frames_.erase(frames_.begin());
      frames_.push_back(std::move(f));
      WatchPendingWarning(true);
      return;
    }
    traceback_ended_ = !frames_.empty() && run_context::EndsTraceback(line);
    WatchPendingWarning(false);
    if (const auto stalled = run_context::TqdmStalledMs(line)) {
      stalled_ms_ = stalled;
    } else if (run_context::ShowsTrainingProgress(line)) {
      stalled_ms_.reset();
    }
    if (run_context::ShowsTrainingProgress(line)) {
      progress_seen_ = true;
      went_on_line_ = number;
    }
    // accelerate's find_executable_batch_size caught an out-of-memory error and retries smaller.
    if (Contains(line, "Decreasing batch size to")) went_on_line_ = number;
  }

  // A store wait that timed out belongs to the running job, not to its start-up, when the
  // traceback above it passes through no set-up function and either runs a barrier, collective
  // or the training loop, or training progress was printed before it.
  bool MidRun() const {
    bool running = false;
    for (const std::string& f : frames_) {
      if (run_context::SetUpFunction(f)) return false;
      running = running || run_context::RunningFunction(f);
    }
    return running || progress_seen_;
  }

  // JAX's coordination service, when a barrier of the program's own times out: "XlaRuntimeError:
  // DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: multihost_broadcast_sync0. Timed out task
  // names:", then a line per task, "/job:jax_worker/replica:0/task:3" (marin-community/
  // marin#1933). The service lists the tasks still pending when the barrier expired, not those
  // that arrived; a task's number is its process index (jax.process_index(), the rank). Those
  // processes never reached the barrier the others wait at: they are behind. JAX's start-up
  // barriers (PjRT_Client_Connect, task registration) are start-up faults (failure_line.cc).
  bool ReadJaxBarrier(std::string_view line, int number) {
    if (line.ends_with("Timed out task names:") && Contains(line, "Barrier timed out") &&
        !Contains(line, "PjRT_Client_Connect") &&
        !Contains(line, "Wait_for_all_tasks_to_register")) {
      FlushJaxBarrier();
      jax_barrier_ = FailureSignal{};
      jax_barrier_->kind = FailureKind::kBarrierMissing;
      jax_barrier_->op = "jax_barrier";
      std::string id = TokenAfter(line, Contains(line, "Barrier_id: ") ? "Barrier_id: " : "Id: ");
      while (id.ends_with('.')) id.pop_back();
      jax_barrier_->detail = id.substr(0, 120);
      jax_barrier_start_ = std::string(line.substr(0, kMaxTextChars));
      jax_barrier_line_ = number;
      return true;
    }
    if (!jax_barrier_) return false;
    if (line.starts_with("/job:") && Contains(line, "/task:")) {
      if (const auto task = IntAfter(line, "/task:");
          task && jax_barrier_->ranks.size() < kMaxListedTasks)
        jax_barrier_->ranks.push_back(*task);
      return true;
    }
    FlushJaxBarrier();
    return false;
  }

  // torch_xla's mesh client at start-up: "mesh_service.cc:208] Waiting to connect to client mesh
  // master (300 seconds) 10.164.15.199:8477" (pytorch/xla#2137), then it waits up to that long for
  // the master's gRPC channel. A log that ends on the wait (other ordinals' same line aside) shows
  // a client still not through to the master: the replicas never formed, a start-up fault naming
  // the master. Any later line is the log going on, and the wait no failure.
  bool WatchMeshMasterWait(std::string_view line, int number) {
    static constexpr std::string_view kWait = "Waiting to connect to client mesh master (";
    const size_t at = line.find(kWait);
    if (at == std::string_view::npos) {
      mesh_wait_.reset();
      return false;
    }
    const std::string_view rest = line.substr(at + kWait.size());
    const size_t close = rest.find(") ");
    if (close != std::string_view::npos) {
      const std::string_view addr = TrimSpace(rest.substr(close + 2));
      mesh_master_ = std::string(addr.substr(0, addr.find(' ')));
    }
    if (mesh_wait_) return true;
    FailureSignal s;
    s.kind = FailureKind::kBootstrap;
    s.peer = mesh_master_;
    s.detail = "torch_xla's mesh client was still waiting to connect to its mesh master" +
               (s.peer.empty() ? std::string() : " at " + s.peer) +
               " when the log ends: the replicas never formed";
    mesh_wait_ = std::move(s);
    mesh_wait_text_ = std::string(line);
    mesh_wait_line_ = number;
    return true;
  }

  // XLA's in-process rendezvous warns while it waits for the threads (one per local device) of an
  // NCCL clique's set-up: "rendezvous.cc:38] This thread has been waiting for `initialize clique
  // for rank 6; clique=devices=[0,...,15]; ...` for 10 seconds and may be stuck. Expected 8
  // threads to join the rendezvous, but not all of them arrived on time." (jax-ml/jax#22740).
  // JAX's TPU backend warns while it waits for the other hosts of a pod slice: "UserWarning: TPU
  // backend initialization is taking more than 60.0 seconds. Did you run your code on all TPU
  // hosts?" then Python's "  warnings.warn(" (jax-ml/jax#19971, a v4-32). NCCL retries a refused
  // connect, "socketPollConnect: connect to 10.29.224.148<52333> returned Connection refused,
  // retrying (18/34) after sleep for 1800 msec" (pytorch/pytorch#167288): nothing listens at
  // that address, so no connection to it has formed. A log that ends on such lines shows the
  // communicator, backend or connection still not formed: a start-up fault (the retried
  // address its peer). Any other line after them is the program going on, and the wait no
  // failure.
  bool WatchXlaStartupWait(std::string_view line, int number) {
    const bool clique = Contains(line, "This thread has been waiting for `initialize clique") &&
                        Contains(line, "may be stuck");
    const bool tpu = Contains(line, "TPU backend initialization is taking more than");
    const bool refused = Contains(line, "socketPollConnect: connect to ") &&
                         Contains(line, "returned Connection refused, retrying (");
    if (!clique && !tpu && !refused) {
      if (clique_wait_ && line == "warnings.warn(") return true;  // the warning's source line
      clique_wait_.reset();
      return false;
    }
    if (clique_wait_) return true;
    FailureSignal s;
    s.kind = FailureKind::kBootstrap;
    if (refused) {
      s.peer = TokenAfter(line, "socketPollConnect: connect to ");
      s.detail = "NCCL was still retrying a refused connection to " + s.peer +
                 " when the log ends: nothing listened there, the connection never formed";
    } else {
      s.detail = clique ? "XLA was still waiting for the devices of an NCCL clique to join its "
                          "initialisation when the log ends: the communicator never formed"
                        : "JAX's TPU backend was still initialising when the log ends (it waits "
                          "for every host of the slice to run the program): the job never "
                          "started";
    }
    clique_wait_ = std::move(s);
    clique_wait_text_ = std::string(line.substr(0, kMaxTextChars));
    clique_wait_line_ = number;
    return true;
  }

  void FlushJaxBarrier() {
    if (!jax_barrier_) return;
    FailureSignal s = std::move(*jax_barrier_);
    jax_barrier_.reset();
    if (s.ranks.empty()) return;  // no task named: the barrier's id alone says nothing more
    Emit(std::move(s), jax_barrier_start_, jax_barrier_line_);
  }

  // Open MPI's report of the first process to exit with an error: "The first process to do so
  // was:", then "Process name: [[29973,1],0]" (job, step, rank) and "Exit code:    1"
  // (horovod/horovod#1421). The rank is the global rank.
  //
  // horovodrun's Gloo launcher copies the wording (horovod/runner/gloo_run.py raises "Horovod
  // detected that one or more processes exited with non-zero status ... The first process to do
  // so was:\nProcess name: {name}\nExit code: {code}") with a name of its own: the host and
  // the worker's local rank, "elastic-test-worker-1[0]" (horovod/horovod#2484). That names no
  // global rank. The code is the shell's exit status (the launcher runs each worker through
  // bash): 128 + N when signal N ended it, 137 for SIGKILL, which comes from outside (the OOM
  // killer, the scheduler, a kill).
  bool ReadOpenMpiFirst(std::string_view line, int number) {
    if (Contains(line, "The first process to do so was")) {
      mpi_first_ = FailureSignal{};
      mpi_first_->kind = FailureKind::kWorkerFailed;
      mpi_first_->file = file_;
      mpi_first_->line = number;
      return true;
    }
    if (!mpi_first_) return false;
    if (line.starts_with("Process name:")) {
      if (const size_t close = line.find("],"); close != std::string_view::npos) {
        mpi_first_->global_rank = LeadingInt(line.substr(close + 2));
      } else if (const std::string_view name = TrimSpace(line.substr(13));
                 !name.empty() && !name.starts_with('[') && name.ends_with(']') &&
                 name.find('[') != std::string_view::npos) {
        const size_t open = name.rfind('[');
        mpi_first_->host = std::string(name.substr(0, open));
        mpi_first_->local_rank = LeadingInt(name.substr(open + 1));
      }
      return true;
    }
    if (line.starts_with("Exit code:")) {
      FailureSignal s = std::move(*mpi_first_);
      mpi_first_.reset();
      s.exit_code = LeadingInt(TrimSpace(line.substr(10)));
      if (!s.global_rank && !s.host.empty() && s.local_rank && s.exit_code && *s.exit_code != 0) {
        s.killed = *s.exit_code == 128 + 9;
        if (s.killed) {
          s.exit_code = -9;
          s.signal = "SIGKILL";
        }
        s.detail = fmt::format(
            "Horovod: the process on host {} with local rank {} was the first to exit with an "
            "error ({}); the launcher names host and local rank, not the global rank",
            s.host, *s.local_rank,
            s.killed ? "exit status 137: killed by SIGKILL from outside (the kernel's OOM killer "
                       "or the scheduler)"
                     : "exit status " + std::to_string(*s.exit_code));
        s.text = s.detail;
        out_.push_back(std::move(s));
        return true;
      }
      if (!s.global_rank || !s.exit_code) return true;
      s.detail = "Open MPI: rank " + std::to_string(*s.global_rank) +
                 " was the first process to exit with an error (exit code " +
                 std::to_string(*s.exit_code) + ")";
      s.text = s.detail;
      out_.push_back(std::move(s));
      return true;
    }
    if (line.starts_with("Local host:") || line.starts_with("Local PID:")) return true;
    mpi_first_.reset();  // the block ended without its exit code
    return false;
  }

  // Open MPI, when a process's connection to a peer drops: the box "An MPI communication peer
  // process has unexpectedly disconnected. ... the root cause of this problem is the failure of
  // the peer", then "Local host: reco-zl-c4-reco313", "Local PID: 7720", "Peer host:
  // reco-zl-c4-reco316" (horovod/horovod#1950). The process on the peer host ended first (a
  // crash, or an exit without MPI_Finalize): gone, as a Gloo peer that closed its connection is.
  // The box names that process's host, not its rank.
  bool ReadOpenMpiPeerGone(std::string_view line, int number) {
    if (Contains(line, "An MPI communication peer process has unexpectedly disconnected")) {
      mpi_peer_box_ = number;
      return true;
    }
    if (mpi_peer_box_ == 0) return false;
    constexpr int kBoxLines = 20;  // the box's text and its host lines
    if (number - mpi_peer_box_ > kBoxLines) {
      mpi_peer_box_ = 0;
      return false;
    }
    if (!line.starts_with("Peer host:")) return false;
    mpi_peer_box_ = 0;
    FailureSignal s;
    s.kind = FailureKind::kWorkerFailed;
    s.killed = true;
    s.peer = std::string(TrimSpace(line.substr(10)));
    s.detail = "Open MPI: the MPI process on host " + s.peer +
               " disconnected unexpectedly (it crashed or exited without MPI_Finalize); the "
               "box does not print its rank";
    Emit(std::move(s), line, number);
    out_.back().global_rank.reset();  // a tag on the line is the reporting process's
    return true;
  }

  // torchrun's summary: "Failures:" / "Root Cause (first observed failure):", then records
  // "[0]:" with "time :", "host :", "rank : 10 (local_rank: 2)", "exitcode : -6 (pid: ...)",
  // "traceback : Signal 6 (SIGABRT) received by PID ...". The analyser's report is read here too.
  bool ReadSummary(std::string_view line, int number) {
    if (Contains(line, "Root Cause (first observed failure)")) {
      FlushRecord();
      in_summary_ = true;
      root_ = true;
      return true;
    }
    if (line == "Failures:" || line.ends_with(" Failures:")) {
      FlushRecord();
      in_summary_ = true;
      root_ = false;
      return true;
    }
    if (ReadOneLineRecord(line, number)) return true;
    if (Contains(line, "Not all ranks joining collective")) {
      if (fr_) out_.push_back(std::move(*fr_));
      fr_ = FailureSignal{};
      fr_->kind = FailureKind::kFrNotJoined;
      fr_->seq = IntAfter(line, "sequence number: ");
      if (!fr_->seq) fr_->seq = IntAfter(line, "joining collective ");
      fr_->file = file_;
      fr_->line = number;
      fr_->text = std::string(line.substr(0, kMaxTextChars));
      return true;
    }
    // The analyser's other report, a collective whose records disagree: "Collective sequence
    // number: 1487 has errors", its fields, then "error msg: Culprit rank 1; Error type:
    // COLLECTIVE_STATE_MISMATCH, Expected state: 'scheduled' does not match found state:
    // 'completed'" (pytorch/pytorch#151666).
    if (Contains(line, "Collective sequence number: ") && line.ends_with(" has errors")) {
      if (fr_) out_.push_back(std::move(*fr_));
      fr_ = FailureSignal{};
      fr_->kind = FailureKind::kFrMismatch;
      fr_->seq = IntAfter(line, "sequence number: ");
      fr_->file = file_;
      fr_->line = number;
      fr_->text = std::string(line.substr(0, kMaxTextChars));
      return true;
    }
    if (fr_ && fr_->kind == FailureKind::kFrMismatch && line.starts_with("error msg: ")) {
      if (const auto culprit = IntAfter(line, "Culprit rank ")) fr_->ranks = {*culprit};
      std::string type = TokenAfter(line, "Error type: ");
      if (type.ends_with(',') || type.ends_with(';')) type.pop_back();
      fr_->detail = type.substr(0, 80);
    }
    if (fr_) {
      if (line.starts_with("missing ranks:")) fr_->ranks = RankSet(line);
      if (line.starts_with("collective: ")) {
        std::string_view op = line.substr(12);
        if (const size_t colon = op.find(':'); colon != std::string_view::npos)
          op.remove_prefix(colon + 1);
        fr_->op = std::string(op);
      }
      if (line.starts_with("group info: "))
        fr_->pg_id = std::string(line.substr(12, line.find(':', 12) - 12));
    }
    const bool record_header = line.front() == '[' && line.ends_with("]:") && line.size() < 12;
    // A paste cut below "Failures:" starts at a record (pytorch/pytorch#121209): "[2]:" then its
    // fields is a record of the summary as well. A header whose fields do not follow is dropped
    // (FlushRecord keeps records with a rank only).
    if (!in_summary_ && record_header && line.size() > 3 &&
        std::all_of(line.begin() + 1, line.end() - 2,
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      in_summary_ = true;
      root_ = false;
    }
    // A paste that keeps only a record's fields, without "Failures:" or "Root Cause" above nor the
    // "[0]:" header (NVIDIA/Megatron-LM#1880: "rank : 0 (local_rank: 0)", "exitcode : -11 (pid:
    // 6421)", "traceback : Signal 11 (SIGSEGV) ..."): torchrun's rank field, with its local rank
    // in parentheses, opens a record as well.
    if (!in_summary_ && !record_header && RankField(line)) {
      in_summary_ = true;
      root_ = false;
      FlushRecord();
      record_ = FailureSignal{};
      record_->kind = FailureKind::kChildFailed;
      record_->file = file_;
      record_->line = number;
    }
    if (!in_summary_) return false;
    if (record_header) {
      FlushRecord();
      record_ = FailureSignal{};
      record_->kind = FailureKind::kChildFailed;
      record_->root_cause = root_;
      record_->file = file_;
      record_->line = number;
      return true;
    }
    if (!record_) {
      if (line.starts_with("===") || line.starts_with("---")) return true;
      in_summary_ = false;
      return false;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      FlushRecord();
      in_summary_ = false;
      return false;
    }
    const std::string_view key = TrimSpace(line.substr(0, colon));
    const std::string_view value = TrimSpace(line.substr(colon + 1));
    if (key == "rank") {
      record_->global_rank = LeadingInt(value);
      record_->local_rank = IntAfter(value, "local_rank:");
    } else if (key == "host") {
      record_->host = std::string(value);
    } else if (key == "time") {
      record_->time = std::string(value);
    } else if (key == "exitcode") {
      record_->exit_code = LeadingInt(value);
    } else if (key == "traceback") {
      if (const size_t open = value.find('('); open != std::string_view::npos) {
        record_->signal = std::string(value.substr(open + 1, value.find(')', open) - open - 1));
      }
      record_->text = std::string(value.substr(0, kMaxTextChars));
      // The failure itself may be printed inside the record ("traceback : RuntimeError: Detected
      // mismatch between collectives ..."): read it as the line it would have been.
      if (FailureSignal inner; ClassifyFailureLine(value, &inner)) {
        inner.global_rank = record_->global_rank;
        Emit(std::move(inner), value, number);
      }
    } else if (key != "error_file") {
      FlushRecord();
      in_summary_ = false;
      return false;
    }
    return true;
  }

  // A record whole on one line: a log platform that collapses a multi-line event (CloudWatch
  // behind its "  | 2024-08-23T22:22:58.879Z | " columns, Lightning-AI/litData#340) prints "[2]:
  // time : 2024-08-23_22:22:58 host : algo-2 rank : 2 (local_rank: 2) exitcode : -6 (pid: 189)
  // error_file: <N/A> traceback : Signal 6 (SIGABRT) received by PID 189". Its fields are the
  // multi-line record's, in the same order; the rank and the exit code must both be there.
  bool ReadOneLineRecord(std::string_view line, int number) {
    if (ReadFlattenedRecord(line, number)) return true;
    const size_t rank_at = line.find("rank : ");
    const size_t exit_at = line.find("exitcode : ");
    if (rank_at == std::string_view::npos || exit_at == std::string_view::npos ||
        exit_at < rank_at || !Contains(line.substr(rank_at), "(local_rank: ")) {
      return false;
    }
    const auto rank = LeadingInt(line.substr(rank_at + 7));
    const auto exit_code = LeadingInt(line.substr(exit_at + 11));
    if (!rank || !exit_code) return false;
    FlushRecord();
    FailureSignal r;
    r.kind = FailureKind::kChildFailed;
    r.root_cause = in_summary_ && root_;
    r.file = file_;
    r.line = number;
    r.global_rank = rank;
    r.local_rank = IntAfter(line.substr(rank_at), "(local_rank: ");
    r.exit_code = exit_code;
    r.host = TokenAfter(line, "host : ");
    r.time = TokenAfter(line, "time : ");
    if (const size_t tb = line.find("traceback : "); tb != std::string_view::npos) {
      const std::string_view value = line.substr(tb + 12);
      if (const size_t open = value.find('('); open != std::string_view::npos) {
        r.signal = std::string(value.substr(open + 1, value.find(')', open) - open - 1));
      }
      r.text = std::string(value.substr(0, kMaxTextChars));
    } else {
      r.text = "exitcode " + std::to_string(*exit_code);
    }
    out_.push_back(std::move(r));
    return true;
  }

  // A record whose layout a copy flattened (ZhehengJiangLancaster/AMVUR#2, a summary copied from
  // a rendered page): the field names lose their " : " and their underscores, and the fields run
  // together, "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>". The line starts
  // with the rank field, the local rank follows it, then the exit code; all three must be there.
  // It is the root cause when the last summary heading above it was "Root Cause".
  bool ReadFlattenedRecord(std::string_view line, int number) {
    if (!line.starts_with("rank") || line.size() < 5 || !IsAsciiDigit(line[4])) return false;
    const auto rank = LeadingInt(line.substr(4));
    const size_t local_at = line.find(" (local rank: ");
    const size_t exit_at = line.find(")exitcode: ");
    if (!rank || local_at == std::string_view::npos || exit_at == std::string_view::npos ||
        exit_at < local_at) {
      return false;
    }
    const auto exit_code = LeadingInt(line.substr(exit_at + 11));
    if (!exit_code) return false;
    FlushRecord();
    FailureSignal r;
    r.kind = FailureKind::kChildFailed;
    r.root_cause = root_;
    r.file = file_;
    r.line = number;
    r.global_rank = rank;
    r.local_rank = LeadingInt(line.substr(local_at + 14));
    r.exit_code = exit_code;
    r.text = std::string(line.substr(0, kMaxTextChars));
    out_.push_back(std::move(r));
    return true;
  }

  static bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

  // torchrun's record field "rank : 10 (local_rank: 2)".
  static bool RankField(std::string_view line) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || TrimSpace(line.substr(0, colon)) != "rank") return false;
    const std::string_view value = TrimSpace(line.substr(colon + 1));
    return LeadingInt(value).has_value() && Contains(value, "(local_rank:");
  }

  void FlushRecord() {
    if (record_ && record_->global_rank) {
      if (record_->text.empty() && record_->exit_code) {
        record_->text = "exitcode " + std::to_string(*record_->exit_code);
      }
      out_.push_back(std::move(*record_));
    }
    record_.reset();
  }

  static constexpr size_t kMaxFrames = 200;
  static constexpr int64_t kMaxBarrierWorld =
      1 << 20;  // a bound on a hostile line's world_size  // a traceback's frames kept, the
                // innermost last
  static constexpr size_t kNone = static_cast<size_t>(-1);

  const std::string& file_;
  std::vector<FailureSignal> out_;
  std::vector<std::string> frames_;
  // A NCCL_CHECK raise line under ncclCommInitRank whose exception line has not followed yet
  // (ReadCommInitError): its text and number.
  std::optional<std::pair<std::string, int>> comm_init_raise_;
  bool progress_seen_ = false;
  int at_exit_line_ = 0;  // "Exception ignored in atexit callback" (WatchAtExit); 0 if none
  int went_on_line_ = 0;  // the last line that showed the run going on (FailureSignal)
  std::optional<int64_t> stalled_ms_;   // the last progress bar stood at 0 (FailureSignal)
  bool traceback_ended_ = false;        // the last line was a traceback's exception line
  bool thread_exception_next_ = false;  // "Exception in thread ...:" read, its traceback next
  bool thread_traceback_ = false;       // the traceback being read is a thread's, not the program's
  bool slurm_ending_ = false;           // Slurm cancelled the step or a task failed (SlurmEnding)
  size_t pending_warning_ = kNone;      // out_'s store-wait warning whose traceback comes next
  int pending_frames_ = 0;              // frames read since that warning
  std::optional<FailureSignal> mpi_first_;
  int mpi_peer_box_ = 0;       // the line of Open MPI's peer-disconnected box, 0 outside it
  std::string previous_line_;  // the last non-empty line read, cleaned
  std::optional<FailureSignal> mesh_wait_;    // a mesh-master wait no later line has followed yet
  std::optional<FailureSignal> clique_wait_;  // XLA's or JAX's start-up wait, not yet followed
  std::string clique_wait_text_;
  int clique_wait_line_ = 0;
  std::string mesh_master_;  // the address the latest mesh-master wait named ("10.164.0.6:8477")
  std::string mesh_wait_text_;
  int mesh_wait_line_ = 0;
  std::optional<FailureSignal> jax_barrier_;  // a JAX barrier's report, its task list under way
  std::string jax_barrier_start_;
  int jax_barrier_line_ = 0;
  bool in_summary_ = false;
  bool root_ = false;
  std::optional<FailureSignal> record_;
  std::optional<FailureSignal> fr_;
  HorovodStallReader horovod_;
  UccCommCheckReader ucc_;
  std::vector<FailureSignal> worker_exceptions_;      // ReadWorkerException, until Take()
  std::map<std::string, BarrierWait> barrier_waits_;  // store-based barrier key -> its waits
  std::map<int64_t, int> ddp_members_;  // Lightning's announced global rank -> times announced
  int64_t ddp_world_ = 0;
  int ddp_twice_line_ = 0;         // the first announcement of a rank already announced; 0 if none
  bool faulthandler_top_ = false;  // the line before was a faulthandler header
};

}  // namespace

namespace {

bool Classifies(std::string_view raw) {
  FailureSignal probe;
  return ClassifyFailureLine(Clean(raw), &probe);
}

bool Alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A terminal wraps a long line at its width, inside a word: "... terminated with exception: CUDA
// erro" + "r: unspecified launch failure" (clessig/atmorep#55). The two are one line when
// neither says anything alone and together they do: the words that match then straddle the cut.
// A continuation opening with '[' starts a prefixed message of its own and is never joined.
// A word wrap (an editor's, a mail's) breaks at a space and drops it: "...:29600 (errno:" + "98 -
// Address already in use)." (deepspeedai/DeepSpeed#3916; c10d prints "(errno: 98 - ...)"). A
// line shorter than the widest of its paste was not cut at a terminal's width, and a cut that
// is not inside a word or number (both sides letters or digits) lost a space there: joined
// with one, as long as the joined line still reads.
std::string JoinedWrap(std::string_view line, std::string_view next, size_t widest) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (next.ends_with('\r')) next.remove_suffix(1);
  if (TrimSpace(line).empty() || TrimSpace(next).empty() || next.front() == '[') return "";
  if (Classifies(line) || Classifies(next)) return "";
  if (Utf8CodePoints(line) < widest && !(Alnum(line.back()) && Alnum(next.front())) &&
      line.back() != ' ' && next.front() != ' ') {
    std::string spaced = std::string(line) + " " + std::string(next);
    if (Classifies(spaced)) return spaced;
  }
  std::string joined = std::string(line) + std::string(next);
  return Classifies(joined) ? joined : "";
}

}  // namespace

std::vector<FailureSignal> ScanFailures(std::string_view text, const std::string& file) {
  Scanner scanner(file);
  // The lines once (without their '\n'), and the widest of them in characters (UTF-8 code
  // points, not bytes: a progress bar's blocks are 3 bytes each), for JoinedWrap.
  std::vector<std::string_view> lines;
  size_t widest = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    lines.push_back(line);
    widest = std::max(
        widest, Utf8CodePoints(line.ends_with('\r') ? line.substr(0, line.size() - 1) : line));
    at = end + 1;
  }
  int number = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (number < std::numeric_limits<int>::max()) ++number;
    if (i + 1 < lines.size()) {
      if (const std::string joined = JoinedWrap(lines[i], lines[i + 1], widest); !joined.empty()) {
        scanner.Line(joined, number);
        if (number < std::numeric_limits<int>::max()) ++number;
        ++i;
        continue;
      }
    }
    scanner.Line(lines[i], number);
  }
  return scanner.Take();
}

std::string_view FailureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kCudaError:
      return "cuda_error";
    case FailureKind::kCrash:
      return "crash";
    case FailureKind::kChildFailed:
      return "child_failed";
    case FailureKind::kBootstrap:
      return "bootstrap";
    case FailureKind::kBootstrapTrace:
      return "bootstrap_trace";
    case FailureKind::kNetwork:
      return "network";
    case FailureKind::kNetMismatch:
      return "net_mismatch";
    case FailureKind::kFrNotJoined:
      return "fr_not_joined";
    case FailureKind::kFingerprint:
      return "fingerprint";
    case FailureKind::kTeardown:
      return "teardown";
    case FailureKind::kTrainingEnded:
      return "training_ended";
    case FailureKind::kProcessExit:
      return "process_exit";
    case FailureKind::kSetting:
      return "setting";
    case FailureKind::kC10dFrame:
      return "c10d_frame";
    case FailureKind::kWorkerFailed:
      return "worker_failed";
    case FailureKind::kDetailMismatch:
      return "detail_mismatch";
    case FailureKind::kHorovodStall:
      return "horovod_stall";
    case FailureKind::kStoreCollectiveTimeout:
      return "store_collective_timeout";
    case FailureKind::kBarrierMissing:
      return "barrier_missing";
    case FailureKind::kBarrierNoAnswer:
      return "barrier_no_answer";
    case FailureKind::kInitTrace:
      return "init_trace";
    case FailureKind::kHcclTimeout:
      return "hccl_timeout";
    case FailureKind::kMpiCollectiveWait:
      return "mpi_collective_wait";
    case FailureKind::kPythonError:
      return "python_error";
    case FailureKind::kUccNotPosted:
      return "ucc_not_posted";
    case FailureKind::kFrMismatch:
      return "fr_mismatch";
    case FailureKind::kEpTimeout:
      return "ep_timeout";
    case FailureKind::kLockWait:
      return "lock_wait";
  }
  return "other";
}

}  // namespace strata::hang

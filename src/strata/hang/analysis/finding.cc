#include "strata/hang/analysis/finding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "strata/hang/analysis/finding_reports.h"
#include "strata/hang/analysis/finding_time.h"
#include "strata/hang/analysis/gloo_finding.h"
#include "strata/hang/analysis/gloo_sequences.h"
#include "strata/hang/analysis/horovod_finding.h"
#include "strata/hang/analysis/pg_stall.h"
#include "strata/hang/analysis/silent_ranks.h"
#include "strata/hang/analysis/stack_tree.h"

namespace strata::hang {
namespace {

std::vector<int64_t> Sorted(const std::set<int64_t>& s) { return {s.begin(), s.end()}; }

// A crash read off failure lines: the ranks they name, the first line cited.
void CrashOf(const std::vector<const FailureSignal*>& lines, std::string summary, Finding& f) {
  std::set<int64_t> ranks;
  for (const FailureSignal* s : lines) {
    if (s->global_rank) ranks.insert(*s->global_rank);
  }
  f.kind = "crash";
  f.ranks = Sorted(ranks);
  f.summary = std::move(summary);
  f.evidence.push_back(Cite(*lines.front()));
}

// The rank a line speaks for: torchrun's prefix, else the rank inside the default group's (or the
// only group's) message prefix.
std::optional<int64_t> SpeakingRank(const FailureSignal& s) {
  if (s.global_rank) return s.global_rank;
  return s.pg_rank;
}

// The settings a network or bootstrap failure points at: NCCL_SOCKET_IFNAME first (the usual
// cause of a wrong-NIC hang), then the others in the order they appear.
std::string SettingToCheck(const EvidenceSet& ev, std::string_view prefer) {
  std::string first;
  for (const FailureSignal* s : Of(ev, FailureKind::kSetting)) {
    if (s->detail.starts_with(prefer)) return s->detail;
    if (first.empty()) first = s->detail;
  }
  return prefer == "NCCL_SOCKET_IFNAME" ? std::string(prefer) : first;
}

// A start-up line NCCL wrote (its "host:pid:tid [dev] NCCL WARN ..." lines, or torch's "NCCL
// error" quoting NCCL), as opposed to the launcher's rendezvous, the c10d store or Gloo.
bool NcclSetUp(const FailureSignal& s) {
  return !s.host.empty() || s.text.find("NCCL") != std::string::npos ||
         s.text.find("ootstrap") != std::string::npos;
}

// What a start-up fault outside NCCL points at, from the words of its own line.
std::string StartUpSetting(const std::string& detail) {
  if (detail.starts_with("torch_xla")) return "XRT_TPU_CONFIG and every ordinal's log";
  if (detail.starts_with("two ranks on one GPU")) {
    return "each rank's GPU (torch.cuda.set_device(LOCAL_RANK), CUDA_VISIBLE_DEVICES, processes "
           "per node)";
  }
  if (detail.find("GLOO_SOCKET_IFNAME") != std::string::npos) return "GLOO_SOCKET_IFNAME";
  if (detail.find("was closed") != std::string::npos) return "the other nodes' logs";
  if (detail.find("rdzv_endpoint") != std::string::npos) return "rdzv_endpoint";
  return "MASTER_ADDR/MASTER_PORT";
}

std::string FirstPeer(const std::vector<const FailureSignal*>& signals) {
  for (const FailureSignal* s : signals) {
    if (!s->peer.empty()) return s->peer;
  }
  return "";
}

// Open MPI counts one process that returned a non-zero exit code ("but 1 process returned") and
// names the first to do so ("Process name: [[25735,1],1]"): that one process is the rank named
// (NVIDIA/nccl-tests#165). A failure line without a rank, alone in the file, is that process's
// (it exits non-zero on it); with more processes counted, the first to exit need not be it.
std::optional<int64_t> OnlyFailingProcess(const EvidenceSet& ev, const std::string& file) {
  bool one = false;
  std::optional<int64_t> rank;
  for (const FailureSignal* s : Of(ev, FailureKind::kWorkerFailed)) {
    if (s->file != file) continue;
    if (s->detail == kOpenMpiAborted) one = one || s->failed_processes == 1;
    if (s->detail.starts_with("Open MPI: rank ") && s->global_rank && s->exit_code &&
        *s->exit_code != 0)
      rank = s->global_rank;
  }
  return one ? rank : std::nullopt;
}

// The same CUDA failure on two or more ranks and on every rank the logs show (each rank that
// printed anything printed it): mpirun's "[1,0]<stdout>:" and "[1,1]<stdout>:" both with NCCL's
// "Cuda failure 1 'invalid argument'" while registering buffers (NVIDIA/nccl#1704). A CUDA call
// that fails alike everywhere is a fault of what the ranks share (driver, devices, a setting),
// as the corpus reads the same failure on several GPUs of a node without rank prefixes
// (NVIDIA/nccl#957, vllm-project/vllm#6732): no rank is singled out. A rank shown without the
// failure (rank 0 printing the test's header while ranks 8-15 fail, NVIDIA/nccl#348) keeps the
// failing ranks named.
bool SharedByEveryRankShown(const EvidenceSet& ev, const std::vector<const FailureSignal*>& lines,
                            const std::set<int64_t>& ranks) {
  if (ranks.size() < 2) return false;
  const std::string& detail = lines.front()->detail;
  if (detail.empty()) return false;
  for (const FailureSignal* s : lines) {
    if (s->detail != detail || !SpeakingRank(*s)) return false;
  }
  for (const LoadedLog& l : ev.logs) {
    for (int64_t r : l.speaking_ranks) {
      if (!ranks.contains(r)) return false;
    }
  }
  return std::ranges::none_of(ev.ranks, [&](const RankEvidence& r) {
    return r.process.rank && !ranks.contains(*r.process.rank);
  });
}

bool Cuda(const EvidenceSet& ev, Finding& f) {
  const auto lines = Of(ev, FailureKind::kCudaError);
  if (lines.empty()) return false;
  std::set<int64_t> ranks;
  for (const FailureSignal* s : lines) {
    if (auto r = SpeakingRank(*s)) ranks.insert(*r);
  }
  // A process of unknown rank that crashed earlier in the same file ("(RayWorkerVllm pid=7046)
  // Fatal Python error: Aborted" above rank 0's "CUDA error: an illegal memory access",
  // vllm-project/vllm#4108) failed first, for a reason the lines shown may not hold: the ranks of
  // the CUDA lines are not shown to be the first to fail, so none is named.
  const FailureSignal& first = *lines.front();
  const bool unknown_crash_first =
      std::any_of(ev.failures.begin(), ev.failures.end(), [&](const FailureSignal& c) {
        return c.kind == FailureKind::kCrash && !c.global_rank && c.file == first.file &&
               c.line < first.line;
      });
  if (unknown_crash_first) ranks.clear();
  if (SharedByEveryRankShown(ev, lines, ranks)) ranks.clear();
  if (ranks.empty() && !unknown_crash_first && lines.size() == 1) {
    if (const auto rank = OnlyFailingProcess(ev, first.file)) ranks.insert(*rank);
  }
  f.kind = "cuda_error";
  f.ranks = Sorted(ranks);
  f.summary =
      fmt::format("CUDA error{}: {}", ranks.empty() ? "" : " on rank " + FormatRankRanges(f.ranks),
                  lines.front()->detail.empty() ? lines.front()->text : lines.front()->detail);
  f.evidence.push_back(Cite(*lines.front()));
  return true;
}

// The first CUDA error follows an out-of-memory line of the same failure: NCCL's "Cuda failure
// 'out of memory'" then "Cuda failure 'invalid resource handle'" (NVIDIA/TensorRT-LLM#1670) is
// one failed allocation and its consequence. The earlier line is the first cause when both are in
// the same file, of the same process (NCCL's host:pid, the "[rankN]:" prefix, where both lines
// print one), and nothing between them shows that the run went on (a progress line, a batch size
// lowered after the error): an out-of-memory error the run recovered from explains nothing later.
bool OomBeforeCuda(const EvidenceSet& ev) {
  const auto cuda = Of(ev, FailureKind::kCudaError);
  if (cuda.empty()) return false;
  const FailureSignal& c = *cuda.front();
  // "<host>:<pid>:<tid> [dev] ...": the host and pid, without the thread.
  auto process = [](const std::string& text) {
    const std::string id = text.substr(0, text.find(' '));
    return id.substr(0, id.rfind(':'));
  };
  return std::any_of(ev.log_signals.begin(), ev.log_signals.end(), [&](const LogSignal& s) {
    if (s.kind != LogSignalKind::kOom || s.file != c.file || s.line >= c.line) return false;
    if (s.line <= c.went_on_line) return false;
    if (s.global_rank && c.global_rank && *s.global_rank != *c.global_rank) return false;
    return s.host.empty() || c.host.empty() || process(s.text) == process(c.text);
  });
}

bool Oom(const Verdict& v, Finding& f) {
  for (const Pattern& p : v.patterns) {
    if (!p.id.starts_with("oom")) continue;
    f.kind = "oom";
    f.ranks = p.ranks;
    f.summary = p.title;
    f.evidence = p.evidence;
    return true;
  }
  return false;
}

bool Crash(const EvidenceSet& ev, Finding& f) {
  auto lines = Of(ev, FailureKind::kCrash);
  // "Fatal Python error: Aborted" right after a Gloo failure of the same file is std::terminate
  // on that Gloo exception ("terminate called after throwing an instance of 'gloo::IoException'",
  // horovod/horovod#1364): the consequence, the Gloo failure is the cause (gloo_finding.h).
  std::erase_if(lines, [&](const FailureSignal* s) {
    return s->signal.starts_with("Aborted") &&
           std::any_of(ev.gloo.begin(), ev.gloo.end(), [&](const GlooSignal& g) {
             return g.file == s->file && g.line < s->line && s->line - g.line <= 3;
           });
  });
  if (lines.empty()) return false;
  CrashOf(lines, "a process crashed: " + lines.front()->signal, f);
  return true;
}

// A start-up failure cannot follow a collective that ran: a bootstrap line printed after a
// collective timeout in the same file (a store that went away with a dead rank 0) is a
// consequence, not the first failure.
std::vector<const FailureSignal*> StartUpOnly(const EvidenceSet& ev,
                                              std::vector<const FailureSignal*> lines) {
  std::map<std::string, int> first_timeout;  // file -> line
  for (const WatchdogEvent& e : ev.watchdog) {
    if (e.kind != WatchdogEventKind::kTimeout) continue;
    auto [it, fresh] = first_timeout.try_emplace(e.file, e.line);
    if (!fresh) it->second = std::min(it->second, e.line);
  }
  std::erase_if(lines, [&](const FailureSignal* s) {
    auto it = first_timeout.find(s->file);
    return it != first_timeout.end() && s->line > it->second;
  });
  return lines;
}

// NCCL returns ncclSystemError for an InfiniBand completion error too, and PyTorch prints it as
// "NCCL error: unhandled system error ... Last error: NET/IB : Got completion from peer
// 10.226.98.98<48598> with error 12" (deepspeedai/DeepSpeed#2931, NCCL 2.14.3). A completion
// error is a transfer on a queue pair that set-up had connected, so the "unhandled system error"
// after one in the same file is its report, not a start-up fault. A connection closed by the
// peer is no such sign: it happens while the bootstrap sockets connect (NVIDIA/nccl-tests#15).
std::vector<const FailureSignal*> StartUpFaults(const EvidenceSet& ev) {
  auto boot = StartUpOnly(ev, Of(ev, FailureKind::kBootstrap));
  const auto net = Of(ev, FailureKind::kNetwork);
  std::erase_if(boot, [&](const FailureSignal* b) {
    return b->detail == kUnhandledSystemError &&
           std::any_of(net.begin(), net.end(), [&](const FailureSignal* n) {
             return n->file == b->file && n->line < b->line &&
                    n->detail == kInfiniBandCompletionError;
           });
  });
  return boot;
}

// A process killed from outside (SIGKILL, a Ray worker gone), reported above every network failure
// of its file, is their cause: a peer's exit is what "remote process exited or there was a
// network error", a connection closed or reset by the peer, report (OpenRLHF/OpenRLHF#621: the
// raylet's worker death, then a BROADCAST's remote error). Evidence is ordered by time within a
// file; across files nothing is assumed. A start-up fault is read as one (Network).
bool KilledBeforeNetwork(const EvidenceSet& ev) {
  const auto net = Of(ev, FailureKind::kNetwork);
  if (net.empty() || !Of(ev, FailureKind::kBootstrapTrace).empty() || !StartUpFaults(ev).empty()) {
    return false;
  }
  for (const FailureSignal* k : Of(ev, FailureKind::kWorkerFailed)) {
    if (k->exit_code != -9 && !k->killed) continue;
    if (std::all_of(net.begin(), net.end(), [&](const FailureSignal* n) {
          return n->file == k->file && n->line > k->line;
        })) {
      return true;
    }
  }
  return false;
}

bool Network(const EvidenceSet& ev, Finding& f) {
  const auto boot = StartUpFaults(ev);
  const auto net = Of(ev, FailureKind::kNetwork);
  const bool via_bootstrap = !Of(ev, FailureKind::kBootstrapTrace).empty();
  // A connection that could not be made while NCCL built the communicator (the error climbs out
  // of init.cc) is a start-up fault like a bootstrap one: the peer was never reached. A
  // connection made and then closed or reset (the peer gone) stays a network failure
  // (NVIDIA/nccl#914), and so does a failed connect with no sign of set-up (a transport connected
  // lazily mid-run). An InfiniBand queue pair that could not be brought up ("Call to
  // ibv_modify_qp failed with error Network is unreachable", NVIDIA/nccl-tests#185) is such a
  // connection on the IB transport: the channel to the peer was never made.
  const bool connect_at_init =
      !Of(ev, FailureKind::kInitTrace).empty() &&
      std::any_of(net.begin(), net.end(), [](const FailureSignal* s) {
        return s->detail == "connect failed" || s->detail == kQueuePairNotConnected;
      });
  if (!boot.empty() || (!net.empty() && (via_bootstrap || connect_at_init))) {
    f.kind = "bootstrap";
    f.peer = FirstPeer(net);
    if (f.peer.empty()) f.peer = FirstPeer(boot);
    const FailureSignal* first = boot.empty() ? net.front() : boot.front();
    f.ranks = first->ranks;  // the ranks a stuck store-based barrier shows absent, if any
    // A start-up fault is most often seen by a rank left waiting (a store timeout, a refused
    // connect to the peer that never listened), which is no culprit. A resource its own host
    // refused (own_host) is the failure of the process that prints it: its rank, where its line
    // names one ("[1,23]<stdout>:" of mpirun, aws/aws-ofi-nccl#24), is the rank that failed.
    if (f.ranks.empty() && first->own_host && first->global_rank) f.ranks = {*first->global_rank};
    // The wait's own timeout where the line prints it (a store-based barrier's "timeout=0:30:00",
    // a store get's "wait timeout after 1800000ms").
    f.timeout_ms = first->timeout_ms;
    // Only NCCL's own set-up is an NCCL bootstrap, with NCCL_SOCKET_IFNAME to check first. The
    // launcher's rendezvous, the c10d store and Gloo fail before NCCL starts: their line says
    // what to check (MASTER_ADDR/MASTER_PORT, rdzv_endpoint, GLOO_SOCKET_IFNAME), and naming
    // NCCL_SOCKET_IFNAME there misleads.
    if (!NcclSetUp(*first) && !via_bootstrap) {
      f.setting = StartUpSetting(first->detail);
      f.summary = fmt::format("start-up failed{}: {}", f.peer.empty() ? "" : " with peer " + f.peer,
                              first->detail);
      f.evidence.push_back(Cite(*first));
      return true;
    }
    // A set-up message of the wrong size is no interface fault (NVIDIA/nccl#1176 went away with
    // another NCCL version): the NCCL build and environment of every node come first.
    f.setting = first->detail == kBootstrapTruncated
                    ? "the NCCL version and NCCL_* environment of every node"
                : first->detail == kNetTransportMismatch
                    ? "NCCL_NET and NCCL_IB_DISABLE on every node (and which nodes have an "
                      "InfiniBand adapter)"
                    : SettingToCheck(ev, "NCCL_SOCKET_IFNAME");
    f.summary = fmt::format("NCCL bootstrap failed{}: {}; check {} first",
                            f.peer.empty() ? "" : " with peer " + f.peer, first->detail, f.setting);
    f.evidence.push_back(Cite(*first));
    return true;
  }
  // NCCL prints "file.cc:N -> code" only on an error's way out (its NCCLCHECK trace). An error
  // climbing out of bootstrap.cc, with no warning naming it ("misc/socket.cc:505 -> 2 (Operation
  // now in progress)", "bootstrap.cc:275 -> 2", "init.cc:1493 -> 2", pytorch/pytorch#131781), is
  // the communicator's bootstrap failing while it was being built: a start-up fault.
  if (via_bootstrap && net.empty()) {
    const FailureSignal* first = Of(ev, FailureKind::kBootstrapTrace).front();
    f.kind = "bootstrap";
    f.setting = SettingToCheck(ev, "NCCL_SOCKET_IFNAME");
    f.summary = fmt::format(
        "NCCL bootstrap failed: an error came back out of bootstrap.cc while the communicator "
        "was being built (no warning names it); check {} first",
        f.setting);
    f.evidence.push_back(Cite(*first));
    return true;
  }
  if (const auto mismatch = Of(ev, FailureKind::kNetMismatch); !mismatch.empty()) {
    f.kind = "collective_mismatch";
    f.peer = mismatch.front()->peer;
    f.summary =
        f.peer.empty()
            ? fmt::format("collective mismatch: {}", mismatch.front()->detail)
            : fmt::format("NCCL network transport saw a collective mismatch with peer {}: {}",
                          f.peer, mismatch.front()->detail);
    f.evidence.push_back(Cite(*mismatch.front()));
    return true;
  }
  if (net.empty()) return false;
  f.kind = "network";
  f.peer = FirstPeer(net);
  const bool gdr = std::any_of(net.begin(), net.end(), [](const FailureSignal* s) {
    return s->detail.find("GPU Direct RDMA") != std::string::npos;
  });
  f.setting = SettingToCheck(ev, gdr ? "NCCL_NET_GDR_LEVEL" : "NCCL_IB_");
  const FailureSignal* first = net.front();
  for (const FailureSignal* s : net) {
    if (!s->peer.empty()) {
      first = s;
      break;
    }
  }
  f.summary = fmt::format("network failure{}: {}", f.peer.empty() ? "" : " with peer " + f.peer,
                          first->detail);
  f.evidence.push_back(Cite(*first));
  return true;
}

bool ChildFailed(const EvidenceSet& ev, Finding& f) {
  const auto records = Of(ev, FailureKind::kChildFailed);
  const FailureSignal* root = nullptr;
  for (const FailureSignal* s : records) {
    if (s->root_cause) root = s;
  }
  // A paste that kept one record and not the "Root Cause" heading (NVIDIA/Megatron-LM#1880, its
  // fields only): the one process torchrun reports ended by a signal is the failure shown. An
  // exit code of its own says only that it raised: its error, if shown, is read on its own line.
  if (!root && records.size() == 1 && records.front()->exit_code.value_or(0) < 0)
    root = records.front();
  // Without its "Root Cause" record (cut, open-compass/VLMEvalKit#1131), records that all ended
  // by the same signal in the same second still show how the workers ended, not which was first:
  // no rank is named.
  if (!root && records.size() > 1 && records.front()->exit_code.value_or(0) < 0 &&
      std::all_of(records.begin(), records.end(), [&](const FailureSignal* s) {
        return s->exit_code == records.front()->exit_code && s->time == records.front()->time;
      })) {
    const FailureSignal& any = *records.front();
    std::vector<int64_t> ranks;
    for (const FailureSignal* s : records) {
      if (s->global_rank) ranks.push_back(*s->global_rank);
    }
    std::sort(ranks.begin(), ranks.end());
    f.kind = any.signal == "SIGKILL" || any.exit_code == -9 ? "dead_rank" : "crash";
    f.summary = fmt::format(
        "torchrun: ranks {} all ended with exit code {}{} in the same second; the record of the "
        "first (Root Cause) is not in the evidence",
        FormatRankRanges(ranks), any.exit_code.value_or(0),
        any.signal.empty() ? "" : " (" + any.signal + ")");
    f.evidence.push_back(Cite(any.file, any.line, any.text));
    return true;
  }
  if (!root) return false;
  // Other ranks that failed the same way in the same second: an ordering of near-simultaneous
  // exits, not a culprit.
  bool together = false;
  for (const FailureSignal* s : records) {
    if (s != root && !s->root_cause && s->time == root->time && s->exit_code == root->exit_code)
      together = true;
  }
  const bool killed = root->signal == "SIGKILL" || root->exit_code == -9;
  f.kind = killed ? "dead_rank" : "crash";
  if (!together && root->global_rank) f.ranks = {*root->global_rank};
  f.summary = fmt::format("torchrun: rank {} on {} failed first (exit code {}{}){}",
                          *root->global_rank, root->host, root->exit_code.value_or(0),
                          root->signal.empty() ? "" : ", " + root->signal,
                          together ? "; other ranks failed the same way in the same second" : "");
  f.evidence.push_back(Cite(root->file, root->line, root->text));
  return true;
}

bool FlightRecorderReport(const EvidenceSet& ev, Finding& f) {
  const auto reports = Of(ev, FailureKind::kFrNotJoined);
  if (reports.empty()) return false;
  const FailureSignal& r = *reports.front();
  f.kind = "lagging_rank";
  f.ranks = r.ranks;
  f.op = r.op;
  f.seq = r.seq;
  f.summary = fmt::format("Flight Recorder analyser: ranks {} never joined collective #{} ({})",
                          FormatRankRanges(r.ranks), r.seq.value_or(0), r.op);
  f.evidence.push_back(Cite(r));
  return true;
}

// The analyser's report of a collective whose records disagree across ranks ("Culprit rank 1;
// Error type: COLLECTIVE_STATE_MISMATCH"): a mismatch at that collective, the rank it names the
// culprit. Error types that are no mismatch are left to the other readings.
bool FlightRecorderMismatch(const EvidenceSet& ev, Finding& f) {
  for (const FailureSignal* r : Of(ev, FailureKind::kFrMismatch)) {
    if (!r->detail.ends_with("MISMATCH")) continue;
    f.kind = "collective_mismatch";
    f.ranks = r->ranks;
    f.op = r->op;
    f.seq = r->seq;
    f.summary = fmt::format(
        "Flight Recorder analyser: collective #{} ({}) differs across ranks "
        "({}), culprit {}",
        r->seq.value_or(0), r->op, r->detail, r->ranks.empty() ? "not named" : RanksText(r->ranks));
    f.evidence.push_back(Cite(*r));
    return true;
  }
  return false;
}

// monitored_barrier's report: the ranks that did not reach the barrier in time are named, the
// others waited in it. They are the ranks behind (stuck elsewhere, or gone).
bool BarrierMissing(const EvidenceSet& ev, Finding& f) {
  const auto reports = Of(ev, FailureKind::kBarrierMissing);
  if (reports.empty()) return false;
  const FailureSignal& r = *reports.front();
  f.kind = "lagging_rank";
  f.ranks = r.ranks;
  std::sort(f.ranks.begin(), f.ranks.end());
  f.op = r.op;
  f.timeout_ms = r.timeout_ms;
  if (r.op == "jax_barrier") {
    f.summary = fmt::format(
        "JAX's coordination service: the barrier '{}' timed out and {} (process indices) never "
        "reached it while the others waited",
        r.detail, RanksText(f.ranks));
    f.evidence.push_back(Cite(r));
    return true;
  }
  // ProcessGroupGloo::monitoredBarrier numbers the ranks within the barrier's group (1 to the
  // group's size - 1): global ranks only when the barrier is on the default group.
  f.summary = fmt::format(
      "monitored_barrier: {} of the barrier's group (global ranks when the barrier is on the "
      "default group) did not reach the barrier{}",
      RanksText(f.ranks), r.timeout_ms ? fmt::format(" within {} ms", *r.timeout_ms) : "");
  f.evidence.push_back(Cite(r));
  return true;
}

bool Fingerprints(const EvidenceSet& ev, Finding& f) {
  std::map<int64_t, const FailureSignal*> by_rank;  // the last fingerprint of each rank
  for (const FailureSignal* s : Of(ev, FailureKind::kFingerprint)) {
    if (auto r = SpeakingRank(*s); r && s->seq) by_rank[*r] = s;
  }
  if (by_rank.size() < 2) return false;
  int64_t low = INT64_MAX, high = INT64_MIN;
  for (const auto& [rank, s] : by_rank) {
    low = std::min(low, *s->seq);
    high = std::max(high, *s->seq);
  }
  if (low == high) return false;
  std::set<int64_t> behind;
  for (const auto& [rank, s] : by_rank) {
    if (*s->seq == low) behind.insert(rank);
  }
  f.kind = "lagging_rank";
  f.ranks = Sorted(behind);
  f.op = by_rank[*behind.begin()]->op;
  f.seq = low;
  f.summary = fmt::format("rank {} runs collective #{} while the others are at #{}",
                          FormatRankRanges(f.ranks), low, high);
  f.evidence.push_back(Cite(*by_rank[*behind.begin()]));
  return true;
}

// The rank a watchdog line speaks for: torchrun's prefix, else "[Rank N]" in the message.
std::optional<int64_t> RankOf(const WatchdogEvent& e) {
  return e.global_rank ? e.global_rank : e.pg_rank;
}
std::string GroupOf(const WatchdogEvent& e) {
  const std::string key = WatchdogGroupKey(e);
  return key.empty() ? "0" : key;
}

// Timeout lines of one group at the same sequence number (or, in the oldest format, without
// one) naming different collectives: the ranks called different operations. Both sides are
// named in the summary; no rank is the culprit, since either side may be the wrong one.
bool TimeoutOpMismatch(const EvidenceSet& ev, Finding& f) {
  std::map<std::pair<std::string, int64_t>, std::map<std::string, std::set<int64_t>>> ops;
  std::map<std::pair<std::string, int64_t>, const WatchdogEvent*> first;
  for (const WatchdogEvent* e : Of(ev, WatchdogEventKind::kTimeout)) {
    if (e->op_type.empty() || !RankOf(*e)) continue;
    const auto key = std::make_pair(GroupOf(*e), e->seq.value_or(-1));
    ops[key][e->op_type].insert(*RankOf(*e));
    first.try_emplace(key, e);
  }
  for (const auto& [key, by_op] : ops) {
    if (by_op.size() < 2) continue;
    std::string minority;
    size_t fewest = SIZE_MAX;
    std::string sides;
    for (const auto& [op, ranks] : by_op) {
      if (ranks.size() < fewest) {
        fewest = ranks.size();
        minority = op;
      }
      sides += fmt::format("{}{} on rank {}", sides.empty() ? "" : " vs ", op,
                           FormatRankRanges(std::vector<int64_t>(ranks.begin(), ranks.end())));
    }
    f.kind = "collective_mismatch";
    f.op = minority;
    if (key.second >= 0) f.seq = key.second;
    f.timeout_ms = first[key]->timeout_ms;
    f.summary =
        fmt::format("ranks of process group {} time out in different collectives{}: {}", key.first,
                    key.second >= 0 ? fmt::format(" at SeqNum {}", key.second) : "", sides);
    f.evidence.push_back(Cite(*first[key]));
    return true;
  }
  return false;
}

// "last enqueued work: N, last completed work: M" on each rank of a group: a rank whose
// completed counter differs from the others' is named (the odd one out; of two, the one behind).
// torch's placeholders (-1, 2^64-1) mean unknown and are skipped.
//
// A rank behind is one that has not entered the collective the others wait in. A rank that has
// entered it (its enqueued counter, or the SeqNum it timed out in, is past its completed one)
// while another rank of the group completed that sequence number is not behind: an all-reduce,
// all-gather, reduce-scatter, all-to-all or barrier completes on no rank before every rank has
// entered it, and only a one-sided completion (a broadcast's or scatter's root, a reduce's or
// gather's non-root, a send) finishes on one rank first. So the two ranks' collectives at that
// number were not the same operation, or the transfer into the waiting rank stalled: the
// counters no longer line up and name no rank (docs/hang-accuracy.md, "One rank completed a
// collective another still waits in").
bool CompletedCounters(const EvidenceSet& ev, Finding& f) {
  std::map<std::string, std::map<int64_t, int64_t>> completed;  // group -> rank -> last completed
  std::map<std::string, std::map<int64_t, int64_t>> entered;    // group -> rank -> highest seq in
  std::map<std::string, const WatchdogEvent*> cite;
  for (const WatchdogEvent& e : ev.watchdog) {
    if (!RankOf(e)) continue;
    auto& in = entered[GroupOf(e)][*RankOf(e)];
    if (e.last_enqueued && *e.last_enqueued > 0) in = std::max(in, *e.last_enqueued);
    if (e.kind == WatchdogEventKind::kTimeout && e.seq) in = std::max(in, *e.seq);
    if (!e.last_completed || *e.last_completed < 0) continue;
    auto& slot = completed[GroupOf(e)][*RankOf(e)];
    slot = std::max(slot, *e.last_completed);
    cite.try_emplace(GroupOf(e), &e);
  }
  for (const auto& [group, by_rank] : completed) {
    std::map<int64_t, std::vector<int64_t>> ranks_at;  // value -> ranks
    for (const auto& [rank, value] : by_rank) ranks_at[value].push_back(rank);
    if (ranks_at.size() < 2) continue;
    const std::vector<int64_t>* named = &ranks_at.begin()->second;  // the lowest: behind
    for (const auto& [value, ranks] : ranks_at) {
      if (ranks.size() < named->size()) named = &ranks;
    }
    const int64_t low = ranks_at.begin()->first;
    const int64_t high = ranks_at.rbegin()->first;
    const int64_t mine = by_rank.at(named->front());
    if (mine == low) {
      const auto& in = entered[group];
      const bool inside = std::all_of(named->begin(), named->end(), [&](int64_t r) {
        const auto it = in.find(r);
        return it != in.end() && it->second > mine;  // entered #mine+1, which another completed
      });
      if (inside) continue;
    }
    f.kind = "lagging_rank";
    f.ranks = *named;
    f.summary = fmt::format(
        "process group {}: rank {} last completed collective #{}, the others #{}: it is {}", group,
        FormatRankRanges(*named), mine, mine == low ? high : low, mine == low ? "behind" : "ahead");
    f.evidence.push_back(Cite(*cite[group]));
    return true;
  }
  return false;
}

bool Mismatch(const Verdict& v, Finding& f) {
  for (const PgStall& s : v.pg_stalls) {
    if (s.mismatch.empty()) continue;
    f.kind =
        "collective_mismatch";  // both sides are named in the summary, neither is "the" culprit
    f.op = s.op;
    f.seq = s.stalled_seq;
    f.timeout_ms = s.timeout_ms;
    f.summary = fmt::format("mismatched collectives in process group {} at #{}: {}", s.pg,
                            s.stalled_seq, s.mismatch);
    f.evidence.push_back(s.source + ": " + s.mismatch);
    return true;
  }
  return false;
}

bool Ras(const EvidenceSet& ev, Finding& f) {
  for (const RasReport& r : ev.ras) {
    for (const RasCommunicator& c : r.communicators) {
      if (c.status.find("INCOMPLETE") == std::string::npos || c.missing.empty()) continue;
      const RasProcess& p = c.missing.front();
      f.kind = "silent_rank";
      f.peer = p.host;
      f.summary =
          fmt::format("NCCL RAS: process {} on {} did not answer (INCOMPLETE, not reported dead)",
                      p.pid, p.host);
      f.evidence.push_back("NCCL RAS communicator " + c.id + ": " + c.status);
      return true;
    }
  }
  for (const RasReport& r : ev.ras) {
    for (const RasCommunicator& c : r.communicators) {
      if (c.status.find("MISMATCH") == std::string::npos || c.count_groups.size() < 2) continue;
      int64_t low = INT64_MAX;
      for (const RasCountGroup& g : c.count_groups) low = std::min(low, g.op_count);
      std::set<int64_t> behind;
      for (const RasCountGroup& g : c.count_groups) {
        if (g.op_count == low) behind.insert(g.ranks.begin(), g.ranks.end());
      }
      f.kind = "lagging_rank";
      f.ranks = Sorted(behind);  // communicator-local; only where NCCL named them
      f.summary = fmt::format(
          "NCCL RAS: communicator {} ranks launched different operation counts; the "
          "lowest is {}",
          c.id, low);
      f.evidence.push_back("NCCL RAS communicator " + c.id + ": MISMATCH");
      return true;
    }
  }
  return false;
}

bool Behind(const Verdict& v, Finding& f) {
  for (const PgStall& s : v.pg_stalls) {
    if (s.behind.empty()) continue;
    f.kind = "lagging_rank";
    f.ranks = s.behind;
    f.op = s.op;
    f.seq = s.stalled_seq;
    f.timeout_ms = s.timeout_ms;
    f.summary =
        fmt::format("process group {} is stalled at collective #{}: rank {} never enqueued it",
                    GroupLabel(s), s.stalled_seq, FormatRankRanges(s.behind));
    f.evidence.push_back(s.source);
    return true;
  }
  return false;
}

// Every member with a dump waits in the stalled collective and the others left none: a hang
// whose culprit, if any, is among the members not collected. Not "healthy" (the headline
// already says the group is stalled).
bool MissingMembers(const Verdict& v, Finding& f) {
  for (const PgStall& s : v.pg_stalls) {
    if (!s.behind.empty() || s.missing.empty() || s.waiting.empty() || !s.mismatch.empty())
      continue;
    f.kind = "collective_timeout";
    f.op = s.op;
    f.seq = s.stalled_seq;
    f.timeout_ms = s.timeout_ms;
    f.summary = fmt::format(
        "process group {} is stalled at collective #{}{}: rank{} {} {} in it and rank{} {} left "
        "no evidence; the culprit, if one rank is, is among them (collect their dumps)",
        GroupLabel(s), s.stalled_seq, s.op.empty() ? "" : " (" + s.op + ")",
        s.waiting.size() == 1 ? "" : "s", FormatRankRanges(s.waiting),
        s.waiting.size() == 1 ? "waits" : "wait", s.missing.size() == 1 ? "" : "s",
        FormatRankRanges(s.missing));
    f.evidence.push_back(s.source);
    return true;
  }
  return false;
}

bool Teardown(const EvidenceSet& ev, const Verdict& v, Finding& f) {
  const auto teardown = Of(ev, FailureKind::kTeardown);
  const auto ended = Of(ev, FailureKind::kTrainingEnded);
  const auto stuck = Of(ev, WatchdogEventKind::kHeartbeatTimeout);
  const Pattern* in_teardown = nullptr;
  for (const Pattern& p : v.patterns) {
    if (p.id == "stuck_in_teardown") in_teardown = &p;
  }
  // Some ranks in destroy_process_group while the others wait in a collective: those ranks left
  // the training loop on an error (not printed while teardown blocks), not a hang at exit.
  if (in_teardown && in_teardown->ranks.size() < v.ranks_seen.size()) {
    f.kind = "crash";
    f.ranks = in_teardown->ranks;
    f.summary = in_teardown->title;
    f.evidence = in_teardown->evidence;
    return true;
  }
  const bool stack_teardown = in_teardown != nullptr;
  if (teardown.empty() && !stack_teardown && (ended.empty() || stuck.empty())) return false;
  // Teardown frames also print under a collective timeout (the watchdog aborts the communicator):
  // only after the end of training, or without any timeout, is it a hang at exit. torch 2.3-2.4
  // may print the timeout only as a status line, "Timeout at NCCL work: 1, last enqueued NCCL
  // work: 1, ..." (vllm-project/vllm#8978, after two "Abort COMPLETE"): a timeout all the same.
  const auto status = Of(ev, WatchdogEventKind::kWorkStatus);
  const bool status_timeout = std::any_of(
      status.begin(), status.end(), [](const WatchdogEvent* e) { return e->seq.has_value(); });
  // The watchdog's "Some NCCL operations have failed or timed out ... we are taking the entire
  // process down" says the same when the WorkNCCL line is cut ("Watchdog caught co",
  // PKU-YuanGroup/UniWorld#46, after rank 6's "Abort COMPLETE"): the abort is the watchdog's.
  const bool taken_down = !Of(ev, WatchdogEventKind::kTakingDown).empty();
  if (ended.empty() &&
      (!Of(ev, WatchdogEventKind::kTimeout).empty() || status_timeout || taken_down))
    return false;
  f.kind = "hang_at_exit";
  f.summary =
      !teardown.empty() && teardown.front()->detail.starts_with("Python exit handler")
          ? "the job hangs while shutting down: " + teardown.front()->detail.substr(21)
          : "the job hangs while shutting down: communicator teardown after the work finished";
  if (!ended.empty()) f.evidence.push_back(Cite(*ended.front()));
  if (!teardown.empty()) f.evidence.push_back(Cite(*teardown.front()));
  if (!stuck.empty()) f.evidence.push_back(Cite(*stuck.front()));
  return true;
}

bool Timeout(const EvidenceSet& ev, const Verdict& v, Finding& f) {
  const WatchdogEvent* first = nullptr;
  for (const WatchdogEvent& e : ev.watchdog) {
    const bool timeout = e.kind == WatchdogEventKind::kTimeout ||
                         (e.kind == WatchdogEventKind::kWorkStatus && e.seq);
    if (timeout && (!first || (!first->seq && e.seq))) first = &e;
    if (first && first->seq) break;
  }
  if (!first) {
    // No WorkNCCL line survived (a cut paste), but the watchdog said it: a dump signal "due to a
    // collective timeout", or its take-down lines ("Some NCCL operations have failed or timed
    // out ... taking the entire process down") beside its own word for a timeout, "Watchdog
    // caught", on a line cut before the WorkNCCL (uniworld-46). A collective timed out; which
    // one, the evidence does not say. The take-down lines alone (opendatalab/DocLayout-YOLO#22)
    // do not say it: torch prints them for a NCCL error as for a timeout.
    const auto caught = [](const std::string& text) {
      return text.find("Watchdog caught") != std::string::npos;
    };
    const bool timeout_said = std::any_of(ev.watchdog.begin(), ev.watchdog.end(),
                                          [&](const WatchdogEvent& e) { return caught(e.text); }) ||
                              std::any_of(ev.failures.begin(), ev.failures.end(),
                                          [&](const FailureSignal& s) { return caught(s.text); });
    for (const WatchdogEvent& e : ev.watchdog) {
      if ((e.kind == WatchdogEventKind::kTakingDown && timeout_said) ||
          (e.kind == WatchdogEventKind::kDumpSignal &&
           e.text.find("collective timeout") != std::string::npos)) {
        f.kind = "collective_timeout";
        f.summary =
            "a collective timed out (the watchdog's own lines; the WorkNCCL line is not in the "
            "evidence)";
        f.evidence.push_back(Cite(e));
        return true;
      }
    }
    // c10d's error in the process whose communicator its watchdog aborted, "NCCL communicator was
    // aborted on rank 0.  Original reason for failure was: [Rank 0] Watchdog caug" (cut by the
    // paste, lyuwenyu/RT-DETR#599): the reason is the watchdog's exception, and of its messages
    // only the timeout's starts "Watchdog caug(ht collective operation timeout)". The rank is the
    // one that waited; the collective is not named.
    for (const LogSignal& s : ev.log_signals) {
      if (s.kind != LogSignalKind::kCommAborted) continue;
      const size_t reason = s.text.find("Original reason for failure was: ");
      if (reason == std::string::npos ||
          s.text.find("Watchdog caug", reason) == std::string::npos) {
        continue;
      }
      f.kind = "collective_timeout";
      f.summary = fmt::format(
          "a collective timed out: rank {}'s communicator was aborted by its watchdog's timeout "
          "(the WorkNCCL line is not in the evidence)",
          s.value);
      f.evidence.push_back(Cite(s.file, s.line, s.text));
      return true;
    }
    return false;
  }
  // A status line ("Timeout at NCCL work: N") carries no op: the WorkNCCL line of the same
  // collective in the same group, printed by another rank or later, does.
  const WatchdogEvent* named = first;
  for (const WatchdogEvent& e : ev.watchdog) {
    if (!named->op_type.empty()) break;
    if (e.kind == WatchdogEventKind::kTimeout && e.seq == first->seq && !e.op_type.empty() &&
        (e.pg_id.empty() || first->pg_id.empty() || e.pg_id == first->pg_id))
      named = &e;
  }
  f.kind = "collective_timeout";
  f.op = named->op_type;
  f.seq = first->seq;
  f.timeout_ms = named->timeout_ms;
  if (!f.timeout_ms && v.timeout.effective_s)
    f.timeout_ms = static_cast<int64_t>(*v.timeout.effective_s * 1000);
  f.summary =
      fmt::format("collective timeout{}{}{}", f.op.empty() ? "" : " in " + f.op,
                  f.seq ? fmt::format(" (SeqNum {})", *f.seq) : "",
                  first->pg_id.empty() ? "" : fmt::format(", process group {}", first->pg_id));
  f.evidence.push_back(Cite(*first));
  return true;
}

// A stack dump (gdb) shows a thread inside an MPI collective (failure_log.h, kMpiCollectiveWait):
// the process waits on members that have not entered it. No timeout fired and the dump names no
// missing member, so no culprit; read only where nothing stronger explains the stall.
bool MpiCollectiveWait(const EvidenceSet& ev, Finding& f) {
  const auto waits = Of(ev, FailureKind::kMpiCollectiveWait);
  if (waits.empty()) return false;
  const FailureSignal& s = *waits.front();
  f.kind = "collective_timeout";
  f.op = s.op;
  f.summary = fmt::format(
      "a stack dump shows a process waiting inside the MPI collective {}: a member has not "
      "entered it, and the dump does not say which",
      s.op);
  f.evidence.push_back(Cite(s));
  return true;
}

// A faulthandler dump shows a process waiting on a lock file (failure_log.h, kLockWait): it is
// stuck outside any collective, on a lock held by a process not in the evidence or by none (torch's
// FileBaton is a plain file that a build killed mid-way leaves behind, and the wait never ends).
// Read only where nothing stronger explains the stall; the rank is the line's own when printed.
bool LockWait(const EvidenceSet& ev, Finding& f) {
  const auto waits = Of(ev, FailureKind::kLockWait);
  if (waits.empty()) return false;
  const FailureSignal& s = *waits.front();
  f.kind = "lagging_rank";
  std::set<int64_t> ranks;
  for (const FailureSignal* w : waits) {
    if (w->global_rank) ranks.insert(*w->global_rank);
  }
  f.ranks = Sorted(ranks);
  f.summary = fmt::format(
      "{} waits on a lock file, outside any collective ({}, in {}){}",
      f.ranks.empty() ? std::string("a process") : "rank " + FormatRankRanges(f.ranks), s.detail,
      s.op,
      s.op == "FileBaton.wait"
          ? ": the lock is a plain file that a build killed mid-way (OOM, SIGKILL, a cancelled "
            "job) leaves behind, and every later build waits on it forever; remove the 'lock' "
            "file in the extension's build directory (TORCH_EXTENSIONS_DIR, by default "
            "~/.cache/torch_extensions) and restart"
          : ": find the process that holds the lock file; it is not in the evidence");
  f.evidence.push_back(Cite(s));
  return true;
}

// A wait on the c10d store that timed out after training had run (failure_log.h): the store was
// used as a barrier or collective (vLLM's StatelessProcessGroup, a store barrier) and a member
// never arrived. The line is the waiting rank's; the one missing is named only by its key, which
// counts in the store's own group, so no rank is given.
bool StoreCollective(const EvidenceSet& ev, Finding& f) {
  const auto waits = Of(ev, FailureKind::kStoreCollectiveTimeout);
  if (waits.empty()) return false;
  const FailureSignal& s = *waits.front();
  f.kind = "collective_timeout";
  f.timeout_ms = s.timeout_ms;
  if (s.op == "xla_rendezvous") {
    f.summary = fmt::format(
        "an ordinal is missing from a mid-run barrier: {} once the run had begun (a rendezvous "
        "of every ordinal through the mesh master; the ordinal that never arrived is not named)",
        s.detail);
    f.evidence.push_back(Cite(s));
    return true;
  }
  f.summary = fmt::format(
      "a rank is missing from a mid-run barrier: {}'s wait on the c10d store{} timed out{} once "
      "training had run (the store used as a barrier or collective; the member that never "
      "arrived is not named by rank)",
      s.global_rank ? fmt::format("rank {}", *s.global_rank) : std::string("a rank"),
      s.detail.empty() ? "" : " for key " + s.detail,
      s.timeout_ms ? fmt::format(" after {} ms", *s.timeout_ms) : "");
  f.evidence.push_back(Cite(s));
  return true;
}

// Ascend HCCL's own timeout of a collective (failure_log.h, kHcclTimeout): the rank that printed
// it waited for a peer that never sent; the peer is not named by rank, so no culprit. The
// collective is the task's tag when the line has one (else a c10d frame names it, below).
bool HcclTimeout(const EvidenceSet& ev, Finding& f) {
  const auto waits = Of(ev, FailureKind::kHcclTimeout);
  if (waits.empty()) return false;
  const FailureSignal& s = *waits.front();
  f.kind = "collective_timeout";
  f.op = s.op;
  f.summary = fmt::format(
      "a collective timed out in HCCL (Ascend){}{}: the rank waited for a peer that never sent "
      "its data; the peer is not named by rank",
      s.op.empty() ? "" : " in " + s.op,
      s.global_rank ? fmt::format(" on rank {}", *s.global_rank) : std::string());
  f.evidence.push_back(Cite(s));
  return true;
}

// DeepEP's own timeout (failure_log.h, kEpTimeout): the expert-parallel dispatch or combine, an
// all-to-all over NVLink and RDMA, waited past DeepEP's timeout for other ranks' data. The
// waiting side prints node and GPU indices, not the rank that failed to send: no culprit.
bool EpTimeout(const EvidenceSet& ev, Finding& f) {
  const auto waits = Of(ev, FailureKind::kEpTimeout);
  if (waits.empty()) return false;
  const FailureSignal& s = *waits.front();
  f.kind = "collective_timeout";
  f.summary = fmt::format(
      "DeepEP's expert-parallel all-to-all timed out{} ({}): the ranks waited for data other "
      "ranks never sent; the lines name no rank that failed to send",
      s.global_rank ? fmt::format(" on rank {}", *s.global_rank) : std::string(), s.detail);
  f.evidence.push_back(Cite(s));
  return true;
}

// A DeepEP kernel that times out prints its line and traps, so the CUDA error after it ("an
// unspecified launch failure") is the timeout's consequence. DeepEP's timeout comes first when
// every CUDA error line follows a DeepEP timeout line of its own file; a CUDA error in a file
// without one (another rank's fault the others waited for) stays the first cause.
bool EpTimeoutBeforeCuda(const EvidenceSet& ev) {
  const auto waits = Of(ev, FailureKind::kEpTimeout);
  const auto cuda = Of(ev, FailureKind::kCudaError);
  if (waits.empty() || cuda.empty()) return false;
  return std::ranges::all_of(cuda, [&](const FailureSignal* c) {
    return std::ranges::any_of(
        waits, [&](const FailureSignal* w) { return w->file == c->file && w->line < c->line; });
  });
}

// Ranks that time out while a rank of the job left no trace at all (silent_ranks.h): the silent
// rank is the suspect; the collective is the one the others wait in.
bool Silent(const EvidenceSet& ev, const Verdict& v, Finding& f) {
  if (v.silent.empty()) return false;
  const WatchdogEvent* first = nullptr;
  for (const WatchdogEvent* e : Of(ev, WatchdogEventKind::kTimeout)) {
    if (!first || (!first->seq && e->seq)) first = e;
  }
  if (!first) return false;
  f.kind = "silent_rank";
  f.ranks = v.silent;
  f.op = first->op_type;
  f.seq = first->seq;
  f.timeout_ms = first->timeout_ms;
  f.summary = fmt::format(
      "rank {} left no line, dump or stack while the others timed out{}{}: it never reached "
      "the collective",
      FormatRankRanges(v.silent), f.op.empty() ? "" : " in " + f.op,
      f.seq ? fmt::format(" (SeqNum {})", *f.seq) : "");
  f.evidence.push_back(Cite(*first));
  // What shows the rank had the time to print its own timeout line (silent_ranks.h).
  if (const FailureSignal* after = RecordAfterTimeouts(ev)) f.evidence.push_back(Cite(*after));
  return true;
}

bool Stuck(const EvidenceSet& ev, Finding& f) {
  const auto stuck = Of(ev, WatchdogEventKind::kHeartbeatTimeout);
  if (stuck.empty()) return false;
  f.kind = "watchdog_stuck";
  f.summary =
      stuck.front()->detail.empty()
          ? "the ProcessGroupNCCL watchdog itself got stuck (heartbeat monitor)"
          : "the ProcessGroupNCCL watchdog itself got stuck (" + stuck.front()->detail + ")";
  f.evidence.push_back(Cite(*stuck.front()));
  return true;
}

bool Stacks(const EvidenceSet& ev, const Verdict& v, Finding& f) {
  std::vector<int64_t> known_ranks;
  for (const RankEvidence& r : ev.ranks) {
    if (r.process.rank) known_ranks.push_back(*r.process.rank);
  }
  std::sort(known_ranks.begin(), known_ranks.end());
  for (const Pattern& p : v.patterns) {
    if (p.id == "stuck_in_comm_init") {
      f.kind = "bootstrap";
      f.ranks = p.ranks.size() == v.ranks_seen.size() ? std::vector<int64_t>{} : p.ranks;
      f.setting = "NCCL_SOCKET_IFNAME";
    } else if (p.id == "dead_or_missing_ranks") {
      f.kind = "dead_rank";
      f.ranks = p.ranks;
    } else if (p.id == "mismatched_collectives") {
      f.kind = "collective_mismatch";
      f.ranks = p.ranks;
    } else if (p.id == "pipeline_p2p_deadlock") {
      f.kind = "p2p_deadlock";
    } else if (p.id == "odd_other_thread") {
      f.kind = "lagging_rank";
      f.ranks = p.ranks;
    } else if (p.id == "lock_wait" || p.id == "data_wait") {
      // Stuck outside any collective, on a lock no process shown holds or on its data loading.
      // Processes without a known RANK are shown by pid: a pid is not a rank to name.
      f.kind = "lagging_rank";
      for (int64_t id : p.ranks) {
        if (std::binary_search(known_ranks.begin(), known_ranks.end(), id)) f.ranks.push_back(id);
      }
    } else if (p.id == "all_ranks_identical") {
      f.kind = "collective_timeout";
    } else {
      continue;
    }
    f.summary = p.title;
    f.evidence = p.evidence;
    return true;
  }
  if (v.culprit) {
    f.kind = "lagging_rank";
    // Processes without a known RANK are shown by pid: a pid is not a rank to name.
    for (int64_t id : v.culprit->ranks) {
      if (std::binary_search(known_ranks.begin(), known_ranks.end(), id)) f.ranks.push_back(id);
    }
    f.summary =
        "ranks are at different places: " + FormatRankRanges(f.ranks) + " parted from the others";
    f.evidence = v.culprit->chain;
    return true;
  }
  const bool someone_waits = std::any_of(v.groups.begin(), v.groups.end(), [](const StackGroup& g) {
    return IsBlockedOnPeers(g.activity.kind);
  });
  const bool someone_runs = std::any_of(v.groups.begin(), v.groups.end(), [](const StackGroup& g) {
    return !IsBlockedOnPeers(g.activity.kind);
  });
  if (someone_waits &&
      someone_runs) {  // some wait on peers while others are elsewhere, none known by rank
    f.kind = "lagging_rank";
    f.summary = fmt::format("the processes are at {} different places", v.groups.size());
    return true;
  }
  if (v.groups.size() == 1 && IsBlockedOnPeers(v.groups[0].activity.kind)) {
    f.kind = "collective_timeout";
    f.op = v.groups[0].activity.op;
    f.summary = "every process shown waits in " + f.op;
    return true;
  }
  return false;
}

// A traceback ended by an error of the program's own (NameError, KeyError, ...; failure_log.cc),
// when nothing above explains the failure: the process exited on it (deepspeedai/DeepSpeed#618,
// both workers' "NameError: name 'garbageeeeee' is not defined"). Read last, so that a
// distributed failure anywhere in the evidence, and what it leaves behind, comes first.
bool ProgramError(const EvidenceSet& ev, Finding& f) {
  const auto lines = Of(ev, FailureKind::kPythonError);
  if (lines.empty()) return false;
  CrashOf(lines, "a process exited on a Python error: " + lines.front()->detail, f);
  return true;
}

}  // namespace

void FindFirstFailure(const EvidenceSet& ev, Verdict& v) {
  const bool timed_out = !Of(ev, WatchdogEventKind::kTimeout).empty();
  const int64_t year = EvidenceYear(ev);
  // Four terms put a candidate before one the order reads earlier: an out-of-memory line or
  // DeepEP's timeout before the CUDA error it leads to, a worker killed from outside before the
  // network failures of its file or, as torchrun's root cause, before the timeouts. Each is a
  // claim about time. Where both candidates' lines carry a time (finding_time.h), the times
  // decide: the term stands only when its candidate was not written after the other one, and
  // then the time rule below reads every later candidate from its time. Where either line prints
  // no time, the term's own reading (line order within one file, torchrun's root-cause flag)
  // stands as the precedence. Equal times (a second is coarser than line order) leave the term.
  auto not_after = [&](const std::function<bool(Finding&)>& term,
                       const std::function<bool(Finding&)>& other) {
    Finding a;
    Finding b;
    if (!term(a) || !other(b)) return true;
    const auto ta = FindingTime(ev, a, year);
    const auto tb = FindingTime(ev, b, year);
    return !ta || !tb || *ta <= *tb;
  };
  const auto oom = [&](Finding& c) { return Oom(v, c); };
  const auto ep_timeout = [&](Finding& c) { return EpTimeout(ev, c); };
  const auto cuda = [&](Finding& c) { return Cuda(ev, c); };
  const auto killed = [&](Finding& c) { return WorkerFailed(ev, c, true); };
  const auto network = [&](Finding& c) { return Network(ev, c); };
  const auto record = [&](Finding& c) { return ChildFailed(ev, c); };
  const auto timeout = [&](Finding& c) { return Timeout(ev, v, c); };
  // Strongest first: a device or process failure explains the timeouts that follow it. A rank
  // killed from outside (SIGKILL) comes before the timeouts it causes; a worker that aborted
  // (SIGABRT, the watchdog's own way out) after them does not. This order stands where the
  // evidence gives no time; where it does, time orders the candidates (below).
  const std::vector<std::function<bool(Finding&)>> chain = {
      [&](Finding& c) { return OomBeforeCuda(ev) && not_after(oom, cuda) && Oom(v, c); },
      [&](Finding& c) {
        return EpTimeoutBeforeCuda(ev) && not_after(ep_timeout, cuda) && EpTimeout(ev, c);
      },
      [&](Finding& c) { return Cuda(ev, c); },
      [&](Finding& c) { return Oom(v, c); },
      [&](Finding& c) { return Crash(ev, c); },
      [&](Finding& c) {
        return KilledBeforeNetwork(ev) && not_after(killed, network) && WorkerFailed(ev, c, true);
      },
      [&](Finding& c) { return Network(ev, c); },
      [&](Finding& c) {
        return (!timed_out || (KilledRootCause(ev) && not_after(record, timeout))) &&
               ChildFailed(ev, c);
      },
      [&](Finding& c) { return WorkerFailed(ev, c, true); },
      [&](Finding& c) { return HorovodStall(ev, c); },
      [&](Finding& c) { return HorovodTimelineFinding(ev, c); },
      [&](Finding& c) { return DetailMismatch(ev, c); },
      [&](Finding& c) { return FlightRecorderReport(ev, c); },
      [&](Finding& c) { return FlightRecorderMismatch(ev, c); },
      [&](Finding& c) { return UccNotPosted(ev, c); },
      [&](Finding& c) { return BarrierMissing(ev, c); },
      [&](Finding& c) { return Fingerprints(ev, c); },
      [&](Finding& c) { return GlooFinding(ev, v, c); },
      [&](Finding& c) { return Mismatch(v, c); },
      [&](Finding& c) { return TimeoutOpMismatch(ev, c); },
      [&](Finding& c) { return Ras(ev, c); },
      [&](Finding& c) { return Behind(v, c); },
      [&](Finding& c) { return CompletedCounters(ev, c); },
      [&](Finding& c) { return Teardown(ev, v, c); },
      [&](Finding& c) { return Silent(ev, v, c); },
      [&](Finding& c) { return Timeout(ev, v, c); },
      [&](Finding& c) { return StoreCollective(ev, c); },
      [&](Finding& c) { return HcclTimeout(ev, c); },
      [&](Finding& c) { return EpTimeout(ev, c); },
      [&](Finding& c) { return Stuck(ev, c); },
      [&](Finding& c) { return Stacks(ev, v, c); },
      [&](Finding& c) { return MpiCollectiveWait(ev, c); },
      [&](Finding& c) { return LockWait(ev, c); },
      [&](Finding& c) { return ChildFailed(ev, c); },
      [&](Finding& c) { return WorkerFailed(ev, c, false); },
      [&](Finding& c) { return ProgramError(ev, c); },
      [&](Finding& c) { return MissingMembers(v, c); },
  };
  Finding f;
  size_t at = 0;
  while (at < chain.size() && !chain[at](f)) ++at;
  const bool found = at < chain.size();
  // Earliest cause first: a failure printed before another cannot be its consequence. Where the
  // order's choice and a candidate after it both carry a time (a glog header, a dated line,
  // torchrun's record time; finding_time.h), the earlier is the first failure; equal or missing
  // times leave the order as it stands (pytorch/pytorch#134006: torchrun's root cause, exit code
  // 1 at 11:37:36, before the watchdog's timeout at 11:47:24, is the first cause).
  if (found) {
    if (auto first = FindingTime(ev, f, year)) {
      for (size_t i = at + 1; i < chain.size(); ++i) {
        Finding c;
        if (!chain[i](c)) continue;
        if (const auto t = FindingTime(ev, c, year); t && *t < *first) {
          f = std::move(c);
          first = t;
        }
      }
    }
  }
  if (!found) {
    // Only evidence that observes state can show a healthy job: a Gloo dump's states are
    // placeholders (gloo_sequences.h), so sequences that agree say nothing about completion.
    const bool trusted_dump = std::any_of(ev.fr_dumps.begin(), ev.fr_dumps.end(),
                                          [](const auto& d) { return !IsGlooDump(d.second); });
    // A run that says it finished, with no failure line anywhere, ended cleanly: no hang. So
    // does a process that reached its exit (ProcessGroupNCCL's destructor warning,
    // sehoffmann/dmlcloud#61): nothing before it failed, and an exiting process waits on no one.
    const bool ended = !Of(ev, FailureKind::kTrainingEnded).empty();
    const bool finished = ended || !Of(ev, FailureKind::kProcessExit).empty();
    // A py-spy dump cut short (its paste ends mid-line, deepspeedai/DeepSpeed#3032) shows the
    // threads above the cut only: what was cut off may be the failure, so no health is read
    // from it.
    const bool cut_stack = std::any_of(ev.ranks.begin(), ev.ranks.end(), [](const RankEvidence& r) {
      return r.pyspy && r.pyspy->truncated;
    });
    const bool read_state =
        trusted_dump || (!v.ranks_seen.empty() && !cut_stack) || !ev.ras.empty() || finished;
    // A rank of a monitored barrier that got no answer from rank 0 (its coordinator, the only
    // rank that names the ranks missing) shows a failed barrier, not which rank failed it.
    const auto no_answer = Of(ev, FailureKind::kBarrierNoAnswer);
    f.kind = read_state && no_answer.empty() ? "healthy" : "unknown";
    f.summary = !no_answer.empty()
                    ? fmt::format(
                          "rank {} reached monitored_barrier but got no answer from rank 0, the "
                          "barrier's coordinator: rank 0's log names the rank that did not arrive "
                          "(or rank 0 itself failed)",
                          FormatRankRanges(no_answer.front()->ranks))
                : finished && v.ranks_seen.empty() && !ended
                    ? "the process reached its exit (ProcessGroupNCCL's destructor warned that "
                      "destroy_process_group was not called) and no failure line was found"
                : finished && v.ranks_seen.empty()
                    ? "the run finished (its log says so) and no failure line was found"
                : read_state ? "no problem found in the evidence"
                : cut_stack  ? "a py-spy dump was cut short: the stacks shown hold no failure, "
                               "and what was cut off is not known"
                : ev.fr_dumps.empty()
                    ? "nothing in the evidence was recognised"
                    : "the flight-recorder sequences agree and their state fields are "
                      "placeholders (Gloo): nothing shows a failure, nor that the last "
                      "collective completed";
    if (!no_answer.empty()) f.evidence.push_back(Cite(*no_answer.front()));
  }
  // A failure without a WorkNCCL line still names its collective when a traceback passes
  // through torch's distributed_c10d.py (its decorator's "in wrapper" frame is no signal).
  if (f.op.empty() && f.kind != "healthy" && f.kind != "unknown") {
    if (const auto frames = Of(ev, FailureKind::kC10dFrame); !frames.empty())
      f.op = frames.front()->op;
  }
  const bool stall =
      f.kind == "collective_timeout" || f.kind == "lagging_rank" || f.kind == "collective_mismatch";
  if (stall && !f.timeout_ms) {
    for (const WatchdogEvent* e : Of(ev, WatchdogEventKind::kTimeout)) {
      if (e->timeout_ms) {
        f.timeout_ms = e->timeout_ms;
        break;
      }
    }
  }
  if (stall && !f.timeout_ms && v.timeout.effective_s) {
    f.timeout_ms = static_cast<int64_t>(*v.timeout.effective_s * 1000);
  }
  v.finding = std::move(f);
}

bool IsProblem(const Finding& f) { return f.kind != "healthy" && f.kind != "unknown"; }

}  // namespace strata::hang

#include "strata/hang/analysis/finding_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>

#include "strata/core/text_scan.h"
#include "strata/hang/analysis/stack_tree.h"

namespace strata::hang {

std::string Cite(const std::string& file, int line, const std::string& text) {
  const size_t slash = file.rfind('/');
  return fmt::format("{}:{}: {}", slash == std::string::npos ? file : file.substr(slash + 1), line,
                     text);
}

std::string Cite(const FailureSignal& s) { return Cite(s.file, s.line, s.text); }

std::string Cite(const WatchdogEvent& e) { return Cite(e.file, e.line, e.text); }

std::vector<const FailureSignal*> Of(const EvidenceSet& ev, FailureKind kind) {
  std::vector<const FailureSignal*> out;
  for (const FailureSignal& s : ev.failures) {
    if (s.kind == kind) out.push_back(&s);
  }
  return out;
}

std::vector<const WatchdogEvent*> Of(const EvidenceSet& ev, WatchdogEventKind kind) {
  std::vector<const WatchdogEvent*> out;
  for (const WatchdogEvent& e : ev.watchdog) {
    if (e.kind == kind) out.push_back(&e);
  }
  return out;
}

// The summary's root cause was killed from outside (SIGKILL: the OOM killer, the scheduler): the
// others' timeouts follow it, so it is the first failure even when they are in the evidence.
bool KilledRootCause(const EvidenceSet& ev) {
  for (const FailureSignal* s : Of(ev, FailureKind::kChildFailed)) {
    if (s->root_cause && (s->signal == "SIGKILL" || s->exit_code == -9)) return true;
  }
  return false;
}

namespace {

// Ray's prefix before every line a worker prints, "(RayWorker pid=1080651) " or "(WorkerDict
// pid=835, ip=172.26.143.83) " (after the remains of a colour code, "[36m"): the worker's pid.
std::optional<int64_t> RayPrefixPid(std::string_view text) {
  const size_t open = text.find('(');
  if (open == std::string_view::npos || open > 8) return std::nullopt;
  const size_t close = text.find(')', open);
  const size_t at = text.find(" pid=", open);
  if (close == std::string_view::npos || at == std::string_view::npos || at > close)
    return std::nullopt;
  int64_t pid = 0;
  size_t i = at + 5;
  for (; i < close && text[i] >= '0' && text[i] <= '9'; ++i) pid = pid * 10 + (text[i] - '0');
  if (i == at + 5) return std::nullopt;
  return pid;
}

// A Ray worker reported dead ("Worker PID: N ... SYSTEM_ERROR") whose own lines, under Ray's
// "(... pid=N)" prefix, show its watchdog failing a collective: the watchdog ends its process with
// an abort, which Ray reports as a death without exit (vllm-project/vllm#1846). The death follows
// the collective's failure; it is not a kill from outside.
bool TakenDownByItsWatchdog(const EvidenceSet& ev, const FailureSignal& s) {
  if (!s.pid) return false;
  return std::any_of(ev.watchdog.begin(), ev.watchdog.end(), [&](const WatchdogEvent& e) {
    const bool failed = e.kind == WatchdogEventKind::kTimeout ||
                        e.kind == WatchdogEventKind::kTakingDown ||
                        (e.kind == WatchdogEventKind::kWorkStatus && e.seq);
    return failed && e.file == s.file && RayPrefixPid(e.text) == s.pid;
  });
}

}  // namespace

// torchrun's launcher: "failed (exitcode: -9) local_rank: 3 (pid: 812917) of binary". It prints the
// local rank only; a global rank comes from a "[rankN]:" prefix or the bundle, when there is one.
// `killed_only`: only a worker killed by SIGKILL, which the others' timeouts follow.
bool WorkerFailed(const EvidenceSet& ev, Finding& f, bool killed_only) {
  // The shortest collective timeout the watchdog reported: a process that died once its stage
  // had made no progress for that long died after the collectives had timed out.
  std::optional<int64_t> timeout_ms;
  for (const WatchdogEvent* e : Of(ev, WatchdogEventKind::kTimeout)) {
    if (e->timeout_ms && *e->timeout_ms > 0 && (!timeout_ms || *e->timeout_ms < *timeout_ms))
      timeout_ms = e->timeout_ms;
  }
  // Open MPI's job-aborted box and Horovod's shutdown message name no rank; Open MPI's record of
  // the first process to exit, or a signal it noticed, does: those say more about the same exit.
  // The shutdown message is printed by the ranks left behind: its rank tag is not the culprit.
  const auto box = [](const FailureSignal* s) {
    return s->detail == kOpenMpiAborted || s->detail == kHorovodShutDown;
  };
  const auto workers = Of(ev, FailureKind::kWorkerFailed);
  const bool more_than_the_box =
      std::any_of(workers.begin(), workers.end(), [&](const FailureSignal* s) { return !box(s); });
  for (const FailureSignal* s : workers) {
    if (more_than_the_box && box(s)) continue;
    const bool killed = s->exit_code == -9 || s->killed;
    if (killed_only && !killed) continue;
    // A kill reported when a progress bar at 0 had already stood for the timeout
    // (OpenRLHF/OpenRLHF#876: "0/128 [10:02<?" then the raylet's report, 600000 ms timeouts) came
    // after the hang: the watchdog takes its process down. Not the first cause.
    if (killed_only && timeout_ms && s->stalled_ms && *s->stalled_ms >= *timeout_ms) continue;
    if (killed_only && TakenDownByItsWatchdog(ev, *s)) continue;
    f.kind = killed ? "dead_rank" : "crash";
    if (s->global_rank && !box(s)) f.ranks = {*s->global_rank};
    f.peer = s->peer;  // Open MPI's peer-disconnected box names the host of the process gone
    if (s->detail.starts_with("Ray") || s->detail.starts_with("Horovod") ||
        s->detail.starts_with("Open MPI") || s->detail.starts_with("Slurm") ||
        s->detail.starts_with("Kubernetes")) {
      f.summary = s->detail;
      f.evidence.push_back(Cite(*s));
      return true;
    }
    if (s->detail.starts_with("torch.multiprocessing.spawn")) {
      f.summary = s->detail + (killed ? ": killed from outside (the kernel's OOM killer or the "
                                        "scheduler); the spawn index is not the global rank"
                                      : "");
      f.evidence.push_back(Cite(*s));
      return true;
    }
    // DeepSpeed's launcher prints no failed worker's local rank (failure_line.cc): "a worker".
    f.summary = fmt::format(
        "{}: {} exited with code {}{}{}",
        s->detail.starts_with("DeepSpeed")      ? "DeepSpeed's launcher"
        : s->detail.starts_with("the launcher") ? "the launcher (CalledProcessError)"
                                                : "torchrun",
        s->local_rank ? fmt::format("the worker with local rank {}", *s->local_rank)
                      : std::string("a worker"),
        s->exit_code.value_or(0), s->signal.empty() ? "" : " (" + s->signal + ")",
        killed ? ": killed from outside (the kernel's OOM killer or the scheduler); the global "
                 "rank is not printed"
               : "");
    f.evidence.push_back(Cite(*s));
    return true;
  }
  return false;
}

// TORCH_DISTRIBUTED_DEBUG=DETAIL's "Detected mismatch between collectives on ranks": a mismatch,
// whether the two sides differ in collective, shape or SequenceNumber (either side may be wrong).
bool DetailMismatch(const EvidenceSet& ev, Finding& f) {
  const auto lines = Of(ev, FailureKind::kDetailMismatch);
  if (lines.empty()) return false;
  const FailureSignal& s = *lines.front();
  // ProcessGroupWrapper compares the fingerprints of the collectives the two ranks are running
  // at that moment: both are inside a collective. Different sequence numbers say their sequences
  // diverged (one ran a collective the other did not), not that the lower one has yet to come:
  // either may be the wrong one (pytorch/pytorch#148976, BARRIER #1 against BARRIER #0), so no
  // rank is named, as with different operations or shapes.
  f.kind = "collective_mismatch";
  f.op = s.op.empty() ? s.other_op : s.op;
  f.seq = s.seq && s.other_seq ? std::min(*s.seq, *s.other_seq) : s.seq ? s.seq : s.other_seq;
  const std::string sides = s.seq && s.other_seq && *s.seq != *s.other_seq && s.ranks.size() == 2
                                ? fmt::format("rank {} runs #{}, rank {} runs #{}", s.ranks[0],
                                              *s.seq, s.ranks[1], *s.other_seq)
                                : s.detail;
  // Two different sequence numbers are no one place: the summary names each rank's (SimpleTuner
  // #2712: "ranks 1,7 ... at SequenceNumber 0" read as if rank 1 were at #0, where it runs #101).
  const bool one_seq = !(s.seq && s.other_seq && *s.seq != *s.other_seq);
  f.summary =
      fmt::format("TORCH_DISTRIBUTED_DEBUG=DETAIL: ranks {} run different collectives{}: {}",
                  FormatRankRanges(s.ranks),
                  f.seq && one_seq ? fmt::format(" at SequenceNumber {}", *f.seq) : "", sides);
  f.evidence.push_back(Cite(s));
  return true;
}

// torch_ucc's comm check compares every rank's collective counter: the problematic ranks whose
// collective "wasn't posted" never issued the one the others are in (ucc_comm_check.h).
bool UccNotPosted(const EvidenceSet& ev, Finding& f) {
  const auto reports = Of(ev, FailureKind::kUccNotPosted);
  if (reports.empty()) return false;
  const FailureSignal& r = *reports.front();
  f.kind = "lagging_rank";
  f.ranks = r.ranks;
  f.op = r.op;
  f.seq = r.seq;
  f.summary = fmt::format(
      "ProcessGroupUCC's comm check: {} never posted collective #{} ({}) that the others wait in",
      RanksText(r.ranks), r.seq.value_or(0), r.op);
  f.evidence.push_back(Cite(r));
  return true;
}

}  // namespace strata::hang

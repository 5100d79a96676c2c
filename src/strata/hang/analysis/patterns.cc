#include "strata/hang/analysis/patterns.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "strata/hang/analysis/other_threads.h"
#include "strata/hang/analysis/pg_stall.h"
#include "strata/hang/analysis/stack_tree.h"

namespace strata::hang {
namespace {

// Ranks, or pids where a dump gives no RANK: a stack group keyed by pid must not read "rank N"
// (a py-spy dump without its "Process" header, pytorch/torchtitan#1342, is pid 0 and no rank).
std::string IdsOf(const PatternInput& in, const std::vector<int64_t>& ids) {
  std::vector<int64_t> pid_only;
  for (const RankView& v : in.views) {
    if (v.evidence && !v.evidence->process.rank) pid_only.push_back(v.id);
  }
  std::sort(pid_only.begin(), pid_only.end());
  return IdsText(pid_only, ids);
}

// A traceback's frames belong to the error printed within this many lines after them.
constexpr int kTracebackWindowLines = 400;

std::string Where(const PyFrame& f) {
  return f.line > 0 ? fmt::format("{} ({}:{})", f.function, f.file, f.line)
                    : fmt::format("{} ({})", f.function, f.file);
}

// The largest group whose ranks wait on peers: the victims' side of a hang.
const StackGroup* LargestBlocked(const std::vector<StackGroup>& groups) {
  for (const StackGroup& g : groups) {
    if (IsBlockedOnPeers(g.activity.kind)) return &g;
  }
  return nullptr;
}

void DetectOom(const PatternInput& in, std::vector<Pattern>& out) {
  std::map<int64_t, const LogSignal*> first_oom;  // rank -> first OOM line
  std::vector<const LogSignal*> unranked;
  for (const LogSignal& s : in.evidence.log_signals) {
    if (s.kind != LogSignalKind::kOom) continue;
    if (s.global_rank) {
      first_oom.try_emplace(*s.global_rank, &s);
    } else if (unranked.empty()) {
      unranked.push_back(&s);
    }
  }
  if (first_oom.empty() && unranked.empty()) return;
  Pattern p;
  std::string phase;
  std::string phase_source;
  std::vector<const LogSignal*> lines = unranked;
  for (const auto& [rank, s] : first_oom) {
    p.ranks.push_back(rank);
    lines.push_back(s);
  }
  for (const LogSignal* s : lines) {
    p.evidence.push_back(fmt::format("{}:{}: {}", s->file, s->line, s->text));
    if (!phase.empty()) continue;
    std::vector<LogSignal> frames;
    for (const LogSignal& f : in.evidence.log_signals) {
      if (f.kind == LogSignalKind::kTracebackFrame && f.file == s->file && f.line < s->line &&
          f.line >= s->line - kTracebackWindowLines) {
        frames.push_back(f);
      }
    }
    phase = PhaseOfTraceback(frames);
    if (!phase.empty()) phase_source = fmt::format("the traceback before {}:{}", s->file, s->line);
  }
  if (phase.empty()) {
    if (const StackGroup* waiting = LargestBlocked(in.groups);
        waiting && !waiting->activity.phase.empty()) {
      phase = waiting->activity.phase;
      phase_source = fmt::format(
          "the stacks of the {} waiting ranks ({}), which wait in the step "
          "the failed rank never finished",
          waiting->ranks.size(), FormatRankRanges(waiting->ranks));
    }
  }
  const std::string named = NamePhase(phase, in.step);
  p.id = named == "first optimizer step" ? "oom_first_optimizer_step" : "oom";
  p.title =
      fmt::format("CUDA out of memory on {}{}", p.ranks.empty() ? "a rank" : RanksText(p.ranks),
                  named.empty() ? "" : " at the " + named);
  if (!phase_source.empty()) p.evidence.push_back("phase from " + phase_source);
  if (in.step && *in.step == 1) {
    p.evidence.push_back("no 'iteration N' line in the complete logs: step 1 never finished");
  }
  if (p.id == "oom_first_optimizer_step") {
    p.evidence.push_back(
        "optimizer states (Adam's exp_avg and exp_avg_sq, fp32 master copies) are allocated "
        "lazily by the first step(): a memory budget measured before step 1 does not include them");
  }
  out.push_back(std::move(p));
}

void DetectTeardown(const PatternInput& in, std::vector<Pattern>& out) {
  for (const StackGroup& g : in.groups) {
    if (g.activity.kind != Activity::kTeardown) continue;
    Pattern p;
    p.id = "stuck_in_teardown";
    p.ranks = g.ranks;
    p.title = fmt::format(
        "{} {} stuck in {}: the exception that stopped {} is not printed while teardown blocks",
        IdsOf(in, g.ranks), g.ranks.size() == 1 ? "is" : "are", g.activity.op,
        g.ranks.size() == 1 ? "it" : "them");
    const auto i = static_cast<size_t>(g.activity.frame_index);
    std::string where = Where(g.frames[i]);
    if (i + 1 < g.frames.size()) where += ", called from " + Where(g.frames[i + 1]);
    p.evidence.push_back("py-spy main thread: " + where);
    p.evidence.push_back(
        "print or log the error before calling destroy_process_group: it waits "
        "for peers that are themselves waiting");
    out.push_back(std::move(p));
  }
}

// NCCL_* variables whose value differs between ranks (a node's global bashrc leaking settings).
void DetectEnvDifferences(const PatternInput& in, std::vector<Pattern>& out,
                          std::vector<int64_t>& odd_ranks) {
  std::set<std::string> keys;
  size_t with_env = 0;
  for (const RankView& v : in.views) {
    if (v.evidence->process.env.empty()) continue;
    ++with_env;
    for (const auto& [k, value] : v.evidence->process.env) {
      if (k.rfind("NCCL_", 0) == 0) keys.insert(k);
    }
  }
  if (with_env < 2) return;
  Pattern p;
  p.id = "inconsistent_nccl_env";
  // NCCL_SOCKET_IFNAME first: the interface is what a wrong-NIC hang is about, and the chain of
  // evidence quotes only the first difference.
  std::vector<std::string> ordered(keys.begin(), keys.end());
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const std::string& k) { return k == "NCCL_SOCKET_IFNAME"; });
  for (const std::string& key : ordered) {
    std::map<std::string, std::vector<int64_t>> by_value;
    for (const RankView& v : in.views) {
      if (v.evidence->process.env.empty()) continue;
      auto it = v.evidence->process.env.find(key);
      by_value[it == v.evidence->process.env.end() ? "<unset>" : it->second].push_back(v.id);
    }
    if (by_value.size() < 2) continue;
    std::vector<std::string> parts;
    size_t largest = 0;
    for (const auto& [value, ranks] : by_value) largest = std::max(largest, ranks.size());
    for (const auto& [value, ranks] : by_value) {
      parts.push_back(fmt::format("{}={} on {}", key, value, RanksText(ranks)));
      if (ranks.size() < largest) odd_ranks.insert(odd_ranks.end(), ranks.begin(), ranks.end());
    }
    p.evidence.push_back(fmt::format("{}", fmt::join(parts, "; ")));
  }
  if (p.evidence.empty()) return;
  std::sort(odd_ranks.begin(), odd_ranks.end());
  odd_ranks.erase(std::unique(odd_ranks.begin(), odd_ranks.end()), odd_ranks.end());
  p.ranks = odd_ranks;
  p.title = fmt::format(
      "NCCL environment differs between ranks (/proc/<pid>/environ): {} {} the odd "
      "one{} out",
      RanksText(odd_ranks), odd_ranks.size() == 1 ? "is" : "are", odd_ranks.size() == 1 ? "" : "s");
  out.push_back(std::move(p));
}

void DetectCommInit(const PatternInput& in, std::vector<Pattern>& out) {
  std::vector<int64_t> env_odd;
  DetectEnvDifferences(in, out, env_odd);
  std::vector<int64_t> stuck;
  std::string op;
  for (const StackGroup& g : in.groups) {
    if (g.activity.kind != Activity::kCommInit) continue;
    stuck.insert(stuck.end(), g.ranks.begin(), g.ranks.end());
    if (op.empty()) op = g.activity.op;
  }
  // NCCL's own choice of interface, per host: one host on docker0 or lo is the signature.
  std::map<std::string, std::set<std::string>> interfaces;  // interface -> hosts
  std::vector<std::string> if_lines;
  for (const LogSignal& s : in.evidence.log_signals) {
    if (s.kind != LogSignalKind::kNcclInterface || s.detail.empty()) continue;
    const std::string name = s.detail.substr(0, s.detail.find(':'));
    if (interfaces[name].insert(s.host).second) {
      if_lines.push_back(fmt::format("{}:{}: {}", s.file, s.line, s.text));
    }
  }
  bool suspicious_if = interfaces.size() > 1;
  for (const auto& [name, hosts] : interfaces) {
    if (name == "lo" || name.rfind("docker", 0) == 0 || name.rfind("virbr", 0) == 0 ||
        name.rfind("veth", 0) == 0) {
      suspicious_if = true;
    }
  }
  if (stuck.empty()) return;
  std::sort(stuck.begin(), stuck.end());
  Pattern p;
  p.id = "stuck_in_comm_init";
  p.ranks = stuck;
  const bool wrong_nic = suspicious_if || !env_odd.empty();
  p.title =
      fmt::format("{} {} stuck in NCCL communicator initialisation ({}){}", IdsOf(in, stuck),
                  stuck.size() == 1 ? "is" : "are", op,
                  wrong_nic ? ": the network interface differs between nodes (wrong NIC)" : "");
  if (!env_odd.empty()) {
    p.evidence.push_back(fmt::format("NCCL environment differs; odd {} out: {}",
                                     env_odd.size() == 1 ? "one" : "ones",
                                     FormatRankRanges(env_odd)));
  }
  for (const std::string& line : if_lines) p.evidence.push_back(line);
  p.evidence.push_back(
      "no WorkNCCL exists while a communicator is created, so the NCCL watchdog "
      "never fires here: the job waits forever");
  out.push_back(std::move(p));
}

void DetectMismatch(const PatternInput& in, std::vector<Pattern>& out) {
  for (const PgStall& s : in.stalls) {
    if (s.mismatch.empty()) continue;
    Pattern p;
    p.id = "mismatched_collectives";
    p.title = fmt::format("mismatched collectives in process group {} at sequence number {}",
                          GroupLabel(s), s.stalled_seq);
    p.ranks = s.mismatch_minority;
    std::sort(p.ranks.begin(), p.ranks.end());
    p.evidence.push_back(fmt::format("{}: {}", s.source, s.mismatch));
    out.push_back(std::move(p));
  }
  // py-spy alone: every stack is in a collective, but not the same one.
  std::map<std::string, std::vector<int64_t>> by_op;
  for (const StackGroup& g : in.groups) {
    if (g.activity.kind != Activity::kCollective) return;
    auto& ranks = by_op[g.activity.op];
    ranks.insert(ranks.end(), g.ranks.begin(), g.ranks.end());
  }
  if (by_op.size() < 2) return;
  Pattern p;
  p.id = "mismatched_collectives";
  size_t largest = 0;
  for (const auto& [op, ranks] : by_op) largest = std::max(largest, ranks.size());
  std::vector<std::string> parts;
  for (auto& [op, ranks] : by_op) {
    std::sort(ranks.begin(), ranks.end());
    parts.push_back(fmt::format("{} in {}", IdsOf(in, ranks), op));
    if (ranks.size() < largest) p.ranks.insert(p.ranks.end(), ranks.begin(), ranks.end());
  }
  std::sort(p.ranks.begin(), p.ranks.end());
  p.title = fmt::format("mismatched collectives: {}", fmt::join(parts, ", "));
  for (const StackGroup& g : in.groups) {
    p.evidence.push_back(fmt::format("py-spy: {} in {}", IdsOf(in, g.ranks),
                                     Where(g.frames[static_cast<size_t>(g.activity.frame_index)])));
  }
  out.push_back(std::move(p));
}

void DetectP2pDeadlock(const PatternInput& in, std::vector<Pattern>& out) {
  if (in.groups.empty()) return;
  bool anyone_sends = false;
  std::vector<int64_t> ranks;
  for (const StackGroup& g : in.groups) {
    if (g.activity.kind != Activity::kP2p) return;
    anyone_sends = anyone_sends || g.activity.op.find("send") != std::string::npos;
    ranks.insert(ranks.end(), g.ranks.begin(), g.ranks.end());
  }
  if (ranks.size() < 2) return;
  std::sort(ranks.begin(), ranks.end());
  Pattern p;
  p.id = "pipeline_p2p_deadlock";
  p.ranks = ranks;
  p.title = anyone_sends
                ? "pipeline send/recv deadlock: every rank is blocked in point-to-point"
                : "pipeline send/recv deadlock: every rank waits to receive and none is sending";
  for (const StackGroup& g : in.groups) {
    const auto i = static_cast<size_t>(g.activity.frame_index);
    p.evidence.push_back(
        fmt::format("py-spy: {} in {}: {}", IdsOf(in, g.ranks), g.activity.op, Where(g.frames[i])));
  }
  p.evidence.push_back(
      "adjacent pipeline stages must pair each send with a recv in the same "
      "order; check the schedule (microbatch count, warm-up steps) on each stage");
  out.push_back(std::move(p));
}

void DetectAllIdentical(const PatternInput& in, std::vector<Pattern>& out) {
  if (in.groups.size() != 1 || in.groups[0].ranks.size() < 2 || !in.dead_or_missing.empty()) return;
  const StackGroup& g = in.groups[0];
  if (!IsBlockedOnPeers(g.activity.kind) || g.activity.kind == Activity::kP2p ||
      g.activity.kind == Activity::kCommInit || g.activity.kind == Activity::kTeardown) {
    return;
  }
  for (const PgStall& s : in.stalls) {
    if (!s.behind.empty()) return;  // someone is behind: not a device-side stall
  }
  // The main threads agree; another thread may not (a checkpoint writer busy on one rank only).
  if (auto odd = FindOddOtherThread(in.views, g)) {
    out.push_back(std::move(*odd));
    return;
  }
  Pattern p;
  p.id = "all_ranks_identical";
  p.ranks = g.ranks;
  p.title = fmt::format(
      "every rank ({}) has the same stack, in {}: nobody is behind, so the stall "
      "is on the device or network side",
      FormatRankRanges(g.ranks), g.activity.op);
  p.evidence.push_back("py-spy: all main threads in " +
                       Where(g.frames[static_cast<size_t>(g.activity.frame_index)]));
  p.evidence.push_back(
      "a kernel or an NCCL transfer never completes: check GPU and NIC health "
      "(nvidia-smi, dmesg Xid, NCCL RAS) before the application");
  out.push_back(std::move(p));
}

// The processes whose activity `stuck` matches while every other process shown waits on its
// peers (the first such group kept for its frames); none when any other process runs.
struct StuckWhileOthersWait {
  std::vector<int64_t> ranks;
  const StackGroup* first = nullptr;
};
template <typename Stuck>
StuckWhileOthersWait FindStuckWhileOthersWait(const PatternInput& in, Stuck stuck) {
  StuckWhileOthersWait s;
  for (const StackGroup& g : in.groups) {
    if (stuck(g.activity)) {
      s.ranks.insert(s.ranks.end(), g.ranks.begin(), g.ranks.end());
      if (!s.first) s.first = &g;
    } else if (!IsBlockedOnPeers(g.activity.kind)) {
      return {};
    }
  }
  std::sort(s.ranks.begin(), s.ranks.end());
  return s;
}

// Where the group's main thread waits, and its caller: "f (file:line), called from g (...)".
std::string WaitSite(const StackGroup& g) {
  const auto i = static_cast<size_t>(g.activity.frame_index);
  std::string where = Where(g.frames[i]);
  if (i + 1 < g.frames.size()) where += ", called from " + Where(g.frames[i + 1]);
  return where;
}

// Processes waiting on a lock file while every other process shown waits too (on a lock or on
// its peers): no process in the evidence holds the lock, so nothing will release it. Not named
// while any process runs (it may be the builder holding the lock).
void DetectLockWait(const PatternInput& in, std::vector<Pattern>& out) {
  const StuckWhileOthersWait stuck =
      FindStuckWhileOthersWait(in, [](const StackActivity& a) { return IsLockWait(a); });
  if (!stuck.first) return;
  const std::vector<int64_t>& waiting = stuck.ranks;
  const StackGroup* first = stuck.first;
  Pattern p;
  p.id = "lock_wait";
  p.ranks = waiting;
  p.title = fmt::format("{} {} waiting on a lock file ({}) that no process in the evidence holds",
                        IdsOf(in, waiting), waiting.size() == 1 ? "is" : "are", first->activity.op);
  p.evidence.push_back("py-spy main thread: " + WaitSite(*first));
  p.evidence.push_back(
      first->activity.op.starts_with("FileBaton.")
          ? "torch's FileBaton lock is a plain file: a build killed mid-way (OOM, SIGKILL, a "
            "cancelled job) leaves it, and every later build waits forever; remove the 'lock' "
            "file in the extension's build directory (TORCH_EXTENSIONS_DIR, by default "
            "~/.cache/torch_extensions) and restart"
          : "a FileLock is held by a live process: find the process holding the lock file (it "
            "is not among the dumps), or the lock is on a file system without working locks");
  out.push_back(std::move(p));
}

// Processes waiting for their next batch while every other process shown waits on its peers
// (or for data too): nothing in the evidence runs, and the collective the others wait in needs
// these processes first. A process that is computing somewhere may still be feeding them, so
// nothing is named then.
void DetectDataWait(const PatternInput& in, std::vector<Pattern>& out) {
  const StuckWhileOthersWait stuck = FindStuckWhileOthersWait(
      in, [](const StackActivity& a) { return a.kind == Activity::kDataLoader; });
  if (!stuck.first) return;
  const std::vector<int64_t>& waiting = stuck.ranks;
  const StackGroup* first = stuck.first;
  Pattern p;
  p.id = "data_wait";
  p.ranks = waiting;
  p.title = fmt::format(
      "{} {} waiting for the next batch from its data loading ({}), outside any "
      "collective",
      IdsOf(in, waiting), waiting.size() == 1 ? "is" : "are", first->activity.op);
  p.evidence.push_back("py-spy main thread: " + WaitSite(*first));
  p.evidence.push_back(
      "the workers or threads that fill the queue are stuck or dead: dump them too (py-spy dump "
      "--subprocesses), and try num_workers=0 to take them out");
  out.push_back(std::move(p));
}

void DetectDeadOrMissing(const PatternInput& in, std::vector<Pattern>& out) {
  if (in.dead_or_missing.empty()) return;
  Pattern p;
  p.id = "dead_or_missing_ranks";
  p.ranks = in.dead_or_missing;
  p.title = fmt::format("{} {} no live process in the evidence: dead or never collected",
                        RanksText(p.ranks), p.ranks.size() == 1 ? "has" : "have");
  p.evidence.push_back(
      "a dead rank writes no dump and prints no stack: its absence is the finding");
  out.push_back(std::move(p));
}

}  // namespace

std::string NamePhase(const std::string& phase, std::optional<int64_t> step) {
  // Only the phases of a training step have an iteration number.
  if (!step || (phase != "optimizer step" && phase != "forward" && phase != "backward"))
    return phase;
  if (*step == 1) return "first " + phase;
  return fmt::format("{} of iteration {}", phase, *step);
}

std::string PhaseOfTraceback(const std::vector<LogSignal>& frames) {
  std::vector<PyFrame> stack;  // innermost first, as py-spy prints
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    PyFrame f;
    f.function = it->detail;
    f.file = it->frame_file;
    stack.push_back(std::move(f));
  }
  return PhaseOfStack(stack);
}

std::vector<Pattern> FindPatterns(const PatternInput& in) {
  std::vector<Pattern> out;
  DetectOom(in, out);
  DetectTeardown(in, out);
  DetectCommInit(in, out);
  DetectMismatch(in, out);
  DetectP2pDeadlock(in, out);
  DetectAllIdentical(in, out);
  DetectLockWait(in, out);
  DetectDataWait(in, out);
  DetectDeadOrMissing(in, out);
  return out;
}

}  // namespace strata::hang

#include "strata/hang/analysis/analysis.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

#include "strata/hang/analysis/finding.h"
#include "strata/hang/analysis/gloo_sequences.h"
#include "strata/hang/analysis/patterns.h"
#include "strata/hang/analysis/pg_stall.h"
#include "strata/hang/analysis/placeholders.h"
#include "strata/hang/analysis/rank_places.h"
#include "strata/hang/analysis/silent_ranks.h"
#include "strata/hang/analysis/stack_tree.h"
#include "strata/hang/parsers/pyspy.h"

namespace strata::hang {
namespace {

std::string Where(const PyFrame& f) { return fmt::format("{} ({})", f.function, f.file); }

void Sort(std::vector<int64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

std::string StackKey(const PyThread& t) {
  std::string key;
  for (const PyFrame& f : t.frames) key += fmt::format("{}@{}:{};", f.function, f.file, f.line);
  return key;
}

// Two snapshots of the same rank (bundles collected at different times, `strata hang A/ B/`):
// a rank whose main-thread stack differs between them moved, so it is progressing, not hung.
std::vector<int64_t> MovedBetweenSnapshots(const EvidenceSet& ev, Verdict& verdict) {
  std::map<int64_t, std::map<std::string, std::string>> stacks;  // rank -> snapshot -> stack
  for (const RankEvidence& r : ev.ranks) {
    if (!r.process.rank || r.snapshot.empty() || !r.pyspy || !r.pyspy->error.empty()) continue;
    if (const PyThread* main = MainThread(*r.pyspy))
      stacks[*r.process.rank][r.snapshot] = StackKey(*main);
  }
  std::vector<int64_t> moved;
  std::set<std::string> times;
  for (const auto& [rank, by_time] : stacks) {
    if (by_time.size() < 2) continue;
    for (const auto& [time, key] : by_time) times.insert(time);
    if (by_time.begin()->second != by_time.rbegin()->second) moved.push_back(rank);
  }
  if (!moved.empty()) {
    verdict.notes.push_back(
        fmt::format("{} moved between the snapshots ({} to {}): progressing, not hung",
                    RanksText(moved), *times.begin(), *times.rbegin()));
  }
  return moved;
}

// One view per distinct rank (or pid), preferring the record that has a stack.
std::vector<RankView> BuildViews(const EvidenceSet& ev, Verdict& verdict) {
  std::vector<RankView> views;
  std::map<int64_t, size_t> index;
  for (const RankEvidence& r : ev.ranks) {
    RankView v;
    v.id = r.process.rank ? *r.process.rank : r.process.pid;
    v.evidence = &r;
    if (r.pyspy && r.pyspy->error.empty()) v.main = MainThread(*r.pyspy);
    if (v.main) v.activity = ClassifyStack(v.main->frames, v.main->idle);
    auto it = index.find(v.id);
    if (it == index.end()) {
      index[v.id] = views.size();
      views.push_back(v);
    } else if ((!views[it->second].main && v.main) ||
               (v.main && r.snapshot > views[it->second].evidence->snapshot)) {
      views[it->second] = v;  // the record with a stack, and of two snapshots the later one
    }
  }
  std::vector<int64_t> unranked;
  for (const auto& [id, i] : index) {
    if (!views[i].evidence->process.rank) unranked.push_back(id);
  }
  verdict.pid_only = unranked;
  if (!unranked.empty()) {
    verdict.notes.push_back(fmt::format("{} process{} without a known RANK {} shown by pid: {}",
                                        unranked.size(), unranked.size() == 1 ? "" : "es",
                                        unranked.size() == 1 ? "is" : "are",
                                        FormatRankRanges(unranked)));
  }
  return views;
}

// A world beyond kMaxWorldSize is dropped with a note.
std::optional<int64_t> ExpectedWorld(const EvidenceSet& ev, std::vector<std::string>& notes) {
  std::optional<int64_t> world;
  auto take = [&](int64_t n, const char* source) {
    if (n > kMaxWorldSize) {
      notes.push_back(
          fmt::format("a world of {} ranks ({}) is beyond any job ({} ranks at most): "
                      "ignored as a misread count",
                      n, source, kMaxWorldSize));
      return;
    }
    world = std::max(world.value_or(0), n);
  };
  for (const RankEvidence& r : ev.ranks) {
    if (r.process.world_size) take(*r.process.world_size, "WORLD_SIZE of a process");
  }
  if (world) return world;
  for (const auto& [file, dump] : ev.fr_dumps) {
    for (const auto& [name, config] : dump.pg_config) {
      if (config.desc == "default_pg") {
        take(static_cast<int64_t>(config.ranks.size()), "the default group of a flight recorder");
      }
    }
  }
  if (world) return world;
  for (const RasReport& ras : ev.ras) {
    if (ras.total_processes > 0) take(ras.total_processes, "NCCL RAS total processes");
  }
  return world;
}

std::vector<StackGroup> BuildGroups(const std::vector<RankView>& views) {
  StackTree tree;
  std::map<int64_t, const RankView*> by_id;
  for (const RankView& v : views) {
    if (!v.main || v.main->frames.empty()) continue;
    tree.Add(v.id, v.main->frames);
    by_id[v.id] = &v;
  }
  std::vector<StackGroup> groups;
  for (StackClass& c : tree.Classes()) {
    StackGroup g;
    g.ranks = std::move(c.members);
    g.frames = std::move(c.frames);
    const RankView* first = by_id[g.ranks.front()];
    g.activity = ClassifyStack(g.frames, first->main->idle);
    if (!groups.empty() && c.shared_depth > 0 && c.shared_depth <= g.frames.size()) {
      g.diverges_below = Where(g.frames[g.frames.size() - c.shared_depth]);
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

// The iteration that stalled: one after the last "iteration N" line; 1 when complete logs have
// none and the stacks show the ranks inside a training step (the first step never finished: the
// absence of a line counts only once training is known to have started); else unknown.
std::optional<int64_t> StalledStep(const EvidenceSet& ev, const std::vector<StackGroup>& groups) {
  std::optional<int64_t> last;
  for (const LogSignal& s : ev.log_signals) {
    if (s.kind == LogSignalKind::kIteration) last = std::max(last.value_or(0), s.value);
  }
  if (last) return *last + 1;
  const bool in_a_step = std::any_of(groups.begin(), groups.end(), [](const StackGroup& g) {
    return g.activity.phase == "forward" || g.activity.phase == "backward" ||
           g.activity.phase == "optimizer step";
  });
  if (!in_a_step) return std::nullopt;
  for (const LoadedLog& l : ev.logs) {
    if (l.complete) return 1;
  }
  return std::nullopt;
}

TimeoutFinding FindTimeout(const EvidenceSet& ev, const Verdict& v, const AnalyzeOptions& options) {
  TimeoutFinding t;
  for (const PgStall& s : v.pg_stalls) {
    if (s.timeout_ms) {
      t.effective_s = static_cast<double>(*s.timeout_ms) / 1e3;
      t.source =
          fmt::format("{}: process group {} timeout_ms={}", s.source, GroupLabel(s), *s.timeout_ms);
      break;
    }
  }
  if (!t.effective_s) {
    for (const WatchdogEvent& e : ev.watchdog) {
      if (e.timeout_ms) {
        t.effective_s = static_cast<double>(*e.timeout_ms) / 1e3;
        t.source = fmt::format("{}:{}: Timeout(ms)={}", e.file, e.line, *e.timeout_ms);
        break;
      }
    }
  }
  std::string cmdline;
  for (const RankEvidence& r : ev.ranks) {
    if (!r.process.cmdline.empty()) {
      cmdline = r.process.cmdline;
      break;
    }
  }
  const FrameworkTimeout* framework =
      cmdline.empty() ? nullptr : FindFramework(options.frameworks, cmdline);
  if (framework) t.framework = framework->name;
  if (t.effective_s && framework &&
      std::abs(*t.effective_s - framework->default_timeout.s()) < 0.5) {
    t.source += fmt::format(": {}'s default", framework->name);
  }
  if (!t.effective_s && !cmdline.empty()) {
    if (const FrameworkTimeout* f = framework) {
      if (auto flag = TimeoutFromCommandLine(*f, cmdline)) {
        t.effective_s = flag->s();
        t.source =
            fmt::format("the trainer's command line: {} {}", f->flag, flag->s() / f->flag_unit.s());
      } else {
        t.effective_s = f->default_timeout.s();
        t.source = fmt::format(
            "{} default{} (source: {})", f->name,
            f->flag.empty() ? "" : ", as " + f->flag + " is not on the command line", f->source);
      }
    }
  }
  // The watchdog only watches enqueued NCCL work: not communicator creation, not teardown.
  const StackGroup* majority = v.groups.empty() ? nullptr : &v.groups.front();
  if (majority && majority->activity.kind == Activity::kCommInit) {
    t.watchdog_applies = false;
    t.note =
        "the ranks wait in communicator initialisation, where no watchdog looks: the job "
        "hangs until it is killed, whatever the timeout";
  } else if (t.effective_s && t.source.rfind(kGlooSource, 0) == 0) {
    t.note = fmt::format("Gloo has no watchdog: the collective itself raises after {:.0f} s",
                         *t.effective_s);
  } else if (t.effective_s) {
    const double s = *t.effective_s;
    t.note = fmt::format("the NCCL watchdog reports a stuck collective only after {:.0f} s ({})", s,
                         s < 7200 ? fmt::format("{:.1f} min", s / 60)
                                  : fmt::format("{:.1f} h = {:.1f} days", s / 3600, s / 86400));
  }
  return t;
}

void FindCulprit(Verdict& v, const std::vector<RankView>& views, std::optional<int64_t> step) {
  std::set<int64_t> ranks;
  std::vector<std::string> chain;
  std::string phase;
  auto add = [&](const std::vector<int64_t>& rs) { ranks.insert(rs.begin(), rs.end()); };
  for (const Pattern& p : v.patterns) {
    if (p.id == "pipeline_p2p_deadlock" || p.id == "all_ranks_identical") continue;
    if (p.ranks.empty() && p.id != "oom" && p.id != "oom_first_optimizer_step") continue;
    // Every rank in communicator init with no odd one out names nobody.
    if (p.id == "stuck_in_comm_init" && p.ranks.size() == v.ranks_seen.size()) continue;
    add(p.ranks);
    chain.push_back(p.title);
    if (!p.evidence.empty()) chain.push_back("  " + p.evidence.front());
    if (phase.empty() && p.id.starts_with("oom")) {
      const size_t at = p.title.find(" at the ");
      if (at != std::string::npos) phase = p.title.substr(at + 8);
    }
  }
  for (const PgStall& s : v.pg_stalls) {
    if (s.behind.empty()) continue;
    add(s.behind);
    chain.push_back(
        fmt::format("{}: process group {} is stalled at collective #{} ({}): {} "
                    "enqueued it, {} never did",
                    s.source, GroupLabel(s), s.stalled_seq, s.op.empty() ? "op unknown" : s.op,
                    RanksText(s.waiting), RanksText(s.behind)));
  }
  // A lone process outside any collective (a FileLock wait, a DataLoader worker, computing) while
  // every other process waits in one: they wait on it. Needed where no majority exists (every
  // group one process); with a majority the odd-one-out rule below names it.
  const StackGroup* lone_named = nullptr;
  if (v.groups.size() > 1 && v.groups[0].ranks.size() == 1) {
    const StackGroup* lone = nullptr;
    size_t outside = 0;
    for (const StackGroup& g : v.groups) {
      const Activity k = g.activity.kind;
      if (k == Activity::kCollective || k == Activity::kP2p) continue;
      ++outside;
      lone = &g;
    }
    if (outside == 1 && lone->ranks.size() == 1) {
      std::vector<int64_t> waiters;
      for (const StackGroup& g : v.groups) {
        if (&g != lone) waiters.insert(waiters.end(), g.ranks.begin(), g.ranks.end());
      }
      std::sort(waiters.begin(), waiters.end());
      add(lone->ranks);
      lone_named = lone;
      chain.push_back(
          fmt::format("py-spy: {} is in {} ({}), outside any collective, while {} "
                      "wait in collectives for it",
                      IdsText(v.pid_only, lone->ranks), lone->activity.op,
                      ActivityName(lone->activity.kind), IdsText(v.pid_only, waiters)));
    }
  }
  // Odd ones out: the majority waits on peers, a minority is elsewhere.
  if (v.groups.size() > 1 && IsBlockedOnPeers(v.groups[0].activity.kind) &&
      v.groups[0].activity.kind != Activity::kCommInit) {
    const StackGroup& major = v.groups[0];
    for (size_t i = 1; i < v.groups.size(); ++i) {
      const StackGroup& g = v.groups[i];
      if (&g == lone_named) continue;
      if (g.activity.kind == major.activity.kind && g.activity.op == major.activity.op) continue;
      // A minority is at most a quarter of the majority in a large job; in a job of four ranks or
      // fewer, any group smaller than the majority is the odd one out (3 against 1 is plain).
      const bool small_job = major.ranks.size() <= 4;
      const bool minority = small_job ? g.ranks.size() < major.ranks.size()
                                      : g.ranks.size() * 4 <= major.ranks.size();
      if (!minority && !ranks.count(g.ranks.front())) continue;
      add(g.ranks);
      chain.push_back(fmt::format(
          "py-spy: {} {} in {} ({}) while {} wait in {}{}", IdsText(v.pid_only, g.ranks),
          g.ranks.size() == 1 ? "is" : "are", g.activity.op, ActivityName(g.activity.kind),
          IdsText(v.pid_only, major.ranks), major.activity.op,
          g.diverges_below.empty() ? "" : "; it parts from them below " + g.diverges_below));
    }
  }
  if (!v.dead.empty() || !v.missing.empty()) {
    add(v.dead);
    add(v.missing);
  }
  if (!v.silent.empty()) {
    add(v.silent);
    chain.push_back(
        fmt::format("no line, dump or stack from {} while the others time out: it never "
                    "reached the collective (stuck elsewhere or dead)",
                    RanksText(v.silent)));
  }
  if (ranks.empty()) return;
  // A group the culprits belong to that waits for them: the flight recorder's side of the story.
  for (const PgStall& s : v.pg_stalls) {
    std::vector<int64_t> absent;
    for (int64_t r : s.missing) {
      if (ranks.count(r)) absent.push_back(r);
    }
    if (absent.empty()) continue;
    chain.push_back(
        fmt::format("{}: process group {} is stalled at collective #{} ({}): {} "
                    "enqueued it; {} left no dump",
                    s.source, GroupLabel(s), s.stalled_seq, s.op.empty() ? "op unknown" : s.op,
                    RanksText(s.waiting), RanksText(absent)));
  }
  Culprit c;
  c.ranks.assign(ranks.begin(), ranks.end());
  c.chain = std::move(chain);
  for (const RankView& view : views) {
    if (view.id != c.ranks.front()) continue;
    c.host = view.evidence->host;
    if (view.evidence->process.local_rank) {
      c.host += fmt::format(" (LOCAL_RANK {}, GPU {})", *view.evidence->process.local_rank,
                            *view.evidence->process.local_rank);
    }
  }
  if (phase.empty() && !v.groups.empty()) phase = NamePhase(v.groups[0].activity.phase, step);
  c.phase = phase;
  v.culprit = std::move(c);
}

// A queue stall is a hang when a member is behind or missing, or when the watchdog reported it
// (it logs a queue only when a collective timed out or failed). A flight-recorder queue where
// every member waits at the same collective may be one in flight. The headline and the exit code
// use this one test, so they cannot disagree.
bool IsHangStall(const PgStall& s) {
  return !s.behind.empty() || !s.missing.empty() || s.source == "watchdog log";
}

// "rank 3", or "pid 4242 (RANK unknown)": a pid is never printed as a rank.
std::string CulpritText(const Verdict& v, const std::vector<int64_t>& ids) {
  const std::string text = IdsText(v.pid_only, ids);
  return text.starts_with("pid") ? text + " (RANK unknown)" : text;
}

std::string Headline(const Verdict& v) {
  const StackGroup* major = v.groups.empty() ? nullptr : &v.groups.front();
  std::string waiting;
  if (major && IsBlockedOnPeers(major->activity.kind)) {
    const bool pids = std::all_of(major->ranks.begin(), major->ranks.end(), [&](int64_t id) {
      return std::binary_search(v.pid_only.begin(), v.pid_only.end(), id);
    });
    const char* noun = pids ? "process" : "rank";
    waiting = fmt::format("; {} ({}) wait in {}",
                          major->ranks.size() == 1 ? fmt::format("1 {}", noun)
                                                   : fmt::format("{} {}{}", major->ranks.size(),
                                                                 noun, pids ? "es" : "s"),
                          FormatRankRanges(major->ranks), major->activity.op);
  }
  if (v.culprit) {
    return fmt::format("hang: culprit {}{}{}{}", CulpritText(v, v.culprit->ranks),
                       v.culprit->host.empty() ? "" : " on " + v.culprit->host,
                       v.culprit->phase.empty() ? "" : ", phase: " + v.culprit->phase, waiting);
  }
  for (const Pattern& p : v.patterns) return "hang: " + p.title;
  if (IsProblem(v.finding)) return fmt::format("hang: {}: {}", v.finding.kind, v.finding.summary);
  for (const PgStall& s : v.pg_stalls) {
    if (!IsHangStall(s)) continue;
    return fmt::format("hang: process group {} stalled at collective #{}", GroupLabel(s),
                       s.stalled_seq);
  }
  if (v.ranks_seen.empty() && !v.pg_stalls.empty()) {
    const PgStall& s = v.pg_stalls.front();
    return fmt::format(
        "no hang found: process group {} has collective #{} in flight on every "
        "member with a dump",
        GroupLabel(s), s.stalled_seq);
  }
  if (v.finding.kind == "healthy" && v.ranks_seen.empty()) return "no hang: " + v.finding.summary;
  if (v.ranks_seen.empty()) return "no verdict: no readable evidence of any rank";
  if (!v.moved.empty() && v.groups.empty()) {
    return fmt::format("no hang: {} moved between the snapshots", IdsText(v.pid_only, v.moved));
  }
  return fmt::format("no hang found: {} in {} stack group{}, none left behind by its peers",
                     IdsText(v.pid_only, v.ranks_seen), v.groups.size(),
                     v.groups.size() == 1 ? "" : "s");
}

bool NothingRead(const EvidenceSet& ev) {
  return ev.ranks.empty() && ev.fr_dumps.empty() && ev.logs.empty() && ev.ras.empty() &&
         ev.gpu_apps.empty();
}

// Files were read but nothing in them could be used: say what was read, never "no hang found".
std::string NothingUsableHeadline(const EvidenceSet& ev) {
  std::vector<std::string> parts;
  size_t stacks = 0, items = 0;
  const auto count = [&](size_t n, const char* one, const char* many) {
    if (n > 0) parts.push_back(fmt::format("{} {}", n, n == 1 ? one : many));
    items += n;
  };
  for (const RankEvidence& r : ev.ranks) stacks += r.pyspy ? 1u : 0u;
  count(ev.logs.size(), "log", "logs");
  count(ev.fr_dumps.size(), "flight-recorder dump", "flight-recorder dumps");
  count(stacks, "py-spy dump", "py-spy dumps");
  count(ev.ras.size(), "NCCL RAS report", "NCCL RAS reports");
  count(ev.ranks.size() - stacks, "process record", "process records");
  count(ev.gpu_apps.size(), "GPU process row", "GPU process rows");
  return fmt::format("no verdict: read {}; nothing in {} could be used (see the notes)",
                     fmt::join(parts, ", "), items == 1 ? "it" : "them");
}

// "read 812 lines of train.log, recognised none": said per file, never "no hang found".
void NoteUnrecognised(const EvidenceSet& ev, Verdict& v) {
  std::map<std::string, size_t> recognised;  // file -> lines recognised
  for (const GlooSignal& s : ev.gloo) ++recognised[s.file];
  for (const FailureSignal& s : ev.failures) ++recognised[s.file];
  for (const WatchdogEvent& e : ev.watchdog) ++recognised[e.file];
  for (const LogSignal& s : ev.log_signals) ++recognised[s.file];
  for (const LoadedLog& l : ev.logs) {
    if (auto it = recognised.find(l.file); it != recognised.end()) {
      v.notes.push_back(fmt::format(
          "read {} line{} of {}: recognised {} line{}, none that says what failed", l.lines,
          l.lines == 1 ? "" : "s", l.file, it->second, it->second == 1 ? "" : "s"));
      continue;
    }
    v.notes.push_back(
        fmt::format("read {} line{} of {}, recognised none: no watchdog, NCCL, CUDA, "
                    "launcher or traceback line",
                    l.lines, l.lines == 1 ? "" : "s", l.file));
  }
}

}  // namespace

Verdict Analyze(const EvidenceSet& ev, const AnalyzeOptions& options) {
  Verdict v;
  v.unreadable = ev.unreadable;
  v.bytes_read = ev.bytes_read;
  v.hosts = std::set<std::string>(ev.hosts.begin(), ev.hosts.end()).size();
  v.places = PlaceRanks(ev);
  v.placeholders = FindPlaceholders(ev);
  const std::vector<RankView> views = BuildViews(ev, v);
  std::set<int64_t> present;
  bool ranked_present = false;  // a live process whose RANK is known: absence is measured by it
  for (const RankView& view : views) {
    const auto& dump = view.evidence->pyspy;
    if (dump && dump->error.starts_with("process gone")) {
      v.dead.push_back(view.id);
      continue;
    }
    present.insert(view.id);
    ranked_present = ranked_present || view.evidence->process.rank.has_value();
    v.ranks_seen.push_back(view.id);
    if (!view.main || view.main->frames.empty()) v.no_stack.push_back(view.id);
    if (dump && dump->truncated) {
      // Without a RANK the view's id is the process id (the "processes (by pid)" line): say so.
      v.notes.push_back(
          fmt::format("the py-spy dump of {} {} was cut short: its stack may be "
                      "incomplete",
                      view.evidence->process.rank ? "rank" : "process", view.id));
    }
    if (dump && !dump->error.empty()) {
      v.notes.push_back(fmt::format("rank {}: py-spy failed ({}): no stack, not evidence of death",
                                    view.id, dump->error.substr(0, 160)));
    }
    if (view.evidence->process.state.rfind("T", 0) == 0) {
      v.notes.push_back(fmt::format("rank {} is stopped (State {}): run 'kill -CONT {}'", view.id,
                                    view.evidence->process.state, view.evidence->process.pid));
    }
  }
  for (const RasReport& ras : ev.ras) {
    for (const RasProcess& p : ras.dead_or_unreachable) {
      if (p.status == "INCOMPLETE") {  // it did not answer RAS in time: alive as far as we know
        v.notes.push_back(
            fmt::format("NCCL RAS: process {} on {} is INCOMPLETE (its data is missing; "
                        "not reported dead or unreachable)",
                        p.pid, p.host));
        continue;
      }
      bool placed = false;
      for (const RankView& view : views) {
        if (view.evidence->process.pid == p.pid &&
            (p.host.empty() || view.evidence->host.empty() || view.evidence->host == p.host)) {
          v.dead.push_back(view.id);
          placed = true;
        }
      }
      if (!placed) {
        v.notes.push_back(fmt::format("NCCL RAS: process {} on {} is {} (rank not in the bundles)",
                                      p.pid, p.host, p.status));
      }
    }
  }
  for (const auto& [file, dump] : ev.fr_dumps) {
    if (dump.rank) {
      present.insert(*dump.rank);
      ranked_present = true;
    }
  }
  v.expected_world = ExpectedWorld(ev, v.notes);
  Sort(v.dead);
  // Absence means something only next to presence: with no rank's bundle, dump or stack
  // collected (logs and a RAS summary alone, or processes whose RANK is unknown), every rank of
  // the world is absent, which names nobody. The world is kept for the other checks.
  if (v.expected_world && !ranked_present) {
    v.notes.push_back(fmt::format(
        "a world of {} ranks, but no rank's bundle, dump or stack was given (or no process's "
        "RANK is known): none is counted as missing",
        *v.expected_world));
  } else if (v.expected_world) {
    // The expected ranks with no evidence are missing, a suspect, when they are no more than
    // the ranks collected (a rank that died among those that wrote their stacks); more of them
    // is a partial collection (one node's bundles of a larger job), not that many deaths.
    std::set<int64_t> collected = present;
    collected.insert(v.dead.begin(), v.dead.end());
    const RankRuns gaps = RankGaps(collected, *v.expected_world);
    const int64_t absent = RunsSize(gaps);
    const auto within = static_cast<int64_t>(
        std::distance(collected.lower_bound(0), collected.lower_bound(*v.expected_world)));
    if (absent <= within) {
      for (const auto& [first, last] : gaps) {
        for (int64_t r = first; r <= last; ++r) v.missing.push_back(r);
      }
    } else {
      v.uncollected = absent;
      v.uncollected_ranges = FormatRuns(gaps);
      v.notes.push_back(fmt::format(
          "{} {} of a world of {} left no bundle, dump or stack, more than the {} collected: a "
          "partial collection, not named as dead (collect from every node to find a dead rank)",
          absent == 1 ? "rank" : "ranks", v.uncollected_ranges, *v.expected_world, within));
    }
  }
  Sort(v.ranks_seen);
  v.moved = MovedBetweenSnapshots(ev, v);
  std::vector<RankView> still;  // ranks that did not move: only they can be hung
  for (const RankView& view : views) {
    if (!std::binary_search(v.moved.begin(), v.moved.end(), view.id)) still.push_back(view);
  }
  v.groups = BuildGroups(still);
  v.pg_stalls = StallsFromFlightRecorder(ev.fr_dumps);
  for (PgStall& s : StallsFromGlooSequences(ev.fr_dumps)) v.pg_stalls.push_back(std::move(s));
  for (PgStall& s : StallsFromWatchdog(ev.watchdog)) v.pg_stalls.push_back(std::move(s));
  const std::optional<int64_t> step = StalledStep(ev, v.groups);
  std::vector<int64_t> dead_or_missing = v.dead;
  dead_or_missing.insert(dead_or_missing.end(), v.missing.begin(), v.missing.end());
  Sort(dead_or_missing);
  v.patterns = FindPatterns({ev, still, v.groups, v.pg_stalls, dead_or_missing, step});
  const SilentRanks silence = InferSilentRanks(ev, v);
  v.silent = silence.silent;
  for (std::string& note : SilentRanksNotes(silence)) v.notes.push_back(std::move(note));
  FindCulprit(v, still, step);
  v.timeout = FindTimeout(ev, v, options);
  bool stalled = false;
  for (const PgStall& s : v.pg_stalls) stalled = stalled || IsHangStall(s);
  v.hang = v.culprit.has_value() || !v.patterns.empty() || stalled;
  FindFirstFailure(ev, v);
  v.hang = v.hang || IsProblem(v.finding);
  v.headline = Headline(v);
  if (v.finding.kind == "unknown" && !v.hang && !NothingRead(ev)) {
    v.headline = NothingUsableHeadline(ev);
    NoteUnrecognised(ev, v);
  }
  return v;
}

}  // namespace strata::hang

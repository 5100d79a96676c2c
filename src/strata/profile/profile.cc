#include "strata/profile/profile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace strata::profile {
namespace {

namespace fs = std::filesystem;

bool LooksLikeTrace(const std::string& name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".json") || ends_with(".json.gz");
}

std::string RankList(const std::vector<int64_t>& ranks, size_t shown) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < shown; ++i) {
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  if (ranks.size() > shown) out += fmt::format(", ... ({} in all)", ranks.size());
  return out;
}

}  // namespace

Result<std::vector<std::string>> ExpandTracePaths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        if (entry.is_regular_file(ec) && LooksLikeTrace(entry.path().filename().string())) {
          found.push_back(entry.path().string());
        }
      }
      if (found.empty()) {
        return InvalidInput("no trace files (*.json, *.json.gz) in this directory")
            .InFile(path)
            .WithHint("pass the directory torch.profiler's tensorboard_trace_handler wrote into");
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(path, ec)) {
      files.push_back(path);
    } else {
      return IoError("cannot read: no such file or directory").InFile(path);
    }
  }
  if (files.empty()) {
    return InvalidInput("no trace given")
        .WithHint("strata profile TRACE.json[.gz]... or a directory of them");
  }
  return files;
}

std::vector<std::string> JobWarnings(const std::vector<RankProfile>& ranks) {
  std::vector<std::string> warnings;
  std::map<int64_t, std::vector<const RankProfile*>> by_rank;
  std::set<int64_t> worlds;
  size_t unknown = 0;
  for (const RankProfile& r : ranks) {
    if (r.rank)
      by_rank[*r.rank].push_back(&r);
    else
      ++unknown;
    if (r.world_size) worlds.insert(*r.world_size);
  }
  for (const auto& [rank, files] : by_rank) {
    if (files.size() > 1) {
      warnings.push_back(
          fmt::format("rank {} appears in {} files ({} and {}): traces of different runs or steps?",
                      rank, files.size(), files[0]->file, files[1]->file));
    }
  }
  if (worlds.size() > 1) {
    warnings.push_back(
        fmt::format("the files disagree on the world size ({}): traces of "
                    "different jobs?",
                    fmt::join(worlds, ", ")));
  } else if (worlds.size() == 1 && ranks.size() > 1) {
    const int64_t world = *worlds.begin();
    std::vector<int64_t> missing;
    for (int64_t r = 0; r < world && missing.size() < 1000000; ++r) {
      if (!by_rank.count(r)) missing.push_back(r);
    }
    if (!missing.empty()) {
      warnings.push_back(
          fmt::format("{} of {} ranks read; missing ranks {}: the slowest rank may be among them",
                      by_rank.size(), world, RankList(missing, 8)));
    }
  } else if (worlds.empty() && by_rank.size() > 1) {
    // No world size to count against, but rank ids with a gap still say who is missing.
    std::vector<int64_t> missing;
    const int64_t last = by_rank.rbegin()->first;
    for (int64_t r = by_rank.begin()->first; r < last && missing.size() < 1000000; ++r) {
      if (!by_rank.count(r)) missing.push_back(r);
    }
    if (!missing.empty()) {
      warnings.push_back(fmt::format(
          "ranks {} to {} read without a world size, but not ranks {}: the slowest rank may be "
          "among them",
          by_rank.begin()->first, last, RankList(missing, 8)));
    }
  }
  if (unknown > 0 && ranks.size() > 1) {
    warnings.push_back(fmt::format(
        "{} of {} files do not say their rank (no distributedInfo): they are listed by file",
        unknown, ranks.size()));
  }
  // Ranks that meet in collectives run step N at the same time: their step-N intervals must
  // overlap. Disjoint ones mean skewed clocks (or files of different runs).
  std::map<int64_t, std::vector<std::pair<const RankProfile*, const StepProfile*>>> by_step;
  for (const RankProfile& r : ranks) {
    for (const StepProfile& s : r.steps) by_step[s.step].emplace_back(&r, &s);
  }
  for (const auto& [step, list] : by_step) {
    if (list.size() < 2) continue;
    auto late = std::max_element(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.second->cpu_start_ns < b.second->cpu_start_ns;
    });
    auto early = std::min_element(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.second->cpu_end_ns < b.second->cpu_end_ns;
    });
    const int64_t gap = late->second->cpu_start_ns - early->second->cpu_end_ns;
    if (gap > 0) {
      auto name = [](const RankProfile* r) {
        return r->rank ? "rank " + std::to_string(*r->rank) : r->file;
      };
      warnings.push_back(fmt::format(
          "clock skew: step {} ends on {} {:.3f} ms before it starts on {}; ranks that meet in "
          "collectives run a step at the same time, so their clocks differ by at least that "
          "(or the files come from different runs). Per-rank figures are unaffected",
          step, name(early->first), static_cast<double>(gap) * 1e-6, name(late->first)));
      break;  // one such warning says it
    }
  }
  return warnings;
}

namespace {

int64_t Wait(const Figures& f) { return f.nccl_exposed_ns + f.comm_other_exposed_ns; }

// The steps two or more ranks recorded with GPU work in them (a step without GPU work - the one
// torch.profiler opens as it stops - is not compared): (rank index, figures) by step number.
std::map<int64_t, std::vector<std::pair<size_t, const Figures*>>> ComparedSteps(
    const std::vector<RankProfile>& ranks) {
  std::map<int64_t, std::vector<std::pair<size_t, const Figures*>>> by_step;
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (const StepProfile& s : ranks[i].steps) {
      if (s.figures.gpu_events > 0) by_step[s.step].emplace_back(i, &s.figures);
    }
  }
  std::erase_if(by_step, [](const auto& entry) { return entry.second.size() < 2; });
  return by_step;
}

}  // namespace

std::vector<StepSwing> StepSwings(const std::vector<RankProfile>& ranks) {
  struct Range {
    int64_t low = 0, high = 0;
    void Add(int64_t v, bool first) {
      low = first ? v : std::min(low, v);
      high = first ? v : std::max(high, v);
    }
  };
  std::vector<Range> wait(ranks.size()), span(ranks.size());
  std::vector<StepSwing> swings(ranks.size());
  for (const auto& [step, list] : ComparedSteps(ranks)) {
    for (const auto& [index, f] : list) {
      const bool first = swings[index].steps == 0;
      wait[index].Add(Wait(*f), first);
      span[index].Add(f->span_ns, first);
      ++swings[index].steps;
    }
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (swings[i].steps < 2) continue;
    swings[i].wait_ns = wait[i].high - wait[i].low;
    swings[i].span_ns = span[i].high - span[i].low;
  }
  return swings;
}

StragglerPick PickStraggler(const std::vector<std::pair<size_t, const Figures*>>& figures,
                            const std::vector<StepSwing>& swings) {
  StragglerPick p;
  if (figures.empty()) return p;
  auto wait = [](const Figures& f) { return Wait(f); };
  auto span = [](const Figures& f) { return f.span_ns; };
  auto by = [](auto key) {
    return [key](const auto& a, const auto& b) { return key(*a.second) < key(*b.second); };
  };
  const auto most_wait = std::max_element(figures.begin(), figures.end(), by(wait));
  p.communication = wait(*most_wait->second) > 0;
  // The figure that names the straggler, oriented so that the straggler has the least of it:
  // exposed communication, or the span negated.
  auto figure = [&](const Figures& f) { return p.communication ? wait(f) : -span(f); };
  std::vector<std::pair<size_t, const Figures*>> order = figures;
  std::stable_sort(order.begin(), order.end(), by(figure));
  p.straggler = order.front().first;
  p.reference = p.communication ? most_wait->first
                                : std::min_element(figures.begin(), figures.end(), by(span))->first;
  StragglerMargin& m = p.margin;
  const auto& next = order.size() > 1 ? order[1] : order.front();
  m.runner_up = next.first;
  m.straggler_ns = p.communication ? wait(*order.front().second) : span(*order.front().second);
  m.runner_up_ns = p.communication ? wait(*next.second) : span(*next.second);
  m.lead_ns = figure(*next.second) - figure(*order.front().second);
  // The noise: how far the same ranks' figure moves between their steps.
  for (const auto& [index, f] : figures) {
    if (index >= swings.size()) continue;
    const StepSwing& s = swings[index];
    const std::optional<int64_t>& swing = p.communication ? s.wait_ns : s.span_ns;
    if (swing && (!m.noise_ns || *swing > *m.noise_ns)) {
      m.noise_ns = *swing;
      m.noise_index = index;
      m.noise_steps = s.steps;
    }
  }
  m.clear = order.size() > 1 && m.noise_ns && m.lead_ns > *m.noise_ns;
  return p;
}

std::vector<StepSpread> SpreadAcrossRanks(const std::vector<RankProfile>& ranks) {
  const std::vector<StepSwing> swings = StepSwings(ranks);
  auto wait = [](const Figures& f) { return Wait(f); };
  auto compute = [&](const Figures& f) { return f.busy_ns - wait(f); };
  std::vector<StepSpread> spread;
  for (const auto& [step, list] : ComparedSteps(ranks)) {
    auto by = [](auto key) {
      return [key](const auto& a, const auto& b) { return key(*a.second) < key(*b.second); };
    };
    auto span = [](const Figures& f) { return f.span_ns; };
    const auto longest = *std::max_element(list.begin(), list.end(), by(span));
    const auto shortest = *std::min_element(list.begin(), list.end(), by(span));
    const auto least_compute = *std::min_element(list.begin(), list.end(), by(compute));
    const auto most_compute = *std::max_element(list.begin(), list.end(), by(compute));
    StepSpread s;
    s.step = step;
    s.ranks = list.size();
    s.longest = longest.first;
    s.shortest = shortest.first;
    s.longest_span_ns = longest.second->span_ns;
    s.shortest_span_ns = shortest.second->span_ns;
    s.compute_min_ns = compute(*least_compute.second);
    s.compute_max_ns = compute(*most_compute.second);
    const Figures& first = *list.front().second;
    s.identical = std::all_of(list.begin(), list.end(), [&](const auto& r) {
      const Figures& a = *r.second;
      return a.span_ns == first.span_ns && a.busy_ns == first.busy_ns && wait(a) == wait(first);
    });
    const StragglerPick pick = PickStraggler(list, swings);
    s.margin = pick.margin;
    // A structured binding is not captured by name here (clang before 16 refuses it): a plain
    // reference is.
    const auto& rows = list;
    auto figures_of = [&rows](size_t index) -> const Figures& {
      return *std::find_if(rows.begin(), rows.end(), [&](const auto& r) {
                return r.first == index;
              })->second;
    };
    s.communication = pick.communication;
    if (s.communication) {
      s.straggler = pick.straggler;
      s.waited_most = pick.reference;
      const Figures& late = figures_of(pick.straggler);
      const Figures& early = figures_of(pick.reference);
      s.straggler_wait_ns = wait(late);
      s.most_wait_ns = wait(early);
      s.straggler_compute_ns = compute(late);
      // What made the straggler late, against the rank that waited for it longest: its own
      // kernels, its GPU idling inside the step, or neither - then its step's GPU work began late.
      const int64_t gap = s.most_wait_ns - s.straggler_wait_ns;
      const int64_t extra_compute = compute(late) - compute(early);
      const int64_t extra_idle = late.idle_ns() - early.idle_ns();
      if (std::max(extra_compute, extra_idle) * 2 >= gap) {
        s.reason = extra_compute >= extra_idle ? "compute" : "idle";
        s.reason_ns = std::max(extra_compute, extra_idle);
      } else {
        s.reason = "late start";
        s.reason_ns = gap;
      }
    } else {
      // The longest span against the shortest (PickStraggler).
      s.straggler = pick.straggler;
      s.waited_most = pick.reference;
      const Figures& slow = figures_of(pick.straggler);
      const Figures& fast = figures_of(pick.reference);
      s.straggler_compute_ns = compute(slow);
      const int64_t extra_idle = slow.idle_ns() - fast.idle_ns();
      const int64_t extra_compute = compute(slow) - compute(fast);
      s.reason = extra_idle > extra_compute ? "idle_s" : "compute_s";
      s.reason_ns = std::max(extra_idle, extra_compute);
    }
    spread.push_back(std::move(s));
  }
  return spread;
}

Result<ProfileReport> ProfileTraces(const std::vector<std::string>& files,
                                    KernelClassifier& classifier) {
  ProfileReport report;
  report.rules_file = classifier.file();
  std::optional<Error> first_left_out;
  for (const std::string& file : files) {
    Result<RankTrace> read = ReadTrace(file, classifier);
    if (!read.ok()) {
      // One rank's file cut before its first event (its profiler killed early) leaves the other
      // ranks readable: it is left out, and counts as a missing rank.
      if (files.size() < 2 || !EndsBeforeAnyEvent(read.error())) return read.error();
      report.warnings.push_back(fmt::format(
          "{}: left out: {} (a profiler stopped before writing any event?): the other files are "
          "read, and its rank counts as missing",
          file, read.error().message));
      if (!first_left_out) first_left_out = read.error();
      continue;
    }
    const RankTrace& trace = *read;
    RankProfile rank = AnalyzeRank(trace);
    if (!rank.cut.empty()) report.warnings.push_back(file + ": " + rank.cut);
    if (rank.whole_trace.gpu_events == 0) {
      // A profiler writes each GPU event after the CPU events that launched it: in a cut file
      // the GPU events are the likelier loss than a run without ProfilerActivity.CUDA.
      report.warnings.push_back(
          file + (rank.cut.empty()
                      ? ": no GPU kernel, memcpy or memset in the trace: was it recorded with "
                        "ProfilerActivity.CUDA?"
                      : ": no GPU kernel, memcpy or memset read before the cut: a profiler "
                        "writes GPU events after the CPU events that launched them, so they "
                        "were likely past the cut"));
    }
    if (!rank.devices.empty()) {
      std::vector<int64_t> ids;
      for (const DeviceBusy& d : rank.devices) ids.push_back(d.device);
      report.warnings.push_back(fmt::format(
          "{}: the trace holds GPU events of {} devices ({}): one process driving several GPUs "
          "(device_map=\"auto\", DataParallel, a pipeline in one process); its figures are their "
          "union (GPU busy while any of them works), each device's own busy and idle time is "
          "listed under it",
          file, rank.devices.size(), fmt::join(ids, ", ")));
    }
    if (rank.events_without_time > 0) {
      report.warnings.push_back(fmt::format("{}: {} GPU events without ts or dur were skipped",
                                            file, rank.events_without_time));
    }
    report.ranks.push_back(std::move(rank));
  }
  if (report.ranks.empty() && first_left_out) return *first_left_out;
  std::stable_sort(report.ranks.begin(), report.ranks.end(),
                   [](const RankProfile& a, const RankProfile& b) {
                     if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();
                     return a.rank.value_or(0) < b.rank.value_or(0);
                   });
  for (std::string& w : JobWarnings(report.ranks)) report.warnings.push_back(std::move(w));
  report.spread = SpreadAcrossRanks(report.ranks);
  return report;
}

}  // namespace strata::profile

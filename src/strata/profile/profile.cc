#include "strata/profile/profile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
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

std::vector<StepSpread> SpreadAcrossRanks(const std::vector<RankProfile>& ranks) {
  std::map<int64_t, std::vector<std::pair<size_t, const Figures*>>> by_step;
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (const StepProfile& s : ranks[i].steps) by_step[s.step].emplace_back(i, &s.figures);
  }
  std::vector<StepSpread> spread;
  for (const auto& [step, list] : by_step) {
    if (list.size() < 2) continue;
    auto by_span = [](const auto& a, const auto& b) {
      return a.second->span_ns < b.second->span_ns;
    };
    const auto slow = *std::max_element(list.begin(), list.end(), by_span);
    const auto fast = *std::min_element(list.begin(), list.end(), by_span);
    StepSpread s;
    s.step = step;
    s.ranks = list.size();
    s.slowest = slow.first;
    s.fastest = fast.first;
    s.slowest_span_ns = slow.second->span_ns;
    s.fastest_span_ns = fast.second->span_ns;
    auto compute = [](const Figures& f) {
      return f.busy_ns - f.nccl_exposed_ns - f.comm_other_exposed_ns;
    };
    const std::pair<const char*, int64_t> parts[] = {
        {"idle_s", slow.second->idle_ns() - fast.second->idle_ns()},
        {"nccl_exposed_s", slow.second->nccl_exposed_ns - fast.second->nccl_exposed_ns},
        {"comm_other_exposed_s",
         slow.second->comm_other_exposed_ns - fast.second->comm_other_exposed_ns},
        {"compute_s", compute(*slow.second) - compute(*fast.second)},
    };
    const auto* largest =
        std::max_element(std::begin(parts), std::end(parts),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    s.largest_part = largest->first;
    s.largest_part_ns = largest->second;
    spread.push_back(std::move(s));
  }
  return spread;
}

Result<ProfileReport> ProfileTraces(const std::vector<std::string>& files,
                                    KernelClassifier& classifier) {
  ProfileReport report;
  report.rules_file = classifier.file();
  for (const std::string& file : files) {
    STRATA_ASSIGN_OR_RETURN(RankTrace trace, ReadTrace(file, classifier));
    RankProfile rank = AnalyzeRank(trace);
    if (!rank.cut.empty()) report.warnings.push_back(file + ": " + rank.cut);
    if (rank.whole_trace.gpu_events == 0) {
      report.warnings.push_back(
          file +
          ": no GPU kernel, memcpy or memset in the trace: was it recorded with "
          "ProfilerActivity.CUDA?");
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

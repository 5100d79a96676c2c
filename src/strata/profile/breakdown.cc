#include "strata/profile/breakdown.h"

#include <algorithm>
#include <map>
#include <utility>

namespace strata::profile {
namespace {

using Interval = std::pair<int64_t, int64_t>;

// Sorted, disjoint intervals covering the same time (touching intervals are joined).
std::vector<Interval> Merge(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> merged;
  for (const Interval& i : intervals) {
    if (!merged.empty() && i.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, i.second);
    } else {
      merged.push_back(i);
    }
  }
  return merged;
}

int64_t Length(const std::vector<Interval>& merged) {
  int64_t total = 0;
  for (const Interval& i : merged) total += i.second - i.first;
  return total;
}

// Time covered by both sets (each merged).
int64_t Overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t start = std::max(a[i].first, b[j].first);
    const int64_t end = std::min(a[i].second, b[j].second);
    if (end > start) total += end - start;
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

// Communication time of `component` that no other kernel overlaps. Copies and memsets do not
// count as overlap: they are not the computation communication is meant to hide behind (HTA's
// communication/computation overlap counts kernels the same way).
int64_t Exposed(const std::vector<GpuEvent>& events, Component component) {
  std::vector<Interval> comm, rest;
  for (const GpuEvent& e : events) {
    if (e.component == component) {
      comm.emplace_back(e.start_ns, e.end_ns);
    } else if (e.component != Component::kMemcpy && e.component != Component::kMemset) {
      rest.emplace_back(e.start_ns, e.end_ns);
    }
  }
  if (comm.empty()) return 0;
  const std::vector<Interval> comm_merged = Merge(std::move(comm));
  return Length(comm_merged) - Overlap(comm_merged, Merge(std::move(rest)));
}

}  // namespace

Figures ComputeFigures(const std::vector<GpuEvent>& events,
                       const std::vector<Collective>& collectives) {
  Figures f;
  f.gpu_events = static_cast<int64_t>(events.size());
  if (events.empty()) return f;
  std::vector<Interval> all;
  all.reserve(events.size());
  std::array<std::vector<Interval>, kComponentCount> by_component;
  std::map<uint16_t, std::vector<Interval>> by_collective;
  std::map<uint16_t, int64_t> collective_kernels;
  int64_t first = events.front().start_ns, last = events.front().end_ns;
  for (const GpuEvent& e : events) {
    all.emplace_back(e.start_ns, e.end_ns);
    first = std::min(first, e.start_ns);
    last = std::max(last, e.end_ns);
    const auto c = static_cast<size_t>(e.component);
    by_component[c].emplace_back(e.start_ns, e.end_ns);
    ++f.component_events[c];
    if (e.component == Component::kNccl) {
      by_collective[e.collective].emplace_back(e.start_ns, e.end_ns);
      ++collective_kernels[e.collective];
    }
  }
  f.span_ns = last - first;
  f.busy_ns = Length(Merge(std::move(all)));
  for (size_t c = 0; c < kComponentCount; ++c) {
    f.component_ns[c] = Length(Merge(std::move(by_component[c])));
  }
  f.nccl_exposed_ns = Exposed(events, Component::kNccl);
  f.comm_other_exposed_ns = Exposed(events, Component::kCommOther);
  for (auto& [index, intervals] : by_collective) {
    CollectiveTime t;
    if (index < collectives.size()) t.collective = collectives[index];
    t.time_ns = Length(Merge(std::move(intervals)));
    t.kernels = collective_kernels[index];
    f.collectives.push_back(std::move(t));
  }
  std::stable_sort(
      f.collectives.begin(), f.collectives.end(),
      [](const CollectiveTime& a, const CollectiveTime& b) { return a.time_ns > b.time_ns; });
  return f;
}

RankProfile AnalyzeRank(const RankTrace& trace) {
  RankProfile p;
  p.file = trace.file;
  p.rank = trace.rank;
  p.world_size = trace.world_size;
  p.device = trace.device;
  p.cut = trace.cut;
  p.events_without_time = trace.events_without_time;
  p.whole_trace = ComputeFigures(trace.gpu, trace.collectives);
  std::map<int64_t, std::vector<Interval>> by_device;
  for (const GpuEvent& e : trace.gpu) {
    if (e.device >= 0) by_device[e.device].emplace_back(e.start_ns, e.end_ns);
  }
  if (by_device.size() > 1) {
    for (auto& [device, intervals] : by_device) {
      const auto events = static_cast<int64_t>(intervals.size());
      p.devices.push_back({device, Length(Merge(std::move(intervals))), events});
    }
  }

  // One mark per step number (a trace may carry a step twice: the longest is kept).
  std::vector<StepMark> steps;
  for (const StepMark& s : trace.steps) {
    auto same = std::find_if(steps.begin(), steps.end(),
                             [&](const StepMark& t) { return t.step == s.step; });
    if (same == steps.end()) {
      steps.push_back(s);
    } else if (s.end_ns - s.start_ns > same->end_ns - same->start_ns) {
      *same = s;
    }
  }
  std::sort(steps.begin(), steps.end(),
            [](const StepMark& a, const StepMark& b) { return a.start_ns < b.start_ns; });

  std::vector<std::vector<GpuEvent>> per_step(steps.size());
  for (const GpuEvent& e : trace.gpu) {
    auto launch = std::lower_bound(trace.launches.begin(), trace.launches.end(),
                                   std::pair<int64_t, int64_t>(e.correlation, INT64_MIN));
    if (e.correlation < 0 || launch == trace.launches.end() || launch->first != e.correlation) {
      ++p.unlaunched_events;
      continue;
    }
    const int64_t at = launch->second;
    // The last step starting at or before the launch, if the launch is inside it.
    auto after = std::upper_bound(steps.begin(), steps.end(), at,
                                  [](int64_t t, const StepMark& s) { return t < s.start_ns; });
    if (after == steps.begin() || at > std::prev(after)->end_ns) {
      ++p.events_between_steps;
      continue;
    }
    per_step[static_cast<size_t>(std::prev(after) - steps.begin())].push_back(e);
  }
  if (steps.empty()) p.events_between_steps = 0;  // no steps: the whole trace is the unit
  for (size_t i = 0; i < steps.size(); ++i) {
    p.steps.push_back({steps[i].step, steps[i].start_ns, steps[i].end_ns,
                       ComputeFigures(per_step[i], trace.collectives)});
  }
  return p;
}

}  // namespace strata::profile

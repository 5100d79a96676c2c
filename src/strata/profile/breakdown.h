// Where a rank's GPU time went, for the whole trace and per step: the figures of
// `strata profile`. A kernel belongs to the step whose CPU launch issued it (as Holistic Trace
// Analysis assigns them), so work queued before the profiler started counts in the whole trace
// only, and a step's span runs from its first GPU event's start to its last one's end.
#ifndef STRATA_PROFILE_BREAKDOWN_H_
#define STRATA_PROFILE_BREAKDOWN_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/result.h"
#include "strata/profile/kernel_rules.h"
#include "strata/profile/trace_reader.h"

namespace strata::profile {

/// NCCL time of one collective kind on one process group.
struct CollectiveTime {
  Collective collective;
  int64_t time_ns = 0;  // union of its kernels' intervals
  int64_t kernels = 0;
};

/// All times are integer nanoseconds; intervals are merged, so overlapping kernels on several
/// streams count once.
struct Figures {
  int64_t span_ns = 0;                // first GPU event start to last GPU event end
  int64_t busy_ns = 0;                // union of kernel, memcpy and memset intervals
  int64_t nccl_exposed_ns = 0;        // NCCL time during which no other kernel runs
  int64_t comm_other_exposed_ns = 0;  // the same for non-NCCL communication kernels
  std::array<int64_t, kComponentCount> component_ns{};  // union per component
  std::array<int64_t, kComponentCount> component_events{};
  std::vector<CollectiveTime> collectives;  // NCCL kinds and process groups, by time
  int64_t gpu_events = 0;

  int64_t idle_ns() const { return span_ns - busy_ns; }
  int64_t of(Component c) const { return component_ns[static_cast<size_t>(c)]; }
};

struct StepProfile {
  int64_t step = 0;          // N of ProfilerStep#N
  int64_t cpu_start_ns = 0;  // the ProfilerStep#N annotation on the CPU (the rank's clock)
  int64_t cpu_end_ns = 0;
  Figures figures;
};

/// One GPU of a trace that holds several (one process driving them: device_map="auto",
/// DataParallel, a pipeline in one process): its own busy time, over the trace's span.
struct DeviceBusy {
  int64_t device = 0;
  int64_t busy_ns = 0;  // union of this device's kernel, memcpy and memset intervals
  int64_t gpu_events = 0;
};

struct RankProfile {
  std::string file;
  std::optional<int64_t> rank;
  std::optional<int64_t> world_size;
  std::string device;
  Figures whole_trace;
  std::vector<StepProfile> steps;  // empty when the trace has no ProfilerStep#N
  int64_t unlaunched_events = 0;   // GPU events whose launch is not in the trace (whole trace only)
  int64_t events_between_steps = 0;  // launched outside every step (whole trace only)
  int64_t events_without_time = 0;
  std::string cut;  // see RankTrace::cut
  /// Filled when the trace's GPU events name two or more devices: the figures above are their
  /// union (busy while any of them works), these are each device's own.
  std::vector<DeviceBusy> devices;
};

/// The figures of one set of GPU events (the caller picks them: a step's, the whole trace's).
Figures ComputeFigures(const std::vector<GpuEvent>& events,
                       const std::vector<Collective>& collectives);

/// The whole trace and each step of one rank.
RankProfile AnalyzeRank(const RankTrace& trace);

}  // namespace strata::profile

#endif  // STRATA_PROFILE_BREAKDOWN_H_

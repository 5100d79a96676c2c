// A streaming reader of PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzip: one file is
// one rank. It keeps only what the step breakdown needs (GPU intervals with their component,
// CPU launch times by correlation id, ProfilerStep#N marks), so memory grows with the number of
// GPU events and launches, not with the file's bytes (names, args and CPU ops are dropped).
#ifndef STRATA_PROFILE_TRACE_READER_H_
#define STRATA_PROFILE_TRACE_READER_H_

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strata/core/result.h"
#include "strata/profile/kernel_rules.h"

namespace strata::profile {

/// A kernel, memcpy or memset on the GPU timeline. Times in integer nanoseconds (Kineto writes
/// microseconds, newer versions with a nanosecond fraction).
struct GpuEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t correlation = -1;  // links the event to its CPU launch; -1 when the trace has none
  int32_t stream = -1;
  int16_t device = -1;  // args.device (the GPU's index in the process); -1 when absent
  Component component = Component::kOther;
  uint16_t collective = 0;  // for NCCL kernels: index into RankTrace::collectives
};

/// The collective kind of an NCCL kernel ("AllReduce", from its name) and its process group
/// as Kineto records it on the kernel (torch >= 2.3; empty when absent).
struct Collective {
  std::string kind;
  std::string process_group;        // "Process Group Name"
  std::string process_group_desc;   // "Process Group Description"
  std::string process_group_ranks;  // "Process Group Ranks", as written: "[0, 1]"
};

/// A `ProfilerStep#N` annotation on the CPU.
struct StepMark {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct RankTrace {
  std::string file;
  std::optional<int64_t> rank;        // distributedInfo.rank
  std::optional<int64_t> world_size;  // distributedInfo.world_size
  std::string device;                 // deviceProperties[0].name
  std::vector<GpuEvent> gpu;
  std::vector<StepMark> steps;
  /// (correlation id, CPU launch start) of every runtime/driver call that carries one, sorted.
  std::vector<std::pair<int64_t, int64_t>> launches;
  std::vector<Collective> collectives;  // index 0 is the "no collective" entry
  int64_t events = 0;                   // trace events read
  int64_t events_without_time = 0;      // GPU events lacking ts or dur, not counted
  /// Not empty when the file could not be read to its end (a profiler killed mid-write): what
  /// happened and where; everything before that point was read.
  std::string cut;
};

/// Whether `e`, from ReadTrace, says the file ended before its first trace event: empty, or cut
/// before its 'traceEvents' array - a profiler killed before it wrote any event. Alone such a
/// file is bad input; among other ranks' files it is a missing rank (ProfileTraces).
bool EndsBeforeAnyEvent(const Error& e);

/// Reads one trace file (gzip is detected by its magic bytes, not its name). Errors (exit 2):
/// unreadable, not JSON, JSON that is not a Chrome trace (no traceEvents).
Result<RankTrace> ReadTrace(const std::string& path, KernelClassifier& classifier);

/// The same from a stream (tests, and the benchmark's generated trace); `file` names it.
Result<RankTrace> ReadTraceStream(std::istream& in, const std::string& file,
                                  KernelClassifier& classifier);

}  // namespace strata::profile

#endif  // STRATA_PROFILE_TRACE_READER_H_

// Horovod's timeline (HOROVOD_TIMELINE / --timeline-filename): a Chrome-trace JSON array that
// rank 0 writes as it goes, one object per event (horovod/common/timeline.cc). Each tensor is a
// "process": {"name": "process_name", "ph": "M", "pid": N, "args": {"name": "<tensor>"}}. Its
// negotiation opens with {"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": T, "pid": N}, each
// rank that reports the tensor ready adds {"ph": "X", "name": "<rank>", "ts": T, "pid": N,
// "dur": 0}, and {"ph": "E", ...} closes it once every rank is ready; the operation itself
// ("ALLREDUCE" and its activities) follows as further B/E pairs.
//
// Read one object at a time, so a file cut anywhere reads up to its last whole event: Horovod
// before 0.20 never closes the array ("},\n" after every event), later versions rewrite the
// closing "]" after each event, and a killed job can stop mid-object.
#ifndef STRATA_HANG_PARSERS_HOROVOD_TIMELINE_H_
#define STRATA_HANG_PARSERS_HOROVOD_TIMELINE_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/result.h"

namespace strata::hang {

struct TimelineNegotiation {
  std::string tensor;       // the tensor's name ("pid <N>" when its metadata is missing)
  std::string op;           // "ALLREDUCE" of "NEGOTIATE_ALLREDUCE"
  int64_t begin_us = 0;     // "ts" of the "B" event, microseconds since the timeline started
  std::set<int64_t> ready;  // ranks whose readiness mark was written
  int line = 0;             // line of the "B" event
};

struct HorovodTimeline {
  std::string file;
  std::vector<TimelineNegotiation> open;  // begun and never closed when the file ends
  std::set<int64_t> ranks;  // ranks that marked ready in a negotiation that closed (every rank)
  std::vector<std::string> open_ops;  // operations begun and not ended: "ALLREDUCE grad_0"
  size_t events = 0;
  size_t negotiations_closed = 0;
  int64_t last_ts_us = 0;
  bool truncated = false;  // no closing ']', or the last object cut off
};

/// True when `head` (the start of a file) is a JSON array of Chrome-trace events ("ph").
bool LooksLikeChromeTraceArray(std::string_view head);

/// The timeline's state at its end. Errors name the file and line: an event that is not JSON
/// (other than a last one cut off), an event without "ph", or a trace with no Horovod tensor.
Result<HorovodTimeline> ParseHorovodTimeline(std::string_view text, const std::string& file);

}  // namespace strata::hang

#endif  // STRATA_HANG_PARSERS_HOROVOD_TIMELINE_H_

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "strata/hang/parsers/watchdog_log.h"

// What is done with the parsed events: the effective timeout, the kinds' names and the JSON.
namespace strata::hang {

std::optional<TimeoutEvidence> EffectiveCollectiveTimeout(
    const std::vector<WatchdogEvent>& events) {
  std::optional<TimeoutEvidence> observed, configured;
  for (const WatchdogEvent& e : events) {
    if (!e.timeout_ms) continue;
    const bool is_setting = e.kind == WatchdogEventKind::kTimeoutSetting;
    std::optional<TimeoutEvidence>& slot = is_setting ? configured : observed;
    if (slot && slot->timeout_ms >= *e.timeout_ms) continue;
    slot = TimeoutEvidence{
        *e.timeout_ms,
        is_setting ? e.detail : fmt::format("Timeout(ms)={} in a WorkNCCL line", *e.timeout_ms),
        e.file, e.line};
  }
  return observed ? observed : configured;
}

std::string_view WatchdogEventKindName(WatchdogEventKind kind) {
  switch (kind) {
    case WatchdogEventKind::kTimeout:
      return "timeout";
    case WatchdogEventKind::kWorkStatus:
      return "work_status";
    case WatchdogEventKind::kDumpSignal:
      return "dump_signal";
    case WatchdogEventKind::kAsyncError:
      return "async_error";
    case WatchdogEventKind::kHeartbeatTimeout:
      return "heartbeat_timeout";
    case WatchdogEventKind::kTakingDown:
      return "taking_down";
    case WatchdogEventKind::kOom:
      return "oom";
    case WatchdogEventKind::kCommInit:
      return "comm_init";
    case WatchdogEventKind::kDestroy:
      return "destroy";
    case WatchdogEventKind::kDesyncReport:
      return "desync_report";
    case WatchdogEventKind::kTimeoutSetting:
      return "timeout_setting";
    case WatchdogEventKind::kOther:
      return "other";
  }
  return "other";
}

Json ToJson(const std::vector<WatchdogEvent>& events) {
  Json out = Json::array();
  const auto put = [](Json& j, const char* key, const std::optional<int64_t>& v) {
    if (v) j[key] = *v;
  };
  const auto put_s = [](Json& j, const char* key, const std::string& v) {
    if (!v.empty()) j[key] = v;
  };
  for (const WatchdogEvent& e : events) {
    Json j;
    j["kind"] = WatchdogEventKindName(e.kind);
    j["line"] = e.line;
    put(j, "global_rank", e.global_rank);
    put(j, "pg_rank", e.pg_rank);
    put_s(j, "pg_id", e.pg_id);
    put_s(j, "pg_name", e.pg_name);
    put_s(j, "pg_desc", e.pg_desc);
    put(j, "seq", e.seq);
    put_s(j, "op_type", e.op_type);
    put(j, "numel_in", e.numel_in);
    put(j, "numel_out", e.numel_out);
    put(j, "timeout_ms", e.timeout_ms);
    put(j, "ran_for_ms", e.ran_for_ms);
    put(j, "last_enqueued", e.last_enqueued);
    put(j, "last_completed", e.last_completed);
    put(j, "from_rank", e.from_rank);
    if (!e.ranks.empty()) j["ranks"] = e.ranks;
    put_s(j, "host", e.host);
    put(j, "pid", e.pid);
    put_s(j, "detail", e.detail);
    put_s(j, "timestamp", e.timestamp);
    j["text"] = e.text;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace strata::hang

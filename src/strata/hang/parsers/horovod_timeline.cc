#include "strata/hang/parsers/horovod_timeline.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "strata/core/json_input.h"
#include "strata/core/strings.h"
#include "strata/core/text_scan.h"

namespace strata::hang {
namespace {

constexpr size_t kMaxEventDepth = 8;  // Horovod's events nest two deep ("args")
constexpr size_t kMaxEventBytes = 1 << 20;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The end of the object that starts at `open` ('{'), strings and escapes skipped; npos when the
// text ends first.
size_t ObjectEnd(std::string_view text, size_t open) {
  return WalkJsonBrackets(text, open, [&](size_t i, size_t depth) {
    return (text[i] == '}' || text[i] == ']') && depth == 0;
  });
}

std::optional<int64_t> RankName(const std::string& name) {
  if (name.empty() || name.size() > 9) return std::nullopt;
  return ParseInt64(name);
}

class Reader {
 public:
  explicit Reader(const std::string& file) { out_.file = file; }

  Status Event(const nlohmann::json& e, int line) {
    if (!e.is_object()) return Bad(line, "an event object");
    const auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string()) return Bad(line, "an event with a \"ph\" string");
    const std::string phase = ph->get<std::string>();
    const std::string name = e.value("name", std::string());
    const int64_t pid =
        e.contains("pid") && e["pid"].is_number_integer() ? e["pid"].get<int64_t>() : -1;
    if (e.contains("ts") && e["ts"].is_number_integer()) {
      out_.last_ts_us = std::max(out_.last_ts_us, e["ts"].get<int64_t>());
    }
    ++out_.events;
    if (phase == "M") {
      if (name == "process_name" && e.contains("args") && e["args"].is_object() &&
          e["args"].contains("name") && e["args"]["name"].is_string()) {
        tensors_[pid] = e["args"]["name"].get<std::string>();
      }
      return OkStatus();
    }
    if (pid < 0) return OkStatus();  // a marker ("ph": "i") belongs to no tensor
    if (phase == "B" && name.starts_with("NEGOTIATE_")) {
      TimelineNegotiation n;
      n.tensor = Tensor(pid);
      n.op = name.substr(10);
      n.begin_us = e.value("ts", int64_t{0});
      n.line = line;
      negotiating_[pid] = std::move(n);
      saw_negotiation_ = true;
    } else if (phase == "X" && negotiating_.contains(pid)) {
      if (const auto rank = RankName(name)) negotiating_[pid].ready.insert(*rank);
    } else if (phase == "E" && negotiating_.contains(pid)) {
      const auto& ready = negotiating_[pid].ready;
      out_.ranks.insert(ready.begin(), ready.end());
      ++out_.negotiations_closed;
      negotiating_.erase(pid);
    } else if (phase == "B") {
      ops_[pid].push_back(name);
    } else if (phase == "E" && !ops_[pid].empty()) {
      ops_[pid].pop_back();
    }
    return OkStatus();
  }

  Result<HorovodTimeline> Finish() {
    if (!saw_negotiation_ && tensors_.empty()) {
      return InvalidInput(
                 "a Chrome-trace array without Horovod's tensors or negotiations "
                 "(\"process_name\" metadata, \"NEGOTIATE_*\" events): not a Horovod timeline")
          .InFile(out_.file);
    }
    for (auto& [pid, n] : negotiating_) out_.open.push_back(std::move(n));
    for (const auto& [pid, stack] : ops_) {
      if (!stack.empty()) out_.open_ops.push_back(stack.front() + " " + Tensor(pid));
    }
    return std::move(out_);
  }

  HorovodTimeline& out() { return out_; }

 private:
  std::string Tensor(int64_t pid) const {
    const auto it = tensors_.find(pid);
    return it != tensors_.end() ? it->second : fmt::format("pid {}", pid);
  }

  Error Bad(int line, std::string_view expected) const {
    return InvalidInput(fmt::format("expected {} in the Horovod timeline", expected))
        .InFile(out_.file)
        .AtLine(line);
  }

  HorovodTimeline out_;
  std::map<int64_t, std::string> tensors_;
  std::map<int64_t, TimelineNegotiation> negotiating_;
  std::map<int64_t, std::vector<std::string>> ops_;
  bool saw_negotiation_ = false;
};

}  // namespace

bool LooksLikeChromeTraceArray(std::string_view head) {
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || head[first] != '[') return false;
  const size_t second = head.find_first_not_of(" \t\r\n", first + 1);
  return second != std::string_view::npos && head[second] == '{' &&
         (Contains(head, "\"ph\":") || Contains(head, "\"ph\" :"));
}

Result<HorovodTimeline> ParseHorovodTimeline(std::string_view text, const std::string& file) {
  Reader reader(file);
  size_t pos = 0;
  int line = 1;
  auto advance = [&](size_t to) {
    for (size_t i = pos; i < to && i < text.size(); ++i) line += text[i] == '\n';
    pos = to;
  };
  while (pos < text.size() && IsSpace(text[pos])) advance(pos + 1);
  if (pos >= text.size() || text[pos] != '[') {
    return InvalidInput("expected a Horovod timeline: a JSON array of trace events ('[')")
        .InFile(file)
        .AtLine(line);
  }
  advance(pos + 1);
  bool closed = false;
  while (true) {
    while (pos < text.size() && (IsSpace(text[pos]) || text[pos] == ',')) advance(pos + 1);
    if (pos >= text.size()) break;
    if (text[pos] == ']') {
      closed = true;
      break;
    }
    if (text[pos] != '{') {
      return InvalidInput(fmt::format("expected an event object '{{' in the Horovod timeline, "
                                      "found '{}'",
                                      std::string(text.substr(pos, 20))))
          .InFile(file)
          .AtLine(line);
    }
    const size_t end = ObjectEnd(text, pos);
    if (end == std::string_view::npos) {  // the last event was cut off: the file ends here
      reader.out().truncated = true;
      break;
    }
    const std::string_view object = text.substr(pos, end + 1 - pos);
    if (object.size() > kMaxEventBytes) {
      return InvalidInput(fmt::format("a timeline event of {} bytes; Horovod writes a few hundred",
                                      object.size()))
          .InFile(file)
          .AtLine(line);
    }
    auto event = ParseUntrustedJson(object, file, kMaxEventDepth, "a Horovod timeline event");
    if (!event.ok()) {
      Error e = event.error();
      e.line = 0;
      return std::move(e.AtLine(line));
    }
    if (Status s = reader.Event(*event, line); !s.ok()) return s.error();
    advance(end + 1);
  }
  if (!closed) reader.out().truncated = true;
  return reader.Finish();
}

}  // namespace strata::hang

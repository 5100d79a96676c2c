#include "strata/hang/parsers/watchdog_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/core/utf8.h"
#include "strata/hang/parsers/failure_fields.h"

namespace strata::hang::watchdog_fields {

// Lines are searched with plain substring scans, not std::regex: libstdc++'s regex recurses per
// character and overflows the stack on the multi-kilobyte lines real logs contain.

namespace {

std::string WordAfter(std::string_view s, std::string_view key) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return "";
  size_t end = at + key.size();
  while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_'))
    ++end;
  return std::string(s.substr(at + key.size(), end - at - key.size()));
}

}  // namespace

std::optional<int64_t> Multiply(std::optional<int64_t> v, int64_t factor) {
  if (!v || *v < 0 || *v > std::numeric_limits<int64_t>::max() / factor) return std::nullopt;
  return *v * factor;
}

// Strips ANSI escape sequences, markdown links (their text kept, failure_fields.h) and CR,
// replaces bytes that are not valid UTF-8 with '?' (the events end up in JSON, which must be
// valid UTF-8), and trims.
std::string CleanLine(std::string_view raw) {
  std::string without_escapes;
  std::string without_links;
  raw = failure_fields::UnwrapMarkdownLinks(StripAnsiEscapes(raw, without_escapes), without_links);
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    const auto c = static_cast<unsigned char>(raw[i]);
    if (c == '\r') continue;
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    // Overlong forms, surrogates and code points past U+10FFFF are invalid too.
    const size_t length = Utf8SequenceLength(raw, i);
    if (length == 0) {
      out.push_back('?');
      continue;
    }
    out.append(raw.substr(i, length));
    i += length - 1;
  }
  const size_t first = out.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const size_t last = out.find_last_not_of(" \t");
  return out.substr(first, last - first + 1);
}

// torchrun's "[rankN]:" prefix, anywhere before the message (launchers put "(Worker pid=..) " or
// "[80746] " in front of it). Sets *end to the position after the prefix.
std::optional<int64_t> GlobalRankPrefix(std::string_view line, size_t* end) {
  size_t at = 0;
  while ((at = line.find("[rank", at)) != std::string_view::npos) {
    size_t used = 0;
    const auto rank = LeadingInt(line.substr(at + 5), &used);
    const size_t close = at + 5 + used;
    if (rank && *rank >= 0 && line.substr(at + 5, 1) != " " && line.substr(close, 2) == "]:") {
      *end = close + 2;
      return rank;
    }
    at += 5;
  }
  return std::nullopt;
}

// The glog header "[E810 03:04:11.061727749 ProcessGroupNCCL.cpp:683] " (or the older
// "[E ProcessGroupNCCL.cpp:458] "): returns the message after it and sets the timestamp.
std::string_view StripGlogHeader(std::string_view line, std::string* timestamp) {
  const size_t cpp = line.find(".cpp:");
  if (cpp == std::string_view::npos) return line;
  const size_t open = line.rfind('[', cpp);
  const size_t close = line.find(']', cpp);
  if (open == std::string_view::npos || close == std::string_view::npos) return line;
  const std::string_view inside = line.substr(open + 1, close - open - 1);
  if (inside.empty() || std::string_view("EWIF").find(inside[0]) == std::string_view::npos) {
    return line;
  }
  const size_t space = inside.rfind(' ');
  if (space != std::string_view::npos && space > 1)
    *timestamp = std::string(inside.substr(0, space));
  std::string_view rest = line.substr(close + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return rest;
}

// "[PG ID 0 PG GUID 0(default_pg) Rank 1]" or "[PG 1 Rank 0]" (anywhere: C++ exception text puts
// "what():  " in front), else "[Rank 1]" at the message start.
void ReadPgPrefix(std::string_view message, WatchdogEvent* e) {
  size_t open = message.find("[PG ");
  if (open == std::string_view::npos) {
    if (message.substr(0, 6) != "[Rank ") return;
    open = 0;
  }
  const size_t close = message.find(']', open);
  if (close == std::string_view::npos) return;
  const std::string_view inside = message.substr(open + 1, close - open - 1);
  const auto read_id = [&](std::string_view key, std::string* id, std::string* desc) {
    const size_t at = inside.find(key);
    if (at == std::string_view::npos) return false;
    size_t end = at + key.size();
    while (end < inside.size() && inside[end] != ' ' && inside[end] != '(') ++end;
    *id = std::string(inside.substr(at + key.size(), end - at - key.size()));
    if (end < inside.size() && inside[end] == '(') {
      const size_t paren = inside.find(')', end);
      if (paren != std::string_view::npos)
        *desc = std::string(inside.substr(end + 1, paren - end - 1));
    }
    return true;
  };
  if (!read_id("PG ID ", &e->pg_id, &e->pg_desc)) read_id("PG ", &e->pg_id, &e->pg_desc);
  read_id("PG GUID ", &e->pg_name, &e->pg_desc);
  e->pg_rank = IntAfter(inside, "Rank ");
}

namespace {

// torch prints an unset size or counter as -1, or as -1 cast to uint64_t (2^64-1): a placeholder
// for "unknown", never a value. Records the field with the value as printed.
void NotePlaceholder(std::string_view s, std::string_view key, const std::string& field,
                     WatchdogEvent* e) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return;
  std::string_view v = s.substr(at + key.size());
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  size_t end = !v.empty() && v.front() == '-' ? 1 : 0;
  while (end < v.size() && std::isdigit(static_cast<unsigned char>(v[end]))) ++end;
  const std::string_view number = v.substr(0, end);
  if (number == "-1" || number == "18446744073709551615")
    e->placeholders.emplace_back(field, number);
}

}  // namespace

namespace {

// The collective's name after "OpType=", when it is whole. WorkNCCL renders it followed by ", "
// or ")"; a word that runs into anything else, or into the end of the text, lost its end: a
// pager's or terminal multiplexer's position marker drawn over the line ("OpType=_ALLGATHER_BA"
// + "[451/1919]", tmux's copy mode over a log wrapped at its width, modelscope/ms-swift#5409),
// or a paste cut there. A cut name is unknown, not another collective.
std::string WholeOpType(std::string_view work) {
  const size_t at = work.find("OpType=");
  if (at == std::string_view::npos) return "";
  std::string op = WordAfter(work, "OpType=");
  const size_t end = at + 7 + op.size();
  if (end >= work.size() || (work[end] != ',' && work[end] != ')' && work[end] != ' ')) return "";
  return op;
}

}  // namespace

// torch_npu's ProcessGroupHCCL copies ProcessGroupNCCL's watchdog and prints its work as
// "WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=3600000)" (vllm-project/vllm-ascend#382):
// the same fields under the other backend's name. Both names are 9 characters long.
size_t FindWork(std::string_view message) {
  const size_t nccl = message.find("WorkNCCL(");
  return nccl != std::string_view::npos ? nccl : message.find("WorkHCCL(");
}

// The fields of a rendered WorkNCCL(...) in any generation: SeqNum from ~1.10, NumelIn/NumelOut
// from 2.0, TensorShape in the oldest.
void ReadWorkNccl(std::string_view message, WatchdogEvent* e) {
  const size_t at = FindWork(message);
  if (at == std::string_view::npos) return;
  const std::string_view work = message.substr(at);
  e->seq = IntAfter(work, "SeqNum=");
  e->op_type = WholeOpType(work);
  e->numel_in = IntAfter(work, "NumelIn=");
  e->numel_out = IntAfter(work, "NumelOut=");
  e->timeout_ms = IntAfter(work, "Timeout(ms)=");
  e->ran_for_ms = IntAfter(work, "ran for ");
  NotePlaceholder(work, "SeqNum=", "SeqNum", e);
  NotePlaceholder(work, "NumelIn=", "NumelIn", e);
  NotePlaceholder(work, "NumelOut=", "NumelOut", e);
  if (e->seq && *e->seq < 0) e->seq.reset();
  if (e->numel_in && *e->numel_in < 0) e->numel_in.reset();
  if (e->numel_out && *e->numel_out < 0) e->numel_out.reset();
}

namespace {

// "[0, 1, 2]" -> ranks; returns the position after ']' or npos.
size_t ReadRankList(std::string_view s, size_t open, std::vector<int64_t>* ranks) {
  if (open >= s.size() || s[open] != '[') return std::string_view::npos;
  const size_t close = s.find(']', open);
  if (close == std::string_view::npos) return std::string_view::npos;
  std::string_view inside = s.substr(open + 1, close - open - 1);
  while (!inside.empty()) {
    size_t used = 0;
    const auto r = LeadingInt(inside, &used);
    if (!r) return std::string_view::npos;
    ranks->push_back(*r);
    inside.remove_prefix(used);
    while (!inside.empty() && (inside.front() == ',' || inside.front() == ' '))
      inside.remove_prefix(1);
  }
  return close + 1;
}

}  // namespace

// The TORCH_NCCL_DESYNC_DEBUG report (continuation lines of the timeout message).
bool ReadDesyncLine(std::string_view message, int64_t* snapshot_seq, WatchdogEvent* e) {
  std::string_view m = message;
  if (m.substr(0, 2) == "- ") m.remove_prefix(2);
  if (Contains(m, "Timeout at collective: ")) {  // "[0] Timeout at collective: OP, #1844"
    ReadRankList(m, 0, &e->ranks);
    e->op_type = WordAfter(m, "Timeout at collective: ");
    e->seq = IntAfter(m, ", #");
    e->detail = "timeout_at";
    return true;
  }
  if (Contains(m, "are the lagging ranks that caused this timeout")) {
    const size_t open = m.find('[');
    if (open != std::string_view::npos) ReadRankList(m, open, &e->ranks);
    e->detail = "lagging_never_joined";
    return true;
  }
  if (Contains(m, "the lagging/dead/mismatched ranks that caused the desync")) {
    e->detail = "desync_header";
    return true;
  }
  if (m.substr(0, 1) == "#" && (m.ends_with("started ranks:") || m.ends_with("finished ranks:"))) {
    if (auto s = LeadingInt(m.substr(1))) *snapshot_seq = *s;
    return false;  // a header for the lines that follow
  }
  if (m.substr(0, 1) != "[") return false;
  const size_t after = ReadRankList(m, 0, &e->ranks);
  if (after == std::string_view::npos) return false;
  const std::string_view rest = m.substr(after);
  if (Contains(rest, "but didn't join collective #")) {
    e->seq = IntAfter(rest, "didn't join collective #");
    e->last_completed = IntAfter(rest, "finished collective #");
    e->detail = "finished_not_joined";
  } else if (Contains(rest, "joined but didn't finish collective #")) {
    e->seq = IntAfter(rest, "didn't finish collective #");
    e->detail = "joined_not_finished";
  } else if (rest.substr(0, 9) == " started " || rest.substr(0, 10) == " finished ") {
    const bool started = rest.substr(0, 9) == " started ";
    e->op_type = WordAfter(rest, started ? " started " : " finished ");
    if (*snapshot_seq >= 0) e->seq = *snapshot_seq;
    e->detail = started ? "snapshot_started" : "snapshot_finished";
  } else {
    return false;
  }
  return true;
}

// Framework printouts of the configured PG timeout.
bool ReadTimeoutSetting(std::string_view line, WatchdogEvent* e) {
  if (auto s = IntAfter(line, "ddp_timeout=")) {  // HF / ms-swift TrainingArguments, seconds
    e->timeout_ms = Multiply(s, 1000);
    e->detail = fmt::format("ddp_timeout={} (s)", *s);
  } else if (Contains(line, "distributed_timeout_minutes") ||
             Contains(line, "distributed-timeout-minutes")) {
    // Megatron prints "  distributed_timeout_minutes ............ 10"; the flag is
    // "--distributed-timeout-minutes 10".
    const size_t key = line.find("timeout_minutes") != std::string_view::npos
                           ? line.find("timeout_minutes")
                           : line.find("timeout-minutes");
    std::string_view rest = line.substr(key + 15);
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '.' || rest.front() == '=')) {
      rest.remove_prefix(1);
    }
    const auto minutes = LeadingInt(rest);
    if (!minutes) return false;
    e->timeout_ms = Multiply(minutes, 60'000);
    e->detail = fmt::format("distributed_timeout_minutes={} (min)", *minutes);
  } else if (Contains(line, "timeout=") && Contains(line, "timedelta(")) {
    const std::string_view td = line.substr(line.find("timedelta("));
    if (auto secs = IntAfter(td, "seconds=")) {
      e->timeout_ms = Multiply(secs, 1000);
      e->detail = fmt::format("timedelta(seconds={})", *secs);
    } else if (auto m = IntAfter(td, "minutes=")) {
      e->timeout_ms = Multiply(m, 60'000);
      e->detail = fmt::format("timedelta(minutes={})", *m);
    } else {
      return false;
    }
  } else {
    return false;
  }
  return e->timeout_ms.has_value();
}

// "<host>:<pid>:<tid> [<dev>] NCCL INFO <msg>" / "<host>:<pid>:<tid> [<dev>] file:line NCCL WARN".
bool ReadNcclLine(std::string_view line, WatchdogEvent* e) {
  const size_t info = line.find(" NCCL INFO ");
  const size_t warn = line.find(" NCCL WARN ");
  const size_t at = std::min(info, warn);
  if (at == std::string_view::npos) return false;
  const std::string_view message = line.substr(at + 11);
  const bool is_warn = warn != std::string_view::npos && warn == at;
  static constexpr std::string_view kNetworkWords[] = {"Bootstrap",
                                                       "NET/",
                                                       "socket",
                                                       "Socket",
                                                       "set by environment to",
                                                       "connect to",
                                                       "Connection closed",
                                                       "no socket interface",
                                                       "Got completion from peer",
                                                       "ncclRemoteError"};
  // "comm 0x... rank 3 nranks 8 ... Init COMPLETE" gives the communicator's size: the world
  // size when no manifest states it (silent-rank inference).
  const bool relevant = is_warn || Contains(message, " nranks ") ||
                        std::any_of(std::begin(kNetworkWords), std::end(kNetworkWords),
                                    [&](std::string_view w) { return Contains(message, w); });
  if (!relevant) return false;
  // The head is "<host>:<pid>:<tid>" (host names have no ':'), after any "[rankN]:" prefix.
  std::string_view head = line.substr(0, line.find(' '));
  if (head.substr(0, 5) == "[rank" && head.find("]:") != std::string_view::npos) {
    head.remove_prefix(head.find("]:") + 2);
  }
  const size_t c1 = head.find(':');
  const size_t c2 = c1 == std::string_view::npos ? c1 : head.find(':', c1 + 1);
  if (c1 != std::string_view::npos && c2 != std::string_view::npos) {
    e->host = std::string(head.substr(0, c1));
    e->pid = LeadingInt(head.substr(c1 + 1, c2 - c1 - 1));
  }
  e->detail = std::string(message);
  return true;
}

// "last enqueued [NCCL] work: N, last completed [NCCL] work: M", in either order and case.
bool ReadLastWork(std::string_view m, WatchdogEvent* e) {
  const auto value_after = [&](std::string_view a, std::string_view b) -> std::optional<int64_t> {
    size_t at = m.find(a);
    if (at == std::string_view::npos) at = m.find(b);
    if (at == std::string_view::npos) return std::nullopt;
    const size_t colon = m.find(':', at);
    if (colon == std::string_view::npos || colon - at > 40) return std::nullopt;
    return LeadingInt(m.substr(colon + 1));
  };
  e->last_enqueued = value_after("last enqueued", "Last enqueued");
  e->last_completed = value_after("last completed", "Last completed");
  const auto note = [&](std::string_view a, std::string_view b, const char* field) {
    size_t at = m.find(a);
    if (at == std::string_view::npos) at = m.find(b);
    if (at == std::string_view::npos) return;
    const size_t colon = m.find(':', at);
    if (colon != std::string_view::npos && colon - at <= 40)
      NotePlaceholder(m.substr(colon), ":", field, e);
  };
  note("last enqueued", "Last enqueued", "last enqueued work");
  note("last completed", "Last completed", "last completed work");
  return e->last_enqueued || e->last_completed;
}

}  // namespace strata::hang::watchdog_fields

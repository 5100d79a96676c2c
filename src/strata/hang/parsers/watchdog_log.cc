#include "strata/hang/parsers/watchdog_log.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/hang/parsers/watchdog_fields.h"

namespace strata::hang {
namespace {

using watchdog_fields::CleanLine;
using watchdog_fields::FindWork;
using watchdog_fields::GlobalRankPrefix;
using watchdog_fields::Multiply;
using watchdog_fields::ReadDesyncLine;
using watchdog_fields::ReadLastWork;
using watchdog_fields::ReadNcclLine;
using watchdog_fields::ReadPgPrefix;
using watchdog_fields::ReadTimeoutSetting;
using watchdog_fields::ReadWorkNccl;
using watchdog_fields::StripGlogHeader;

constexpr size_t kMaxTextChars = 1000;  // the event keeps at most this much of its line

// One line at a time: its prefixes read, then what kind of event it is; the desync report's
// continuation lines take the prefixes of the timeout they follow.
class LogScanner {
 public:
  explicit LogScanner(const std::string& file) : file_(file) {}

  void Line(std::string_view raw, int number) {
    const std::string line = CleanLine(raw);
    if (line.empty()) return;
    WatchdogEvent e;
    size_t prefix_end = 0;
    e.global_rank = GlobalRankPrefix(line, &prefix_end);
    std::string_view message = line;
    message.remove_prefix(prefix_end);
    while (!message.empty() && message.front() == ' ') message.remove_prefix(1);
    message = StripGlogHeader(message, &e.timestamp);
    ReadPgPrefix(message, &e);
    if (CheckTimeoutFrame(message, number, e.global_rank)) return;
    if (GdbFrame(line, &e)) {
      if (e.kind != WatchdogEventKind::kHeartbeatTimeout) return;
    } else if (!Classify(line, message, &e)) {
      return;
    }
    e.file = file_;
    e.line = number;
    e.text = line.size() > kMaxTextChars ? line.substr(0, kMaxTextChars) + "..." : line;
    if (e.kind == WatchdogEventKind::kTimeout) last_timeout_ = events_.size();
    events_.push_back(std::move(e));
  }

  std::vector<WatchdogEvent> Take() {
    // A file holding the stack that raised the watchdog's timeout but not its message: the
    // timeout it says, with no operation, sequence number or timeout printed.
    const bool told = std::any_of(events_.begin(), events_.end(), [](const WatchdogEvent& e) {
      return e.kind == WatchdogEventKind::kTimeout || e.kind == WatchdogEventKind::kAsyncError;
    });
    if (!told && check_timeout_frame_) events_.push_back(std::move(*check_timeout_frame_));
    return std::move(events_);
  }

 private:
  // c10's exception backtrace, printed under "Exception raised from ... (most recent call
  // first):": "frame #0: c10::Error::Error(...)", "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::
  // checkTimeout(std::optional<...>) + 0x1d2 (0x... in .../libtorch_cuda.so)", then
  // watchdogHandler and ncclCommWatchdog (jpata/particleflow#390). WorkNCCL::checkTimeout builds
  // its error only for a work that ran past its timeout, so a backtrace through it is the
  // watchdog's timeout even when the message that carried it was not pasted. Kept aside until
  // the file is read: the message, when present, says more (Take()).
  bool CheckTimeoutFrame(std::string_view message, int number, std::optional<int64_t> rank) {
    if (!message.starts_with("frame #") ||
        !Contains(message, "ProcessGroupNCCL::WorkNCCL::checkTimeout("))
      return false;
    if (!check_timeout_frame_) {
      WatchdogEvent e;
      e.kind = WatchdogEventKind::kTimeout;
      e.global_rank = rank;
      e.file = file_;
      e.line = number;
      e.text = std::string(message.substr(0, std::min(message.size(), kMaxTextChars)));
      e.detail =
          "a backtrace raised in ProcessGroupNCCL::WorkNCCL::checkTimeout (the "
          "watchdog's timeout; its message is not in the file)";
      check_timeout_frame_ = std::move(e);
    }
    return true;
  }

  // gdb's "thread apply all bt": "Thread 9 (Thread 0x1554539fc700 (LWP 153338)):", then the
  // thread's frames, innermost first: "#2  0x0000155520c4a915 in cudaGetLastError () from
  // lib/libcudart.so.11.0". The NCCL watchdog's loop (ProcessGroupNCCL::workCleanupLoop,
  // ncclCommWatchdog, watchdogHandler, Watchdog::run) shown inside a CUDA call is the watchdog
  // blocked in the CUDA API (pytorch/pytorch#101463: "workCleanupLoop is stuck on
  // cudaGetLastError", NCCL kernels holding the GPU): the hang the heartbeat monitor reports as
  // "watchdog got stuck ... a NCCL/CUDA API hang blocking the watchdog". At rest the watchdog
  // waits on a condition variable, not in CUDA. Returns whether the line is a gdb line; sets
  // e->kind to kHeartbeatTimeout at the watchdog's frame of such a thread.
  bool GdbFrame(std::string_view line, WatchdogEvent* e) {
    if (line.starts_with("Thread ") && Contains(line, "(LWP ")) {
      gdb_cuda_call_.clear();
      return true;
    }
    if (line.size() < 2 || line[0] != '#' || !std::isdigit(static_cast<unsigned char>(line[1])))
      return false;
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) return false;
    std::string_view frame = TrimSpace(line.substr(space));
    // "#2  0x... in f () from lib.so" or, without an address, "#6  f (...) at file.cc:82".
    const bool gdb =
        frame.starts_with("0x")
            ? Contains(frame, " in ")
            : Contains(frame, " (") && (Contains(frame, ") at ") || Contains(frame, ") from "));
    if (!gdb) return false;
    if (LeadingInt(line.substr(1)) == 0) gdb_cuda_call_.clear();  // a new thread's innermost
    if (frame.starts_with("0x")) frame.remove_prefix(frame.find(" in ") + 4);
    const std::string_view function = frame.substr(0, frame.find(" ("));
    const bool cuda_function =
        function.starts_with("cuda") || (function.size() > 2 && function.starts_with("cu") &&
                                         std::isupper(static_cast<unsigned char>(function[2])));
    if (cuda_function || Contains(frame, "from lib/libcuda") || Contains(frame, "/libcuda")) {
      // The innermost CUDA frame, or the first named one above unnamed ("??") driver frames.
      if (gdb_cuda_call_.empty() || (gdb_cuda_call_ == "??" && cuda_function))
        gdb_cuda_call_ = function;
      return true;
    }
    constexpr std::array<std::string_view, 4> kWatchdogLoops = {
        "ProcessGroupNCCL::workCleanupLoop", "ProcessGroupNCCL::ncclCommWatchdog",
        "ProcessGroupNCCL::watchdogHandler", "ProcessGroupNCCL::Watchdog::run"};
    const bool watchdog = std::any_of(kWatchdogLoops.begin(), kWatchdogLoops.end(),
                                      [&](std::string_view w) { return Contains(function, w); });
    if (watchdog && !gdb_cuda_call_.empty()) {
      e->kind = WatchdogEventKind::kHeartbeatTimeout;
      e->detail = "a stack dump shows the NCCL watchdog thread inside the CUDA call " +
                  gdb_cuda_call_ + ": the watchdog is blocked in the CUDA API";
      gdb_cuda_call_.clear();
    }
    return true;
  }

  bool Classify(std::string_view line, std::string_view m, WatchdogEvent* e) {
    using K = WatchdogEventKind;
    if (Contains(m, "Watchdog caught collective operation timeout") ||
        Contains(m, "timed out in blocking wait")) {
      e->kind = K::kTimeout;
      ReadWorkNccl(m, e);
      if (!e->pg_rank) e->pg_rank = IntAfter(m, "[Rank ");
      snapshot_seq_ = -1;
      return true;
    }
    if (Contains(m, "raised the following async exception")) {
      e->kind = K::kAsyncError;
      ReadWorkNccl(m, e);
      if (!e->pg_rank) e->pg_rank = IntAfter(m, "[Rank ");
      const size_t at = m.find("async exception:");
      e->detail = std::string(m.substr(std::min(m.size(), at + 17)));
      return true;
    }
    if (Contains(m,
                 "dump signal")) {  // "Received a dump signal ... from  rank 1 ...", "Observed ..."
      e->kind = K::kDumpSignal;
      const size_t from = m.find(" from ");
      if (from != std::string_view::npos && Contains(m, "Received a dump signal")) {
        std::string_view rest = m.substr(from + 6);
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        if (rest.substr(0, 5) == "rank ") e->from_rank = LeadingInt(rest.substr(5));
      }
      ReadLastWork(m, e);
      return true;
    }
    if (ReadLastWork(m, e)) {
      e->kind = K::kWorkStatus;
      e->seq = IntAfter(m, "at work sequence id: ");
      if (!e->seq) e->seq = IntAfter(m, "detected by watchdog at work: ");
      // torch 2.3-2.4's timeout branch: "[PG 0 Rank 2] Timeout at NCCL work: 7487, last enqueued
      // NCCL work: 7487, last completed NCCL work: 7486." (LLM-Training#7, lama#324).
      if (!e->seq) e->seq = IntAfter(m, "Timeout at NCCL work: ");
      return true;
    }
    if (Contains(m, "watchdog got stuck for") || Contains(m, "Heartbeat monitor timed out")) {
      e->kind = K::kHeartbeatTimeout;
      e->ran_for_ms = Multiply(IntAfter(m, "got stuck for "), 1000);
      return true;
    }
    if (Contains(m, "taking the entire process down")) {
      e->kind = K::kTakingDown;
      return true;
    }
    // A watchdog line cut inside its sentence, "... thread terminated with exception: [Rank 6]
    // Watchdog caught co" (uniworld-46): the watchdog's own word for a timeout, the WorkNCCL lost.
    // Kept as a line of the watchdog's (kOther) so that its take-down lines read as a timeout.
    if (Contains(m, "Watchdog caught")) {
      e->kind = K::kOther;
      return true;
    }
    if (Contains(m, "CUDA out of memory") || Contains(m, "OutOfMemoryError") ||
        Contains(m, "CUDA error: out of memory")) {
      e->kind = K::kOom;
      return true;
    }
    if (Contains(m, "destroy_process_group")) {
      e->kind = K::kDestroy;
      return true;
    }
    if (ReadNcclLine(line, e)) {
      e->kind = K::kCommInit;
      return true;
    }
    // The desync report only ever follows a timeout line; elsewhere "[1, 2] started X" is noise.
    if (last_timeout_ < events_.size() && ReadDesyncLine(m, &snapshot_seq_, e)) {
      e->kind = K::kDesyncReport;
      // Continuation lines carry no prefixes: they belong to the last timeout message.
      if (last_timeout_ < events_.size()) {
        const WatchdogEvent& t = events_[last_timeout_];
        if (!e->global_rank) e->global_rank = t.global_rank;
        if (e->pg_id.empty()) e->pg_id = t.pg_id;
        if (e->pg_name.empty()) e->pg_name = t.pg_name;
        if (e->pg_desc.empty()) e->pg_desc = t.pg_desc;
        if (!e->pg_rank) e->pg_rank = t.pg_rank;
      }
      return true;
    }
    if (ReadTimeoutSetting(m, e)) {
      e->kind = K::kTimeoutSetting;
      return true;
    }
    return false;
  }

  const std::string& file_;
  std::vector<WatchdogEvent> events_;
  std::optional<WatchdogEvent> check_timeout_frame_;
  size_t last_timeout_ = std::numeric_limits<size_t>::max();
  int64_t snapshot_seq_ = -1;
  std::string gdb_cuda_call_;  // the CUDA call of the gdb thread being read; empty when none
};

// A terminal wraps long lines at its width, inside words: "NumelIn=112, Numel" + "Out=112, ...".
// A line whose WorkNCCL(...) is not closed is joined with the lines after it (at most
// kMaxJoinedLines, and never with one that starts a new prefixed message).
constexpr int kMaxJoinedLines = 4;

// A line that starts a message of its own: one opening with '[' (torchrun's "[rankN]:", glog's
// "[E918 ..."), or one that carries torchrun's rank prefix behind a collector's own prefix, the
// date a log platform puts first ("2026-09-18 19:29:25 [rank2]:[E918 ...",
// modelscope/ms-swift#10183). A wrapped continuation is the rest of a cut line and carries none:
// joined, the next rank's message would be read as the end of this rank's.
bool StartsMessage(std::string_view next) {
  if (next.front() == '[') return true;
  size_t prefix_end = 0;
  return GlobalRankPrefix(next, &prefix_end).has_value();
}

bool OpenWorkNccl(std::string_view line, std::string_view next) {
  const size_t at = FindWork(line);
  if (at == std::string_view::npos) {
    // The cut falls before "WorkNCCL(": "... operation timeout: " + "WorkNCCL(SeqNum=...", or
    // inside the sentence's words, "Watchdog caught collectiv" + "e operation timeout: WorkNCCL("
    // (axolotl-ai-cloud/axolotl#3476). The sentence that leads to WorkNCCL is whole only joined.
    if (line.find("Watchdog caught") == std::string_view::npos &&
        line.find("operation timeout:") == std::string_view::npos)
      return false;
    // A paste broken by hand at the space before "WorkNCCL(" loses the space
    // (NovaSky-AI/SkyRL#757: "... operation timeout:" + "WorkNCCL(... OpType=...").
    const std::string joined = std::string(line) + std::string(next.substr(0, 80));
    const size_t colon = joined.find("operation timeout:");
    if (colon == std::string::npos) return false;
    const size_t work = joined.find_first_not_of(' ', colon + 18);
    return work != std::string::npos && FindWork(joined) == work;
  }
  int depth = 0;
  for (size_t i = at + 8; i < line.size(); ++i) {
    if (line[i] == '(') ++depth;
    if (line[i] == ')' && --depth == 0) return false;
  }
  return true;
}

// The queue status sentence wrapped the same way: "... last enqueued NCCL work: 4013, last com" +
// "pleted NCCL work: 4012.". It is open until its "completed ... work: N" is whole; a line that
// ends in digits may have had its number cut ("work: 40" + "12.").
bool OpenStatus(std::string_view line, std::string_view next) {
  if (!Contains(line, "last enqueued") && !Contains(line, "Last enqueued")) return false;
  const size_t done = line.rfind("ompleted");
  if (done == std::string_view::npos) return true;
  const size_t work = line.find("work:", done);
  if (work == std::string_view::npos) return true;
  const std::string_view rest = TrimSpace(line.substr(work + 5));
  if (rest.empty()) return true;
  if (rest.find_first_not_of("-0123456789") != std::string_view::npos) return false;
  return !next.empty() &&
         (std::isdigit(static_cast<unsigned char>(next.front())) || next.front() == '.');
}

}  // namespace

std::vector<WatchdogEvent> ParseWatchdogLog(std::string_view text, const std::string& file) {
  LogScanner scanner(file);
  int number = 0;
  size_t start = 0;
  auto next_line = [&](size_t from) {
    size_t end = text.find('\n', from);
    return end == std::string_view::npos ? text.size() : end;
  };
  while (start < text.size()) {
    size_t end = next_line(start);
    if (number < std::numeric_limits<int>::max()) ++number;
    std::string_view line = text.substr(start, end - start);
    std::string joined;
    int extra = 0;
    while (extra < kMaxJoinedLines && end < text.size()) {
      const size_t next_end = next_line(end + 1);
      std::string_view next = text.substr(end + 1, next_end - end - 1);
      if (!next.empty() && next.back() == '\r') next.remove_suffix(1);
      if (next.empty() || StartsMessage(next)) break;
      const std::string_view so_far = joined.empty() ? line : std::string_view(joined);
      if (!OpenWorkNccl(so_far, next) && !OpenStatus(so_far, next)) break;
      if (joined.empty())
        joined = std::string(line.ends_with('\r') ? line.substr(0, line.size() - 1) : line);
      joined += next;
      end = next_end;
      ++extra;
    }
    scanner.Line(joined.empty() ? line : std::string_view(joined), number);
    if (number < std::numeric_limits<int>::max() - extra) number += extra;
    start = end + 1;
  }
  return scanner.Take();
}

}  // namespace strata::hang

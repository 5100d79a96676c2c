#include "strata/hang/analysis/finding_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "strata/core/text_scan.h"
#include "strata/core/timestamp.h"

namespace strata::hang {
namespace {

bool IsYearDigit(char c) { return c >= '0' && c <= '9'; }

// The year of a full date near the start of a line ("2024-08-20_11:37:36"), if it has one.
std::optional<int64_t> LeadingYear(std::string_view text) {
  const size_t limit = std::min<size_t>(text.size(), 64);
  for (size_t i = 0; i + 19 <= text.size() && i < limit; ++i) {
    if (IsYearDigit(text[i]) && text[i + 4] == '-' && (i == 0 || !IsYearDigit(text[i - 1])) &&
        ParseLogTimestamp(text.substr(i, 29))) {
      return ParseInt64(text.substr(i, 4));
    }
  }
  return std::nullopt;
}

// glog's time as c10 and torchrun print it, "E820 11:47:24.069865760": the severity, the month
// (not padded) and the day in two digits, then the time; read in `year` as the date it stands
// for, by the one timestamp parser.
std::optional<double> GlogTime(std::string_view stamp, int64_t year) {
  if (stamp.size() < 4 || std::string_view("EWIF").find(stamp[0]) == std::string_view::npos)
    return std::nullopt;
  const size_t space = stamp.find(' ');
  if (space == std::string_view::npos || space < 4 || space > 5) return std::nullopt;
  const std::string_view date = stamp.substr(1, space - 1);
  const auto month = ParseInt64(date.substr(0, date.size() - 2));
  const auto day = ParseInt64(date.substr(date.size() - 2));
  if (!month || !day) return std::nullopt;
  const std::string_view clock = stamp.substr(space + 1, 8);  // to the second
  return ParseLogTimestamp(fmt::format("{:04}-{:02}-{:02} {}", year, *month, *day, clock));
}

// A glog header in a line: its severity letter at the start of the line, after '[' or after a
// space ("[rank1]:[E1101 17:03:05.823968890 ProcessGroupNCCL.cpp:607]", "[80851] E0321
// 02:07:26.090000 140204748584768 torch/..."), within the first 96 bytes.
std::optional<double> GlogHeaderTime(std::string_view text, int64_t year) {
  const size_t limit = std::min<size_t>(text.size(), 96);
  for (size_t i = 0; i < limit; ++i) {
    if (std::string_view("EWIF").find(text[i]) == std::string_view::npos) continue;
    if (i > 0 && text[i - 1] != '[' && text[i - 1] != ' ') continue;
    if (auto t = GlogTime(text.substr(i, 24), year)) return t;
  }
  return std::nullopt;
}

std::string_view FileNameOf(std::string_view file) {
  const size_t slash = file.rfind('/');
  return slash == std::string_view::npos ? file : file.substr(slash + 1);
}

}  // namespace

int64_t EvidenceYear(const EvidenceSet& ev) {
  for (const FailureSignal& s : ev.failures) {
    if (s.kind != FailureKind::kChildFailed) continue;
    if (auto y = LeadingYear(s.time)) return *y;
  }
  for (const FailureSignal& s : ev.failures) {
    if (auto y = LeadingYear(s.text)) return *y;
  }
  return 2000;
}

std::optional<double> LineTime(std::string_view text, int64_t year) {
  if (auto t = FindLeadingTimestamp(text)) return t;
  return GlogHeaderTime(text, year);
}

std::optional<double> FindingTime(const EvidenceSet& ev, const Finding& f, int64_t year) {
  if (f.evidence.empty()) return std::nullopt;
  // "log.txt:12: the line" (Cite): the file without its directory and the line number.
  const std::string_view cite = f.evidence.front();
  const size_t colon = cite.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view name = FileNameOf(cite.substr(0, colon));
  const auto line = LeadingInt(cite.substr(colon + 1));
  if (!line) return std::nullopt;
  for (const FailureSignal& s : ev.failures) {
    if (s.line != *line || FileNameOf(s.file) != name) continue;
    const auto t =
        s.kind == FailureKind::kChildFailed ? ParseLogTimestamp(s.time) : LineTime(s.text, year);
    if (t) return t;
  }
  // An out-of-memory line (the oom pattern cites it with its file's whole path): its own time.
  for (const LogSignal& s : ev.log_signals) {
    if (s.kind != LogSignalKind::kOom || s.line != *line || FileNameOf(s.file) != name) continue;
    if (auto t = LineTime(s.text, year)) return t;
  }
  for (const WatchdogEvent& e : ev.watchdog) {
    if (e.line != *line || FileNameOf(e.file) != name) continue;
    if (auto t = GlogTime(e.timestamp, year)) return t;
    if (auto t = LineTime(e.text, year)) return t;
  }
  return std::nullopt;
}

}  // namespace strata::hang

#include "strata/logs/log_analyzer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "strata/core/strings.h"
#include "strata/core/text_scan.h"
#include "strata/logs/log_scan.h"
#include "strata/logs/wrapped_record.h"

namespace strata {

namespace {

constexpr size_t kMaxKeptText = 300;  // bytes of a line kept for the tail report

std::string Capped(std::string_view text) {
  text = TrimSpace(text);
  if (text.size() <= kMaxKeptText) return std::string(text);
  return std::string(text.substr(0, kMaxKeptText)) + "...";
}

}  // namespace

std::string_view AnomalyKindName(AnomalyKind kind) {
  switch (kind) {
    case AnomalyKind::kStall:
      return "stall";
    case AnomalyKind::kLossSpike:
      return "loss_spike";
    case AnomalyKind::kNanInf:
      return "nan_inf";
    case AnomalyKind::kGradNormSpike:
      return "grad_norm_spike";
    case AnomalyKind::kThroughputDrop:
      return "throughput_drop";
    case AnomalyKind::kMemoryCreep:
      return "memory_creep";
    case AnomalyKind::kSkippedStep:
      return "skipped_step";
    case AnomalyKind::kRestart:
      return "restart";
    case AnomalyKind::kHang:
      return "hang";
  }
  return "unknown";
}

LogAnalyzer::LogAnalyzer(Callbacks callbacks, AnomalyThresholds thresholds)
    : callbacks_(std::move(callbacks)), thresholds_(thresholds) {}

RankState& LogAnalyzer::Rank(int rank) {
  auto it = ranks_.find(rank);
  if (it == ranks_.end()) it = ranks_.emplace(rank, RankState(rank, thresholds_)).first;
  return it->second;
}

void LogAnalyzer::Emit(Anomaly anomaly) {
  if (callbacks_.on_anomaly) callbacks_.on_anomaly(anomaly);
  ++summary_.anomalies_total;
  if (summary_.anomalies.size() < kMaxKeptAnomalies)
    summary_.anomalies.push_back(std::move(anomaly));
}

void LogAnalyzer::FeedLine(std::string_view raw) {
  const int64_t line = ++summary_.lines;
  LogTail& tail = summary_.tail;
  tail.lines = line;
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  if (TrimSpace(raw).empty()) return;
  idle_flagged_ = false;
  std::string_view text = StripAnsiEscapes(raw, ansi_buffer_);
  const PrefixedLine prefixed = StripLauncherPrefix(text);
  tail.last_line = line;
  tail.last_text.assign(text.substr(0, std::min(text.size(), kMaxKeptText)));
  const bool joined = joiner_.Feed(text, prefixed.text, prefixed.rank, line, records_);
  ReadRecords();
  if (!joined) ReadLine(text, prefixed, line);
}

void LogAnalyzer::FlushRecord() {
  joiner_.Finish(records_);
  ReadRecords();
}

void LogAnalyzer::ReadRecords() {
  for (const WrappedRecord& r : records_) {
    ReadLine(r.text, PrefixedLine{r.text, r.rank}, r.line);
  }
  records_.clear();
}

void LogAnalyzer::ReadLine(std::string_view text, const PrefixedLine& prefixed, int64_t line) {
  LogTail& tail = summary_.tail;
  // tqdm rewrites its bar with '\r': each segment may hold a record.
  parsed_.clear();
  std::string_view rest = prefixed.text;
  while (true) {
    const size_t cr = rest.find('\r');
    ParseLogLine(rest.substr(0, cr), parsed_);
    if (cr == std::string_view::npos) break;
    rest.remove_prefix(cr + 1);
  }
  if (parsed_.empty()) {
    // torchtitan's header comes before its first step; no line after it is looked at.
    if (tail.last_step_line == 0) ParseTitanHeaderLine(prefixed.text, line, summary_.titan);
    return;
  }
  ++summary_.recognised_lines;
  std::vector<Anomaly> found;
  for (const ParsedLine& p : parsed_) {
    switch (p.kind) {
      case LineKind::kError:
        if (tail.error_line == 0 || tail.error_line < tail.last_step_line) {
          tail.error_line = line;
          tail.error_text = Capped(text);
        }
        --summary_.recognised_lines;  // an error line is not "understood" as metrics
        break;
      case LineKind::kFinished:
        tail.finished = true;
        break;
      case LineKind::kStep:
        tail.last_step_line = line;
        tail.error_line = 0;
        tail.error_text.clear();
        if (std::find(summary_.formats.begin(), summary_.formats.end(), p.record.format) ==
            summary_.formats.end()) {
          summary_.formats.push_back(p.record.format);
        }
        [[fallthrough]];
      case LineKind::kMemory:
      case LineKind::kWallClock:
      case LineKind::kSkip:
        if (Rank(prefixed.rank).Add(p, line, found, callbacks_.on_step)) {
          ++summary_.duplicate_lines;
        }
        break;
      case LineKind::kProgress:  // read for the step it gives a record, not as metrics
        --summary_.recognised_lines;
        Rank(prefixed.rank).Add(p, line, found, callbacks_.on_step);
        break;
      case LineKind::kOther:
        break;
    }
  }
  for (auto& a : found) Emit(std::move(a));
}

void LogAnalyzer::Finish() {
  if (finished_) return;
  FlushRecord();
  finished_ = true;
  std::vector<Anomaly> found;
  for (auto& [rank, state] : ranks_) {
    state.Flush(found, callbacks_.on_step);
    state.End();
  }
  for (auto& a : found) Emit(std::move(a));
  // A stall among the first steps is found a few lines after it (RankState::JudgeEarly).
  std::stable_sort(summary_.anomalies.begin(), summary_.anomalies.end(),
                   [](const Anomaly& a, const Anomaly& b) { return a.line < b.line; });
  summary_.ranks.clear();
  for (auto& [rank, state] : ranks_) {
    if (state.summary().records > 0) summary_.ranks.push_back(state.summary());
  }
  const LogTail& tail = summary_.tail;
  if (!tail.finished && tail.error_line > 0 && tail.last_step_line > 0) {
    Anomaly a;
    a.kind = AnomalyKind::kHang;
    a.line = tail.error_line;
    int64_t last_step = 0;
    for (auto& [rank, state] : ranks_) {
      if (state.last_step_line() == tail.last_step_line) {
        last_step = state.last_step();
        a.rank = rank;
      }
    }
    a.step = last_step;
    a.message = fmt::format(
        "no step after step {} (line {}); then line {}: \"{}\"; the log ends at line {}: \"{}\"",
        last_step, tail.last_step_line, tail.error_line, tail.error_text, tail.last_line,
        tail.last_text);
    Emit(std::move(a));
  }
}

void LogAnalyzer::CheckIdle(double idle_s, double min_idle_s) {
  // A silence also ends a record that was waiting for wrapped pieces.
  if (idle_s >= std::min(1.0, min_idle_s)) FlushRecord();
  if (idle_flagged_ || summary_.tail.finished || summary_.tail.last_step_line == 0) return;
  // A silence ends the steps still waiting for lines of their own: check them now.
  if (idle_s >= std::min(1.0, min_idle_s)) {
    std::vector<Anomaly> found;
    for (auto& [r, state] : ranks_) state.Flush(found, callbacks_.on_step);
    for (auto& a : found) Emit(std::move(a));
  }
  double median = NAN;
  int rank = -1;
  int64_t step = 0;
  for (auto& [r, state] : ranks_) {
    if (state.last_step_line() == summary_.tail.last_step_line) {
      median = state.MedianStepWallTime();
      rank = r;
      step = state.last_step();
    }
  }
  const double limit =
      std::max(min_idle_s, std::isfinite(median) ? thresholds_.stall_factor * median : 0.0);
  if (idle_s < limit) return;
  idle_flagged_ = true;
  Anomaly a;
  a.kind = AnomalyKind::kHang;
  a.rank = rank;
  a.line = summary_.tail.last_line;
  a.step = step;
  a.message = fmt::format(
      "no new line for {:.0f} s (limit {:.0f} s{}); the last step is {} at line {}; the last "
      "line is {}: \"{}\"",
      idle_s, limit,
      std::isfinite(median)
          ? fmt::format(" = {} x the median step {:.3g} s", thresholds_.stall_factor, median)
          : "",
      step, summary_.tail.last_step_line, summary_.tail.last_line, summary_.tail.last_text);
  Emit(std::move(a));
}

}  // namespace strata

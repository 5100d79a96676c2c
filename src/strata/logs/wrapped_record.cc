#include "strata/logs/wrapped_record.h"

#include <utility>

#include "strata/logs/openrlhf_status_line.h"
#include "strata/logs/verl_metrics_line.h"

namespace strata {
namespace {

// A status dict wrapped over more lines or bytes than these is taken as cut off (OpenRLHF logs
// about 30 keys, a few KiB); the bounds keep a log of unclosed braces from being held without end.
constexpr size_t kMaxDictPieces = 63;
constexpr size_t kMaxDictBytes = size_t{64} * 1024;

// The '{' of the last status dict in `text` when that dict does not close on it; npos otherwise.
size_t UnclosedDict(std::string_view text) {
  int64_t step = 0;
  size_t brace = FindOpenRlhfDict(text, step);
  while (brace != std::string_view::npos) {
    const size_t close = OpenRlhfDictClose(text, brace);
    if (close == std::string_view::npos) return brace;
    brace = FindOpenRlhfDict(text, step, close + 1);
  }
  return std::string_view::npos;
}

}  // namespace

bool WrappedRecordJoiner::Start(std::string_view body, int rank, int64_t line) {
  if (StartsVerlMetricsLine(body)) {
    record_.kind = WrappedKind::kVerlMetrics;
  } else if (const size_t brace = UnclosedDict(body); brace != std::string_view::npos) {
    record_.kind = WrappedKind::kOpenRlhfStatus;
    brace_ = brace;
  } else {
    return false;
  }
  open_ = true;
  record_.text.assign(body);
  record_.rank = rank;
  record_.line = line;
  pieces_ = 0;
  return true;
}

bool WrappedRecordJoiner::Feed(std::string_view raw, std::string_view body, int rank, int64_t line,
                               std::vector<WrappedRecord>& done) {
  if (open_ && record_.kind == WrappedKind::kVerlMetrics && !StartsVerlMetricsLine(body) &&
      ContinuesVerlMetricsLine(raw)) {
    record_.text += raw;  // wrapped mid-field: the pieces join without a separator
    return true;
  }
  if (open_ && record_.kind == WrappedKind::kOpenRlhfStatus && pieces_ < kMaxDictPieces &&
      record_.text.size() - brace_ < kMaxDictBytes) {
    int64_t step = 0;
    if (FindOpenRlhfDict(raw, step) == std::string_view::npos) {
      record_.text += '\n';
      record_.text += raw;
      ++pieces_;
      if (OpenRlhfDictClose(record_.text, brace_) != std::string_view::npos) Finish(done);
      return true;
    }
  }
  Finish(done);
  return Start(body, rank, line);
}

void WrappedRecordJoiner::Finish(std::vector<WrappedRecord>& done) {
  if (!open_) return;
  open_ = false;
  done.push_back(std::move(record_));
  record_ = WrappedRecord{};
}

}  // namespace strata

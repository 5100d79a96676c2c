// Console records that a terminal or a paste breaks over several lines, joined back into one:
// verl's metrics line (verl_metrics_line.h), wrapped mid-field, and OpenRLHF's status dict
// (openrlhf_status_line.h), wrapped between its values. `strata logs` and `strata rl --log` feed
// their lines through one joiner, so both read a wrapped record the same way.
#ifndef STRATA_LOGS_WRAPPED_RECORD_H_
#define STRATA_LOGS_WRAPPED_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

enum class WrappedKind { kVerlMetrics, kOpenRlhfStatus };

struct WrappedRecord {
  WrappedKind kind = WrappedKind::kVerlMetrics;
  /// The first line without its launcher prefix, then each piece: a verl piece joined without a
  /// separator (it was cut mid-field), an OpenRLHF piece after a '\n' (as the rows were printed).
  std::string text;
  int rank = -1;     // the launcher prefix's rank on the first line, -1 when none
  int64_t line = 0;  // the first line's number
};

class WrappedRecordJoiner {
 public:
  /// Feeds one line: `raw` as read, `body` the same with its launcher prefix stripped. True when
  /// the line went into a record (the caller reads nothing else of it). A record that this line
  /// shows to be over is appended to `done` first, so records come out in the log's order.
  bool Feed(std::string_view raw, std::string_view body, int rank, int64_t line,
            std::vector<WrappedRecord>& done);
  /// Ends the record being held, if any (the end of the log, or a silence in --follow).
  void Finish(std::vector<WrappedRecord>& done);

 private:
  bool Start(std::string_view body, int rank, int64_t line);

  bool open_ = false;
  WrappedRecord record_;
  size_t brace_ = 0;   // the unclosed OpenRLHF dict's '{' in record_.text
  size_t pieces_ = 0;  // lines joined after the first
};

}  // namespace strata

#endif  // STRATA_LOGS_WRAPPED_RECORD_H_

// Reading a log file into the analyser: in fixed-size chunks, so memory does not depend on the
// file's size, and optionally following it as it grows (tail -f).
#ifndef STRATA_LOGS_LOG_READER_H_
#define STRATA_LOGS_LOG_READER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "strata/core/result.h"
#include "strata/logs/log_analyzer.h"

namespace strata {

/// Lines longer than this are cut to it (a binary file, a runaway progress bar).
inline constexpr size_t kMaxLogLineBytes = size_t{1} << 20;

struct ReadStats {
  int64_t bytes = 0;
  int64_t long_lines = 0;      // lines cut at kMaxLogLineBytes
  bool ends_mid_line = false;  // the last line had no newline (a truncated log or a live one)
};

/// Feeds every line of `path` to `analyzer` (it does not call Finish). Errors name the path.
Result<ReadStats> ReadLogFile(const std::string& path, LogAnalyzer& analyzer);

struct FollowOptions {
  double poll_s = 0.5;           // how often to look for new bytes
  double exit_after_idle_s = 0;  // stop after this long without a new line; 0: never
  double hang_min_idle_s = 60;   // never call a silence shorter than this a hang
  std::function<bool()> stop;    // polled between reads; true stops the follow
};

/// Reads `path` to its end, then keeps reading what is appended, like tail -f. A partial last
/// line waits for its newline. Calls analyzer.CheckIdle while the log is silent.
Result<ReadStats> FollowLogFile(const std::string& path, LogAnalyzer& analyzer,
                                const FollowOptions& options);

}  // namespace strata

#endif  // STRATA_LOGS_LOG_READER_H_
